/**
 * Hooks a metrics adapter implements to observe a queue (the signals of client-go's workqueue
 * metrics). Every hook is optional and called synchronously; a hook that throws is ignored.
 * Unfinished work and the longest running processor are read on demand with
 * `queue.unfinishedWorkMs()` and `queue.longestRunningMs()`.
 */
export interface WorkQueueMetrics {
  /** A key was accepted by `add` (including re-adds that were deduplicated). */
  onAdd?(queue: string): void;
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
