import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import type { ObjectKey } from '../object/index.ts';
import type { RetryPolicy } from '../workqueue/index.ts';
import type { ResourceAction, RetryDequeuePolicy } from './types.ts';

/** What an {@link InformerControllerOptions.onError} hook learns about a failed handler call. */
export interface WatcherErrorInfo {
  /** The kind the handler was added for. */
  readonly kind: string;
  /** Whether the handler is a `ResourceWatcher` or an `EventReconciler`. */
  readonly handler: 'watcher' | 'reconciler';
  /** The handler's name: the one it was added with, else `watcher-<n>` / `reconciler-<n>` (n never reused). */
  readonly watcher: string;
  readonly action: ResourceAction;
  /** The object's key (namespace '' when cluster-scoped). */
  readonly key: ObjectKey;
  /** 0 for the call an event caused, n for its n-th retry. */
  readonly attempt: number;
  /**
   * When the same call is made again, in milliseconds; undefined when it is not (the retry policy
   * gave up, or the error is a `TerminalError`).
   */
  readonly retryInMs: number | undefined;
}

export interface InformerControllerOptions {
  /** Name for logs and errors. Default 'informer-controller'. */
  readonly name?: string;
  /**
   * Whether and when a failed handler call is made again, asked with `failures` = the failed
   * call's attempt number (0 for the event's call). Default {@link defaultWatcherRetryPolicy}
   * (app-sdk's `ExponentialBackoffRetryPolicy(5s, 5)`: 7 calls). A decision without `delayMs`
   * waits 5 ms · 2^failures, at most 1000 s (the work queue's default backoff). `noRetries` turns
   * retries off.
   */
  readonly retryPolicy?: RetryPolicy;
  /**
   * Which pending retries of a handler and object a new event for that object drops. Default
   * none: every new event drops them all. See {@link opinionatedRetryDequeuePolicy}.
   */
  readonly retryDequeuePolicy?: RetryDequeuePolicy;
  /**
   * Called with every failed handler call, retries included, after the retry policy decided.
   * Must not throw (what it throws is logged and ignored). Not called for calls that end after the
   * controller stopped or the handler was removed.
   */
  readonly onError?: (error: Error, info: WatcherErrorInfo) => void;
  /** Handler calls running at once, over all objects and kinds. Default 10. */
  readonly workers?: number;
  /**
   * Whether `start` runs the informers it is given (their `start(signal)`), each once however
   * many kinds it was added for. Default true. Pass false when a registry (`InformerRegistry`)
   * or someone else runs them; `addInformer(source, kind, { start })` decides per informer.
   */
  readonly startInformers?: boolean;
  /** How long stopping waits for running handler calls. Default 30 000; 0 does not wait. */
  readonly shutdownTimeoutMs?: number;
  /** Whether a manager runs it only while leading. Default true. */
  readonly needLeaderElection?: boolean;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Options of {@link InformerController.addInformer}. */
export interface AddInformerOptions {
  /** Run this informer from `start`. Default the controller's `startInformers`. */
  readonly start?: boolean;
}

/** Options of `addWatcher` and `addReconciler`. */
export interface AddHandlerOptions {
  /** Name in logs and in {@link WatcherErrorInfo}. Default `watcher-<n>` / `reconciler-<n>`. */
  readonly name?: string;
}

/** The lifecycle of an {@link InformerController}, in order. */
export type InformerControllerState = 'new' | 'running' | 'stopping' | 'stopped';

/** Counters of an {@link InformerController}. */
export interface InformerControllerStats {
  /** Retries and requeues waiting for their time or for their object's turn. */
  readonly pendingRetries: number;
  /** Handler calls running now. */
  readonly running: number;
  /** Events and due retries waiting for their object's earlier work or for a worker. */
  readonly queued: number;
  /** Objects with waiting or running work. */
  readonly objects: number;
  /** Events received while running (generic events and events after stop are not counted). */
  readonly events: number;
}
