import { OptionsError } from '../errors.ts';
import type { EventHandler } from '../handler/index.ts';
import { and } from './combinators.ts';
import type { Predicate } from './predicate.ts';

/**
 * A handler that passes an event to `handler` only when every predicate lets it through
 * (evaluated in order, stopping at the first that fails). With no predicate it is `handler` itself.
 * A predicate that throws propagates to the caller, like a throwing handler.
 *
 * @example
 * const handler = withPredicates(enqueueForObject<Widget>(), generationChanged(), labelSelector({ matchLabels: { app: 'web' } }));
 */
export function withPredicates<T, R>(
  handler: EventHandler<T, R>,
  ...predicates: Predicate<T>[]
): EventHandler<T, R> {
  if (typeof handler !== 'object' || handler === null || typeof handler.handle !== 'function') {
    throw new OptionsError('handler', handler, 'an event handler with a handle() method');
  }
  if (predicates.length === 0) return handler;
  const passes = and(...predicates);
  return {
    handle(event, queue): void {
      if (passes(event)) handler.handle(event, queue);
    },
  };
}
