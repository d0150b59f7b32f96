import type { KubeObject } from '../object/index.ts';
import type { Predicate } from './predicate.ts';
import { stringMapEqual } from './string-map-equal.ts';

/**
 * Lets an update through only when `metadata.labels` changed (a label added, removed or given
 * another value; controller-runtime's `LabelChangedPredicate`). Creates, deletes and generic events
 * always pass. Missing labels and an empty map are the same labels.
 *
 * @example
 * const trigger = or(generationChanged(), labelsChanged());
 */
export function labelsChanged<T extends Pick<KubeObject, 'metadata'>>(): Predicate<T> {
  return (event) =>
    event.type !== 'update' || !stringMapEqual(event.oldObject.metadata.labels, event.object.metadata.labels);
}
