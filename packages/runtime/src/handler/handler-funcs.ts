import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { eventCause } from './event-cause.ts';
import type { EventHandler, RequestQueue } from './handler.ts';
import { eventPriority, withDefaultPriority } from './priority.ts';

type EventOf<T, K extends ObjectEvent<T>['type']> = Extract<ObjectEvent<T>, { readonly type: K }>;

/** One optional callback per event type; missing ones ignore their events. */
export interface HandlerFuncs<T, R> {
  readonly create?: (event: EventOf<T, 'create'>, queue: RequestQueue<R>) => void;
  readonly update?: (event: EventOf<T, 'update'>, queue: RequestQueue<R>) => void;
  readonly delete?: (event: EventOf<T, 'delete'>, queue: RequestQueue<R>) => void;
  readonly generic?: (event: EventOf<T, 'generic'>, queue: RequestQueue<R>) => void;
}

/**
 * A handler from per-event-type callbacks (controller-runtime's `handler.Funcs`). Event types
 * without a callback are ignored. For initial-list creates and resync updates the callback gets a
 * queue whose adds default to {@link Priority.low}; a priority the callback passes wins. Adds
 * without a cause get the event's ({@link eventCause}); pass one to say more (for example
 * `eventCause(event, { secondary: true })` when the callback enqueues another object).
 *
 * @example
 * const handler = handlerFuncs<ConfigMap, string>({
 *   delete: (event, queue) => queue.add(event.object.metadata.name ?? ''),
 * });
 */
export function handlerFuncs<T, R>(funcs: HandlerFuncs<T, R>): EventHandler<T, R> {
  if (typeof funcs !== 'object' || funcs === null) {
    throw new OptionsError('funcs', funcs, 'an object of create/update/delete/generic callbacks');
  }
  for (const field of ['create', 'update', 'delete', 'generic'] as const) {
    const value = funcs[field];
    if (value !== undefined && typeof value !== 'function')
      throw new OptionsError(field, value, 'a function');
  }
  const { create, update, delete: remove, generic } = funcs;
  return {
    handle(event, queue): void {
      const q = withDefaultPriority(queue, eventPriority(event), eventCause(event));
      switch (event.type) {
        case 'create':
          create?.(event, q);
          return;
        case 'update':
          update?.(event, q);
          return;
        case 'delete':
          remove?.(event, q);
          return;
        case 'generic':
          generic?.(event, q);
          return;
      }
    },
  };
}
