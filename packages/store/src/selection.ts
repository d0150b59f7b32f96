import { type KubeObject, objectSelector, type SelectorOptions } from '@converge/runtime';

/** A compiled label + field selector, or undefined when the options select everything. */
export type Matcher = ((object: KubeObject) => boolean) | undefined;

/**
 * Compiles the label and field selectors of `options` (the namespace is served from the key
 * range, not filtered). Parse errors and unsupported fields are BadRequestErrors.
 */
export function compileSelector(options: SelectorOptions): Matcher {
  const labelSelector = options.labelSelector ?? '';
  const fieldSelector = options.fieldSelector ?? '';
  if (labelSelector === '' && fieldSelector === '') return undefined;
  return objectSelector({ labelSelector, fieldSelector });
}
