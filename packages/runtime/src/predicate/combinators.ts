import { OptionsError } from '../errors.ts';
import type { Predicate } from './predicate.ts';

function checkPredicates<T>(field: string, predicates: readonly Predicate<T>[]): readonly Predicate<T>[] {
  predicates.forEach((p, i) => {
    if (typeof p !== 'function') throw new OptionsError(`${field}[${i}]`, p, 'a predicate function');
  });
  return [...predicates];
}

/**
 * Passes when every predicate passes, evaluated in order and stopping at the first that fails.
 * `and()` with no predicate passes everything.
 *
 * @example
 * const relevant = and(labelSelector({ matchLabels: { app: 'web' } }), generationChanged());
 */
export function and<T>(...predicates: Predicate<T>[]): Predicate<T> {
  const list = checkPredicates('and', predicates);
  return (event) => list.every((p) => p(event));
}

/**
 * Passes when at least one predicate passes, evaluated in order and stopping at the first that
 * passes. `or()` with no predicate passes nothing.
 *
 * @example
 * const changed = or(generationChanged(), labelsChanged(), annotationsChanged());
 */
export function or<T>(...predicates: Predicate<T>[]): Predicate<T> {
  const list = checkPredicates('or', predicates);
  return (event) => list.some((p) => p(event));
}

/**
 * Passes exactly the events `predicate` filters.
 *
 * @example
 * const notCanary = not(labelSelector({ matchLabels: { track: 'canary' } }));
 */
export function not<T>(predicate: Predicate<T>): Predicate<T> {
  const [p] = checkPredicates('not', [predicate]) as [Predicate<T>];
  return (event) => !p(event);
}
