import { OptionsError } from '../errors.ts';
import { requestKey } from '../object/index.ts';
import { func } from '../options.ts';
import type { EventHandler } from './handler.ts';
import { addOptionsFor, type EnqueueHandlerOptions, priorityOption } from './priority.ts';

/** Turns an object into the requests it should trigger. */
export type MapFunction<T, R> = (object: T) => readonly R[];

export interface EnqueueFromMapFunctionOptions<R> extends EnqueueHandlerOptions {
  /** Identity of a request, to dedupe the requests of one event. Default {@link requestKey}. */
  readonly keyOf?: (request: R) => string;
  /**
   * Mark the causes `secondary`: the function maps objects to other objects (owners, parents).
   * Default true; pass false when it maps an object to its own key (a poller's items to their ids).
   */
  readonly secondary?: boolean;
}

/**
 * Enqueues the requests a map function returns for the event's object (controller-runtime's
 * `EnqueueRequestsFromMapFunc`). For updates the function runs on the old and the new object and
 * the union is enqueued once per request, so a request the object moved away from is reconciled
 * too. Deletes, including tombstones, map the last known state.
 *
 * Initial-list creates and resync updates are added at low priority unless `priority` is given.
 * The causes are the event's ({@link eventCause}), marked `secondary` unless `secondary: false`.
 *
 * @example
 * // Reconcile every Gateway a Route points at.
 * const handler = enqueueFromMapFunction((route: Route) =>
 *   route.spec.parentRefs.map((ref) => ({ namespace: route.metadata.namespace ?? '', name: ref.name })),
 * );
 */
export function enqueueFromMapFunction<T, R>(
  map: MapFunction<T, R>,
  options: EnqueueFromMapFunctionOptions<R> = {},
): EventHandler<T, R> {
  if (typeof map !== 'function') throw new OptionsError('map', map, 'a function');
  const fixed = priorityOption(options.priority);
  const keyOf = func<(request: R) => string>('keyOf', options.keyOf, requestKey);
  const secondary = options.secondary ?? true;
  if (typeof secondary !== 'boolean') throw new OptionsError('secondary', secondary, 'a boolean');
  return {
    handle(event, queue): void {
      const addOptions = addOptionsFor(event, fixed, secondary, queue);
      const requests =
        event.type === 'update' ? [...map(event.oldObject), ...map(event.object)] : map(event.object);
      const seen = new Set<string>();
      for (const request of requests) {
        const id = keyOf(request);
        if (seen.has(id)) continue;
        seen.add(id);
        queue.add(request, addOptions);
      }
    },
  };
}
