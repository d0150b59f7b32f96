import { classify, type Outcome, toError } from '../reconcile/index.ts';
import type { CauseSet } from '../workqueue/index.ts';
import type { ReconcileResultLabel } from './options.ts';

/** What a {@link ReconcileInterceptor} is told about a reconcile before it starts. */
export interface ReconcileInfo {
  readonly controller: string;
  /** The run's id, as in its log lines. */
  readonly reconcileId: string;
  /** The request's identity (`keyOf`). */
  readonly key: string;
  /** The request itself (an object key, a string, a dynamic controller's kind request). */
  readonly request: unknown;
  /** The request's namespace and name, when it is an object key. */
  readonly namespace?: string;
  readonly name?: string;
  /** The request's kind, when the controller has a `kindOf`. */
  readonly kind?: string;
  /** Failed runs of the request since it last succeeded (`context.failures`). */
  readonly failures: number;
  /**
   * Why it runs (`context.causes` and `droppedCauses`). Once an interceptor is added, the queue
   * stamps each cause with the time it arrived (`at`).
   */
  readonly causes: CauseSet;
}

/** How a reconcile ended, as its interceptor's `run` resolves it. */
export interface ReconcileSummary {
  readonly result: ReconcileResultLabel;
  /** From the start of the reconcile to its result applied to the queue, on the controller's clock. */
  readonly durationMs: number;
  /** The reconcile's error, for the results `error`, `terminal` and `dropped`. */
  readonly error?: Error;
  /** The delay asked by `requeueAfter(ms)`, for the result `requeue_after`. */
  readonly requeueAfterMs?: number;
  /** The reconcile's timeout fired during the run. */
  readonly timedOut: boolean;
  /** The reconcile outlived its grace period and was abandoned (its late result is ignored). */
  readonly abandoned: boolean;
}

/**
 * A hook around each reconcile of a controller (a tracing adapter's): `aroundReconcile` calls
 * `run` once and returns its promise, or a promise that settles after it. It may call `run` inside
 * a context of its own (an OpenTelemetry span's, an AsyncLocalStorage store): the reconciler is
 * called synchronously within `run`, so what it does belongs to that context.
 *
 * The interceptor observes; it cannot change the outcome. A hook that throws, rejects or does not
 * call `run` is ignored (the reconcile runs anyway, once). `run` never rejects.
 *
 * @example
 * controller.observe({
 *   interceptor: {
 *     aroundReconcile: (info, run) => storage.run({ id: info.reconcileId }, run),
 *   },
 * });
 */
export interface ReconcileInterceptor {
  aroundReconcile(info: ReconcileInfo, run: () => Promise<ReconcileSummary>): Promise<unknown>;
}

/** The info of a run. @internal */
export function reconcileInfo(
  controller: string,
  reconcileId: string,
  key: string,
  request: unknown,
  kind: string | undefined,
  failures: number,
  causes: CauseSet,
): ReconcileInfo {
  return {
    controller,
    reconcileId,
    key,
    request,
    ...objectKeyOf(request),
    ...(kind === undefined ? {} : { kind }),
    failures,
    causes,
  };
}

/** The namespace and name of a request that is an object key. */
function objectKeyOf(request: unknown): { namespace?: string; name?: string } {
  if (typeof request !== 'object' || request === null) return {};
  const { namespace, name } = request as { namespace?: unknown; name?: unknown };
  if (typeof name !== 'string') return {};
  return typeof namespace === 'string' && namespace !== '' ? { namespace, name } : { name };
}

/** What a run reports to the controller. @internal */
export interface Finished {
  readonly label: ReconcileResultLabel;
  readonly outcome: Outcome & { readonly abandoned: boolean; readonly timedOut: boolean };
  readonly durationMs: number;
}

/** The public summary of a run. @internal */
export function summary(finished: Finished): ReconcileSummary {
  const { label, outcome, durationMs } = finished;
  const base = { result: label, durationMs, timedOut: outcome.timedOut, abandoned: outcome.abandoned };
  if (label === 'success' || label === 'requeue') return base;
  const c = classify(outcome);
  if (label === 'requeue_after')
    return c.kind === 'requeueAfter' ? { ...base, requeueAfterMs: c.afterMs } : base;
  if (c.kind === 'error' || c.kind === 'terminal') return { ...base, error: c.error };
  // A run that failed to requeue (a broken retry policy) is counted as an error.
  return outcome.ok ? base : { ...base, error: toError(outcome.error) };
}

/**
 * Runs `body` through `interceptor`, exactly once whatever the interceptor does, and resolves
 * with what `body` resolves with. @internal
 */
export function intercept<F extends Finished>(
  interceptor: ReconcileInterceptor,
  info: ReconcileInfo,
  body: () => Promise<F>,
): Promise<F> {
  let ran: Promise<F> | undefined;
  const once = (): Promise<F> => {
    ran ??= body();
    return ran;
  };
  return guarded(interceptor, info, () => once().then(summary)).then(once, once);
}

/** Two interceptors as one: `first` around `then`. @internal */
export function joinInterceptors(
  first: ReconcileInterceptor | undefined,
  then: ReconcileInterceptor,
): ReconcileInterceptor {
  if (first === undefined) return then;
  return { aroundReconcile: (info, run) => guarded(first, info, () => guarded(then, info, run)) };
}

/** `interceptor` around `run`: `run` called once, resolving as it does, whatever the interceptor does. */
function guarded(
  interceptor: ReconcileInterceptor,
  info: ReconcileInfo,
  run: () => Promise<ReconcileSummary>,
): Promise<ReconcileSummary> {
  let ran: Promise<ReconcileSummary> | undefined;
  const once = (): Promise<ReconcileSummary> => {
    ran ??= run();
    return ran;
  };
  let around: Promise<unknown>;
  try {
    around = Promise.resolve(interceptor.aroundReconcile(info, once));
  } catch {
    return once();
  }
  return around.then(once, once);
}
