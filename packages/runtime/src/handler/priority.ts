import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { type AddAfterOptions, type AddOptions, type Cause, Priority } from '../workqueue/index.ts';
import { eventCause } from './event-cause.ts';
import { EVENT_CAUSE, type EventCauseProvider, type RequestQueue } from './handler.ts';

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

/**
 * The add options for one event: the handler's fixed priority, else the event's default, and the
 * event's cause (`secondary` for handlers that enqueue other objects than the event's) — the one
 * `queue` offers when it knows the event (`fromEventSource`'s), else one made here.
 */
export function addOptionsFor(
  event: ObjectEvent<unknown>,
  fixed: number | undefined,
  secondary = false,
  queue?: RequestQueue<unknown>,
): AddOptions {
  const priority = fixed ?? eventPriority(event);
  const provided = (queue as Partial<EventCauseProvider> | undefined)?.[EVENT_CAUSE];
  const cause =
    provided === undefined
      ? eventCause(event, secondary ? SECONDARY : PRIMARY)
      : (provided.call(queue, secondary) as Cause);
  return priority === undefined ? { cause } : { priority, cause };
}

const PRIMARY = Object.freeze({});
const SECONDARY = Object.freeze({ secondary: true });

/**
 * A view of `queue` whose adds without a priority of their own get `priority` (controller-runtime's
 * `workqueueWithDefaultPriority`), and without a cause of their own get `cause`. Returns `queue`
 * itself when both are undefined.
 */
export function withDefaultPriority<R>(
  queue: RequestQueue<R>,
  priority: number | undefined,
  cause?: Cause,
): RequestQueue<R> {
  if (priority === undefined && cause === undefined) return queue;
  const fill = <O extends AddOptions>(options: O | undefined): O | undefined => {
    const needsPriority = priority !== undefined && options?.priority === undefined;
    const needsCause = cause !== undefined && options?.cause === undefined;
    if (!needsPriority && !needsCause) return options;
    return {
      ...options,
      ...(needsPriority ? { priority } : {}),
      ...(needsCause ? { cause } : {}),
    } as O;
  };
  return {
    add(request: R, options?: AddOptions): void {
      queue.add(request, fill(options));
    },
    addAfter(request: R, delayMs: number, options?: AddAfterOptions): void {
      queue.addAfter(request, delayMs, fill(options));
    },
  };
}
