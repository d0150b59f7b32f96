import type { Logger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';

/**
 * What happened to an object, as a watcher or an event-style reconciler sees it (grafana app-sdk's
 * `ResourceAction`): created (or listed), updated, deleted, or re-delivered unchanged by a resync.
 */
export type ResourceAction = 'create' | 'update' | 'delete' | 'resync';

/** What a watcher's handler gets besides the object(s). */
export interface WatcherContext {
  /** Aborts when the controller stops. Pass it to every I/O call. */
  readonly signal: AbortSignal;
  /** A logger bound to the kind, the watcher, the action and the object. */
  readonly logger: Logger;
  /** 0 for the call an event caused; n for its n-th retry. */
  readonly attempt: number;
}

/**
 * Event-style handlers of one kind (grafana app-sdk's `ResourceWatcher` / `SimpleWatcher`). Every
 * method is optional: a missing one is a no-op that succeeds. A method that throws (or rejects) is
 * an error: the controller's error handler sees it and its retry policy decides whether and when
 * the same call is made again. Handlers of one object never run concurrently.
 *
 * @example
 * const watcher: ResourceWatcher<Widget> = {
 *   async add(widget, { signal }) { await provision(widget, signal); },
 *   async delete(widget) { await deprovision(widget); },
 * };
 */
export interface ResourceWatcher<T extends KubeObject = KubeObject> {
  add?(object: T, context: WatcherContext): void | Promise<void>;
  update?(oldObject: T, object: T, context: WatcherContext): void | Promise<void>;
  delete?(object: T, context: WatcherContext): void | Promise<void>;
  /**
   * An object seen again that was already handled (app-sdk's `SyncWatcher.Sync`): the opinionated
   * watcher calls it for an object that carries its finalizer when the operator starts.
   */
  sync?(object: T, context: WatcherContext): void | Promise<void>;
}

/** What an event-style reconciler is asked (app-sdk v0.10+'s `ReconcileRequest`). */
export interface ReconcileRequest<T extends KubeObject = KubeObject, S = unknown> {
  readonly action: ResourceAction;
  readonly object: T;
  /** State the previous attempt of this request returned (undefined on the first attempt). */
  readonly state: S | undefined;
}

/** What an event-style reconciler answers (app-sdk's `ReconcileResult`). */
export interface ReconcileResult<S = unknown> {
  /** Run the same request again after this many milliseconds (the attempt count is not increased). */
  readonly requeueAfterMs?: number;
  /** Handed back as `request.state` to the requeued or retried request. */
  readonly state?: S;
}

/**
 * An event-style reconciler of one kind: it sees the action and the object (unlike a
 * reconcile-by-key `Reconciler`, which sees only a key and reads the state itself).
 */
export interface EventReconciler<T extends KubeObject = KubeObject, S = unknown> {
  reconcile(
    request: ReconcileRequest<T, S>,
    context: WatcherContext,
  ): EventReconcileReturn<S> | Promise<EventReconcileReturn<S>>;
}

/** What an event reconciler may return: a result, or nothing (no requeue, no state). */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets reconcilers that return nothing type-check.
export type EventReconcileReturn<S = unknown> = ReconcileResult<S> | undefined | void;

/** A pending retry, as a retry-dequeue policy sees it. */
export interface PendingRetry<T extends KubeObject = KubeObject> {
  readonly action: ResourceAction;
  /** The object the failed call was made with (the new one for updates). */
  readonly object: T;
  /** The error the last attempt failed with (never lost, unlike app-sdk v0.9.10). */
  readonly error: Error;
  /** Attempts made so far (1 after the first failure). */
  readonly attempts: number;
}

/**
 * Decides, when a new event arrives for an object, whether a pending retry of the same watcher and
 * object is dropped (true) or kept (false) (app-sdk's `RetryDequeuePolicy`). Without a policy every
 * new event drops every pending retry of that watcher and object.
 */
export type RetryDequeuePolicy = <T extends KubeObject>(
  newAction: ResourceAction,
  newObject: T,
  retry: PendingRetry<T>,
) => boolean;
