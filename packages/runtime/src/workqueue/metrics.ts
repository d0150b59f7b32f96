import type { CauseSet } from './cause.ts';

/**
 * Hooks a metrics adapter implements to observe a queue (the signals of client-go's workqueue
 * metrics). Every hook is optional and called synchronously; a hook that throws is ignored.
 * Unfinished work and the longest running processor are read on demand with
 * `queue.unfinishedWorkMs()` and `queue.longestRunningMs()`.
 */
export interface WorkQueueMetrics {
  /**
   * A key was accepted by `add` (including re-adds that were deduplicated, and delayed adds
   * coming due), at `priority`.
   */
  onAdd?(queue: string, priority: number): void;
  /** The number of queued (ready, not processing) keys changed. */
  onDepth?(queue: string, depth: number): void;
  /** A key was handed to a worker after waiting `latencyMs` since it became ready. */
  onQueueLatency?(queue: string, latencyMs: number): void;
  /** A key was marked done after `durationMs` of processing. */
  onWorkDuration?(queue: string, durationMs: number): void;
  /** A key was requeued through the rate limiter. */
  onRetry?(queue: string): void;
  /** An add arrived after shutdown and was ignored. */
  onDroppedAfterShutdown?(queue: string): void;
  /**
   * A key was handed to a worker `latencyMs` after the first object event (a cause of type
   * `added`, `modified`, `deleted` or `generic`) it absorbed since its previous hand-out: the
   * event-to-reconcile latency, which unlike `onQueueLatency` includes the time the key spent
   * processing (a coalesced add) or waiting. Keys handed out without such a cause are not reported.
   * The queue reads its clock once per event add only while this hook is set.
   */
  onEventLatency?(queue: string, latencyMs: number): void;
}

/**
 * One key of a queue as `inspect` sees it. A key may be in several states at once: processing
 * and queued again after (`dirty`), processing and waiting on a delayed add (a requeue).
 */
export interface WorkQueueKeyInfo<K> {
  readonly key: K;
  /** The key's identity (`keyOf`). */
  readonly id: string;
  readonly partition: string;
  /** Ready to be handed out. */
  readonly queued: boolean;
  /** Handed to a worker and not yet done. */
  readonly processing: boolean;
  /** Added while processing: runs once more after `done`. */
  readonly dirty: boolean;
  /** When it was handed out (clock milliseconds), while processing. */
  readonly processingSince?: number;
  /** When its delayed add comes due (clock milliseconds), while waiting on one. */
  readonly waitingUntil?: number;
  /** Its priority: of the queued add, else of the delayed one. */
  readonly priority: number;
  /** Rate-limited requeues since it was last forgotten (its failed attempts, for a controller). */
  readonly requeues: number;
  /** The causes of its next run (queued, dirty, or the delayed add's). */
  readonly causes: CauseSet;
  /** The causes of the run in progress, while processing. */
  readonly runCauses?: CauseSet;
}

/**
 * Hooks that call those of `first`, then those of `then` (either may lack any). For adapters that
 * add their hooks to ones given in options.
 */
export function joinHooks<H extends object>(first: H | undefined, then: H): H {
  if (first === undefined) return then;
  const joined: Record<string, (...args: unknown[]) => void> = {};
  const names = new Set([...Object.keys(first), ...Object.keys(then)]);
  for (const name of names) {
    const a = (first as Record<string, unknown>)[name];
    const b = (then as Record<string, unknown>)[name];
    if (typeof a !== 'function') joined[name] = b as (...args: unknown[]) => void;
    else if (typeof b !== 'function') joined[name] = a as (...args: unknown[]) => void;
    else {
      joined[name] = (...args: unknown[]): void => {
        try {
          (a as (...args: unknown[]) => void).apply(first, args);
        } finally {
          (b as (...args: unknown[]) => void).apply(then, args);
        }
      };
    }
  }
  return joined as H;
}

/** Counters every queue keeps, whether or not metrics hooks are set. */
export interface WorkQueueStats {
  readonly adds: number;
  readonly retries: number;
  readonly droppedAfterShutdown: number;
  readonly depth: number;
  readonly processing: number;
  readonly waiting: number;
  /** Pending `get` calls, plus aborted ones not yet pruned (bounded). */
  readonly getters: number;
  /** Partitions with a concurrency limit (the queue keeps per-partition state for these only). */
  readonly limitedPartitions: number;
  /** Limited partitions at their limit now: their ready keys are not handed out. */
  readonly saturatedPartitions: number;
}
