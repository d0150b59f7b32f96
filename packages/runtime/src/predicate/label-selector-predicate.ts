import type { KubeObject } from '../object/index.ts';
import { compileLabelSelector, type LabelSelector } from './label-selector.ts';
import type { Predicate } from './predicate.ts';

/**
 * Lets an event through when its object's labels match `selector` (Kubernetes label selector
 * semantics, validated at construction, see {@link compileLabelSelector}). An update passes when the
 * old **or** the new object matches, so an object that leaves the selection still reaches the
 * controller once — the same thing a server-side selector does by sending a DELETED event.
 * (controller-runtime's `LabelSelectorPredicate` looks at the new object only.)
 *
 * @example
 * const managed = labelSelector({ matchLabels: { 'app.kubernetes.io/managed-by': 'converge' } });
 */
export function labelSelector<T extends Pick<KubeObject, 'metadata'>>(selector: LabelSelector): Predicate<T> {
  const matches = compileLabelSelector(selector);
  return (event) =>
    matches(event.object.metadata.labels) ||
    (event.type === 'update' && matches(event.oldObject.metadata.labels));
}
