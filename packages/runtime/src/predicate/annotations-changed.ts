import type { KubeObject } from '../object/index.ts';
import type { Predicate } from './predicate.ts';
import { stringMapEqual } from './string-map-equal.ts';

/**
 * Lets an update through only when `metadata.annotations` changed (controller-runtime's
 * `AnnotationChangedPredicate`). Creates, deletes and generic events always pass. Missing
 * annotations and an empty map are the same annotations.
 *
 * @example
 * const trigger = or(generationChanged(), annotationsChanged());
 */
export function annotationsChanged<T extends Pick<KubeObject, 'metadata'>>(): Predicate<T> {
  return (event) =>
    event.type !== 'update' ||
    !stringMapEqual(event.oldObject.metadata.annotations, event.object.metadata.annotations);
}
