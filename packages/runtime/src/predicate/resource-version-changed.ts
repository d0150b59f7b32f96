import type { KubeObject } from '../object/index.ts';
import type { Predicate } from './predicate.ts';

/**
 * Lets an update through only when `metadata.resourceVersion` changed, which filters resyncs (the
 * same object delivered again) while keeping every real write (controller-runtime's
 * `ResourceVersionChangedPredicate`). Creates, deletes and generic events always pass. Two objects
 * without a resourceVersion count as unchanged.
 *
 * @example
 * const source = fromEventSource(informer, enqueueForObject(), resourceVersionChanged());
 */
export function resourceVersionChanged<T extends Pick<KubeObject, 'metadata'>>(): Predicate<T> {
  return (event) =>
    event.type !== 'update' ||
    event.oldObject.metadata.resourceVersion !== event.object.metadata.resourceVersion;
}
