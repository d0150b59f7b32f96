import { type KubeObject, type ObjectSelectorOptions, objectSelector } from '@converge/runtime';

/** A compiled label + field selector, or undefined when the options select everything. */
export type Matcher = ((object: KubeObject) => boolean) | undefined;

/**
 * Compiles the label, field and shard selectors of `options` (the namespace is served from the key
 * range, not filtered). Parse errors and unsupported fields are BadRequestErrors. A shard selector
 * hashes the uid or namespace, which never change, so an object never moves between shards: a
 * sharded watch sees an object's whole life or none of it.
 */
export function compileSelector(options: ObjectSelectorOptions): Matcher {
  const labelSelector = options.labelSelector ?? '';
  const fieldSelector = options.fieldSelector ?? '';
  const shardSelector = options.shardSelector ?? '';
  if (labelSelector === '' && fieldSelector === '' && shardSelector === '') return undefined;
  return objectSelector({ labelSelector, fieldSelector, shardSelector });
}
