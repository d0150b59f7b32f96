import type { Logger } from '../log/index.ts';
import type { ObjectKey } from '../object/index.ts';
import type { Cause } from '../workqueue/index.ts';
import type { Result } from './result.ts';

/** What a reconcile gets besides its request. */
export interface ReconcileContext {
  /**
   * Aborts when the reconcile times out or the controller stops. Pass it to every I/O call and
   * return promptly once it aborts.
   */
  readonly signal: AbortSignal;
  /** A logger bound to `controller`, `reconcileId` and the request. */
  readonly logger: Logger;
  /** Unique id of this reconcile, for logs and traces. */
  readonly reconcileId: string;
  /** Consecutive failed attempts of this request before this one (0 after a success). */
  readonly failures: number;
  /**
   * Why this reconcile runs: the causes that enqueued its request since its previous start,
   * oldest first — object events (`added`, `modified`, `deleted`, `resync`… with the source's name
   * and a reference to the object, `secondary` when it was an owned or mapped object),
   * `requeue-after`, `requeue`, `retry`, `manual`. A run after an error or a `requeue()` gets the
   * failed run's causes again, then `retry` or `requeue`. At most the controller's
   * `maxCausesPerKey` (the newest; see `droppedCauses`). Level-based reconcilers ignore them;
   * `operationOf(causes)` answers Kumori's Put / Delete / Purge / Secondary.
   */
  readonly causes: readonly Cause[];
  /** Causes of this run that were let go because there were more than `maxCausesPerKey`. */
  readonly droppedCauses: number;
}

/** What a reconcile may return: a Result, nothing (= `done()`), or a promise of either. */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets reconcilers that return nothing type-check.
export type ReconcileReturn = Result | undefined | void;

/**
 * Drives the actual state of one object towards its desired state. It receives only a key
 * (level-based) and must read current state itself. It is never called concurrently for the same
 * request. Throwing (or rejecting) is a retryable error unless it is a `TerminalError`.
 *
 * @example
 * const reconciler: Reconciler = {
 *   async reconcile({ namespace, name }, { signal }) {
 *     const site = cache.get(namespace, name);
 *     if (site === undefined) return done();
 *     await ensureDeployment(site, signal);
 *     return requeueAfter(60_000);
 *   },
 * };
 */
export interface Reconciler<R = ObjectKey> {
  reconcile(request: R, context: ReconcileContext): ReconcileReturn | Promise<ReconcileReturn>;
}

/** A reconciler written as a function. */
export type ReconcileFunction<R = ObjectKey> = Reconciler<R>['reconcile'];

/** Wraps a function as a {@link Reconciler}. */
export function reconcilerFunc<R = ObjectKey>(reconcile: ReconcileFunction<R>): Reconciler<R> {
  return { reconcile };
}
