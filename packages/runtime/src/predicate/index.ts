/**
 * Predicates: functions that decide whether an object event reaches a handler (controller-runtime's
 * `predicate` package). A predicate is `(event) => boolean`; compose them with {@link and},
 * {@link or} and {@link not}, and attach them to a handler with {@link withPredicates} or to a source
 * with `fromEventSource(eventSource, handler, ...predicates)`.
 *
 * - Change filters for updates: {@link generationChanged} (lets kinds without a generation
 *   through), {@link resourceVersionChanged}, {@link labelsChanged}, {@link annotationsChanged}.
 * - Selection: {@link labelSelector}, with Kubernetes label selector semantics and validation
 *   ({@link compileLabelSelector} for the bare matcher).
 * - Ad hoc: {@link predicateFuncs}, one test per event type.
 *
 * @example
 * const handler = withPredicates(
 *   enqueueForObject<Widget>(),
 *   or(generationChanged(), labelsChanged()),
 *   labelSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['prod'] }] }),
 * );
 *
 * @module
 */
export { annotationsChanged } from './annotations-changed.ts';
export { and, not, or } from './combinators.ts';
export { generationChanged } from './generation-changed.ts';
export {
  compileLabelSelector,
  type LabelMatcher,
  type LabelSelector,
  type LabelSelectorOperator,
  type LabelSelectorRequirement,
} from './label-selector.ts';
export { labelSelector } from './label-selector-predicate.ts';
export { labelsChanged } from './labels-changed.ts';
export type { Predicate } from './predicate.ts';
export { type PredicateFuncs, predicateFuncs } from './predicate-funcs.ts';
export { resourceVersionChanged } from './resource-version-changed.ts';
export { withPredicates } from './with-predicates.ts';
