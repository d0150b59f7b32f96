import type { WriteLedger } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import type { ReconcileFunction, Reconciler } from '../reconcile/index.ts';
import type { ShardGate } from '../sharding/index.ts';
import type { Source } from '../source/index.ts';
import type { CauseSet, RateLimiter, RetryPolicy, WorkQueueMetrics } from '../workqueue/index.ts';
import type { HotLoopOptions } from './hot-loop.ts';
import type { ReconcileInterceptor } from './intercept.ts';

/** Result labels of the reconcile metric, named like controller-runtime's plus `terminal`. */
export type ReconcileResultLabel = 'success' | 'error' | 'terminal' | 'requeue' | 'requeue_after' | 'dropped';

/** Hooks a metrics adapter implements to observe a controller. Hooks that throw are ignored. */
export interface ControllerMetrics {
  /**
   * A reconcile finished with `result` after `durationMs`. `kind` is the request's kind when the
   * controller has a `kindOf` (a dynamic controller's `group/version/resource`). `causes` are the
   * run's causes (why it ran; count them by `type` for a `reconcile_causes_total`).
   */
  onReconcile?(
    controller: string,
    result: ReconcileResultLabel,
    durationMs: number,
    kind?: string,
    causes?: CauseSet,
  ): void;
  /** The number of reconciles in progress changed. */
  onActiveWorkers?(controller: string, active: number): void;
  /**
   * A reconcile failed with `error` (also called before `onReconcile` for the same run).
   * `result` is `error` (retried), `dropped` (its retries exhausted) or `terminal`; `timedOut`
   * says its `reconcileTimeoutMs` fired during the run (the error is then usually the timeout's).
   */
  onReconcileError?(controller: string, error: Error, detail: ReconcileErrorDetail): void;
  /**
   * A self-caused reconcile is starting: every cause of it echoes a write of its key's own chain
   * (see {@link HotLoopOptions}; only with hot-loop detection on). Flagged keys are counted by
   * `Controller.hotLoopKeys()`.
   */
  onSelfCausedReconcile?(controller: string): void;
}

/** What {@link ControllerMetrics.onReconcileError} is told besides the error. */
export interface ReconcileErrorDetail {
  readonly result: 'error' | 'dropped' | 'terminal';
  readonly timedOut: boolean;
  /** As for `onReconcile`. */
  readonly kind?: string;
}

/**
 * Elastic sharding of a controller's requests across replicas (see docs/guide/sharding.md): the
 * controller reconciles only requests its shard member may run. Others are dropped from the queue
 * when they come out of it; when the member gives keys away, their queued requests are dropped and
 * running reconciles get their signal aborted with a `ShardKeyMovedError` (the member acknowledges
 * the hand-over once they finished); when it gains keys, `requests()` that it may now run are
 * enqueued afresh (backoff history is not carried over).
 */
export interface ControllerSharding<R> {
  /** The replica's {@link ShardMember} (started by the manager or by hand). */
  readonly member: ShardGate;
  /** The shard key of a request. Default: the controller's `keyOf`. */
  readonly keyOf?: (request: R) => string;
  /**
   * The requests to enqueue when the member gains keys (every cached primary object). The builder
   * fills it with its primary kind's cache. Default: none (a gained key runs on its next event).
   */
  readonly requests?: () => Iterable<R>;
}

export interface ControllerOptions<R> {
  /** Name for logs and metrics. Required. */
  readonly name: string;
  /** The reconciler, as an object or a function. Required. */
  readonly reconciler: Reconciler<R> | ReconcileFunction<R>;
  /** Sources to start with the controller. More can be added with `watch`. */
  readonly sources?: readonly Source<R>[];
  /** Reconciles running at once, over all requests. Default 1. */
  readonly maxConcurrentReconciles?: number;
  /** Identity of a request. Default: `namespace/name` for object keys, the string itself, or JSON. */
  readonly keyOf?: (request: R) => string;
  /** Fairness partition of a request (kind, namespace, tenant…). Default: none. */
  readonly partitionOf?: (request: R) => string;
  /**
   * At most this many workers per partition at once (for example per kind). Default: none. Change
   * later with `setPartitionLimit`.
   */
  readonly partitionLimits?: Readonly<Record<string, number>>;
  /** The kind of a request, passed to the metric hooks. Default: none. */
  readonly kindOf?: (request: R) => string;
  /**
   * Backoff of retried requests. Default controller-runtime's: exponential 5 ms → 1000 s per
   * request, and at least what an overall token bucket (10 per second, burst 100) allows.
   */
  readonly rateLimiter?: RateLimiter;
  /** What to do after a retryable error. Default `unlimitedRetries`. */
  readonly retryPolicy?: RetryPolicy;
  /** openclarity hold semantics for requeueAfter. Default false. */
  readonly hold?: boolean;
  /** client-go coalescing of adds during processing. Default true. */
  readonly coalesceWhileProcessing?: boolean;
  /**
   * Causes a reconcile gets at most (`context.causes`): the newest distinct ones; the others are
   * counted in `droppedCauses`. Default 8; 0 keeps none.
   */
  readonly maxCausesPerKey?: number;
  /**
   * Per-reconcile timeout: the reconcile's signal aborts with a `ReconcileTimeoutError` after
   * this long. Default 600 000 (10 min); 0 disables it.
   */
  readonly reconcileTimeoutMs?: number;
  /**
   * How long a reconcile may keep running after its signal aborted before the worker abandons it
   * (the request is then released and retried with backoff, and the late result is ignored).
   * Default 5 000.
   */
  readonly abandonGraceMs?: number;
  /** How long stopping waits for in-flight reconciles. Default 30 000; 0 does not wait. */
  readonly shutdownTimeoutMs?: number;
  /**
   * How long `start` waits for its sources to sync before failing with a `SourceSyncError`.
   * Default 120 000. `Infinity` waits for as long as it takes (a Poller whose source is down at
   * start, an informer whose list is refused): every 30 s a warning names the sources still
   * waited for, and a manager's `/readyz` says which until they sync.
   */
  readonly syncTimeoutMs?: number;
  /** Whether a manager runs it only while leading. Default true; false with `sharding`. */
  readonly needLeaderElection?: boolean;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly metrics?: ControllerMetrics;
  readonly queueMetrics?: WorkQueueMetrics;
  /** A hook around each reconcile (a tracing adapter's). Default none. */
  readonly interceptor?: ReconcileInterceptor;
  /**
   * Cause chains: each reconcile runs as the writer of what it writes through a `Client`, and a
   * cause that echoes such a write names the reconcile behind it (`Cause.writtenBy`, with that
   * reconcile's own causes a few links deep), in `context.causes`, logs and `inspect()`. Default
   * true; false costs nothing and turns hot-loop detection off too.
   */
  readonly causeChains?: boolean;
  /**
   * Where writes are recorded and looked up. Default: a ledger of this controller's own, which
   * sees its own writes only; a manager gives the controllers it builds its `writeLedger`, so
   * that chains cross controllers (pass `manager.writeLedger` to one built by hand).
   */
  readonly writeLedger?: WriteLedger;
  /**
   * Hot-loop detection (needs `causeChains`): a key whose reconciles keep being caused only by
   * echoes of its own chain's writes is flagged once (a warning 'Hot loop detected' with the
   * chain, `inspect()`'s `hotLoop`, `hotLoopKeys()`), and with `brake` its self-caused runs back
   * off. Default true (threshold 10 runs within 30 s, no brake); false turns it off. See
   * {@link HotLoopOptions} for the rule.
   */
  readonly hotLoop?: boolean | HotLoopOptions;
  /** Reconcile only the requests this replica's shard member may run. Default: all (no sharding). */
  readonly sharding?: ControllerSharding<R>;
  /** Called with every reconcile error, retried or not (grafana's ErrorHandler). Must not throw. */
  readonly onError?: (error: Error, request: R) => void;
}
