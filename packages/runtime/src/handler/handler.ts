import type { ObjectEvent } from '../event/index.ts';
import type { AddAfterOptions, AddOptions, Cause } from '../workqueue/index.ts';

/** The add side of a work queue: what handlers and sources may do to it. */
export interface RequestQueue<R> {
  add(request: R, options?: AddOptions): void;
  addAfter(request: R, delayMs: number, options?: AddAfterOptions): void;
}

/**
 * Turns object events into requests (controller-runtime's `EventHandler`). A handler must not
 * throw; the controller catches and logs it if it does.
 */
export interface EventHandler<T, R> {
  handle(event: ObjectEvent<T>, queue: RequestQueue<R>): void;
}

/**
 * What a queue that knows the event being handled (`fromEventSource`'s) offers its handlers: the
 * event's cause as that queue would fill it in (its source's name, its writer), made once per
 * event. A handler's adds then carry it as is, instead of a cause made by the handler and copied
 * again by the queue to add the source. @internal
 */
export const EVENT_CAUSE: unique symbol = Symbol('converge.eventCause');

/** A {@link RequestQueue} with {@link EVENT_CAUSE}. @internal */
export interface EventCauseProvider {
  [EVENT_CAUSE](secondary: boolean): Cause;
}
