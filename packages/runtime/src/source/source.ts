import type { RequestQueue } from '../handler/index.ts';

/**
 * Feeds requests into a controller's queue (controller-runtime's `Source` + `SyncingSource`).
 * `start` runs until `signal` aborts (a rejection is a failure of the source); `waitForSync`
 * resolves once the source's initial state has been queued. A source without `waitForSync` is
 * synced as soon as it has started.
 */
export interface Source<R> {
  /** A name for logs. */
  readonly name?: string;
  start(signal: AbortSignal, queue: RequestQueue<R>): Promise<void>;
  waitForSync?(signal: AbortSignal): Promise<void>;
}
