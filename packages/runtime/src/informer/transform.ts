import type { KubeObject } from '../object/index.ts';

/**
 * The informer's default transform: drops `metadata.managedFields` (server-side apply bookkeeping,
 * often 25–40 % of an object and read by no controller). Objects without it are returned as they
 * are; others are copied shallowly (the top level and `metadata`), never deeply.
 *
 * @example
 * new Informer({ backend, type, transform: (pod) => stripManagedFields(dropStatus(pod)) });
 */
export function stripManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}
