import type { KubeObject } from '../object/index.ts';
import { InvalidObjectError } from './errors.ts';

/** The key parts of a checked object. */
export interface CheckedKey {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Throws an {@link InvalidObjectError} unless `object` has a non-empty `metadata.name` and a string
 * namespace if any; returns its namespace ('' if none) and name, read once.
 */
export function checkObject(cache: string, object: KubeObject): CheckedKey {
  if (typeof object !== 'object' || object === null) throw new InvalidObjectError(cache, 'not an object');
  const metadata: unknown = object.metadata;
  if (typeof metadata !== 'object' || metadata === null) throw new InvalidObjectError(cache, 'no metadata');
  const { name, namespace } = metadata as { name?: unknown; namespace?: unknown };
  if (typeof name !== 'string' || name === '') throw new InvalidObjectError(cache, 'no metadata.name');
  if (namespace !== undefined && typeof namespace !== 'string') {
    throw new InvalidObjectError(cache, 'metadata.namespace is not a string');
  }
  return { namespace: namespace ?? '', name };
}
