import type { Clock, Timer } from '../clock/index.ts';
import {
  type Outcome,
  ReconcileAbandonedError,
  type ReconcileContext,
  type Reconciler,
  ReconcileTimeoutError,
} from '../reconcile/index.ts';

export interface InvokeOptions {
  readonly clock: Clock;
  readonly stopSignal: AbortSignal;
  readonly timeoutMs: number;
  readonly abandonGraceMs: number;
}

/** One reconcile in progress. */
export interface Invocation {
  /**
   * Settles when the worker may move on: the reconcile settled, or it was abandoned. `timedOut`:
   * the reconcile's timeout fired before then.
   */
  readonly outcome: Promise<Outcome & { readonly abandoned: boolean; readonly timedOut: boolean }>;
  /** Settles when the reconciler's own promise settles (never, for a reconcile that hangs). */
  readonly settled: Promise<Outcome>;
}

/**
 * The reason a run's signal aborts with once the run has returned, so that what it left running
 * stops (Go's cancel after the call). One instance for every run: capturing a new Error's stack
 * cost ~1.5 µs, about a tenth of a reconcile over an in-process backend, and more inside a worker's
 * AsyncLocalStorage cell.
 */
const FINISHED: Error = Object.freeze(
  Object.assign(new Error('reconcile finished'), {
    stack:
      'Error: reconcile finished (the run returned; its signal aborts so that what it left running stops)',
  }),
);

/**
 * Calls a reconciler so that nothing it does can escape: a synchronous throw, a rejection or a
 * non-Error throw all become outcomes. Its signal aborts on stop or after `timeoutMs`; if it is
 * still running `abandonGraceMs` after that, the invocation resolves as abandoned.
 *
 * @internal
 */
export function invoke<R>(
  reconciler: Reconciler<R>,
  request: R,
  context: Omit<ReconcileContext, 'signal'>,
  options: InvokeOptions,
): Invocation {
  const { clock, stopSignal, timeoutMs, abandonGraceMs } = options;
  const controller = new AbortController();
  const onStop = (): void => controller.abort(stopSignal.reason);
  let timeout: Timer | undefined;
  let grace: Timer | undefined;
  if (stopSignal.aborted) controller.abort(stopSignal.reason);
  else stopSignal.addEventListener('abort', onStop, { once: true });
  if (timeoutMs > 0 && !controller.signal.aborted) {
    timeout = clock.setTimer(() => controller.abort(new ReconcileTimeoutError(timeoutMs)), timeoutMs);
  }

  let returned: unknown;
  try {
    returned = reconciler.reconcile(request, { ...context, signal: controller.signal });
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- pass any thrown value through to classify()
    returned = Promise.reject(error);
  }
  const settled: Promise<Outcome> = Promise.resolve(returned).then(
    (value): Outcome => ({ ok: true, value }),
    (error: unknown): Outcome => ({ ok: false, error }),
  );

  const timedOut = (): boolean => controller.signal.reason instanceof ReconcileTimeoutError;
  let arm: (() => void) | undefined;
  const abandoned = new Promise<Outcome & { abandoned: boolean; timedOut: boolean }>((resolve) => {
    arm = (): void => {
      grace = clock.setTimer(
        () =>
          resolve({
            ok: false,
            error: new ReconcileAbandonedError(abandonGraceMs, { cause: controller.signal.reason }),
            abandoned: true,
            timedOut: timedOut(),
          }),
        abandonGraceMs,
      );
    };
    if (controller.signal.aborted) arm();
    else controller.signal.addEventListener('abort', arm, { once: true });
  });

  const finished = settled.then((o) => ({ ...o, abandoned: false, timedOut: timedOut() }));
  const outcome = Promise.race([finished, abandoned]).finally(() => {
    timeout?.cancel();
    grace?.cancel();
    stopSignal.removeEventListener('abort', onStop);
    if (arm !== undefined) controller.signal.removeEventListener('abort', arm);
    // Like Go's cancel after the call: anything the reconcile left running is told to stop.
    if (!controller.signal.aborted) controller.abort(FINISHED);
  });
  return { outcome, settled };
}
