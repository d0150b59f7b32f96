import type { ObjectEvent } from '../event/index.ts';
import type { AddAfterOptions, AddOptions } from '../workqueue/index.ts';

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
