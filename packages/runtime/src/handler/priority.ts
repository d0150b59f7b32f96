import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { type AddAfterOptions, type AddOptions, Priority } from '../workqueue/index.ts';
import type { RequestQueue } from './handler.ts';

/** Options every enqueueing handler takes. */
export interface EnqueueHandlerOptions {
  /**
   * Priority of every request this handler adds. Default: {@link Priority.low} for creates from
   * an initial list and for resync updates (controller-runtime's priority-queue behaviour), the
   * queue's default for everything else.
   */
  readonly priority?: number;
}

/**
 * The priority an event's requests get when the handler has none of its own:
 * {@link Priority.low} for `create` events with `isInInitialList` and `update` events with
 * `isResync`, so a startup backlog or a periodic resync never delays fresh changes; `undefined`
 * (the queue's default) otherwise. Sources mark resyncs; the handler does not guess them.
 *
 * @example
 * eventPriority({ type: 'create', object, isInInitialList: true }); // Priority.low
 * eventPriority({ type: 'delete', object }); // undefined
 */
export function eventPriority(event: ObjectEvent<unknown>): number | undefined {
  if (event.type === 'create' && event.isInInitialList === true) return Priority.low;
  if (event.type === 'update' && event.isResync === true) return Priority.low;
  return undefined;
}

/** Validates a handler's `priority` option. */
export function priorityOption(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new OptionsError('priority', value, 'a finite number');
  }
  return value;
}

/** The add options for one event: the handler's fixed priority, else the event's default. */
export function addOptionsFor(
  event: ObjectEvent<unknown>,
  fixed: number | undefined,
): AddOptions | undefined {
  const priority = fixed ?? eventPriority(event);
  return priority === undefined ? undefined : { priority };
}

/**
 * A view of `queue` whose adds without a priority of their own get `priority` (controller-runtime's
 * `workqueueWithDefaultPriority`). Returns `queue` itself when `priority` is undefined.
 */
export function withDefaultPriority<R>(
  queue: RequestQueue<R>,
  priority: number | undefined,
): RequestQueue<R> {
  if (priority === undefined) return queue;
  return {
    add(request: R, options?: AddOptions): void {
      queue.add(request, options?.priority === undefined ? { ...options, priority } : options);
    },
    addAfter(request: R, delayMs: number, options?: AddAfterOptions): void {
      queue.addAfter(request, delayMs, options?.priority === undefined ? { ...options, priority } : options);
    },
  };
}
