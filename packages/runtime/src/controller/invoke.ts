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
  readonly outcome: Promise<InvokeOutcome>;
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
 * The runs under way that one stop signal stops: one `abort` listener for all of them instead of
 * one added and removed per run (with the run's own AbortController, the larger part of what a
 * reconcile over a cache allocated; `npm run bench:steady-state` counts the collections). The runs
 * are kept in a list through their own links: no Set whose table is rebuilt as runs come and go.
 * A controller keeps one for its workers and passes it to every {@link invoke}.
 *
 * @internal
 */
export class StopWatch {
  readonly signal: AbortSignal;
  #head: Run | undefined;
  #listening = false;

  constructor(signal: AbortSignal) {
    this.signal = signal;
  }

  /** Aborts `run` when the signal aborts (at once if it has). */
  add(run: Run): void {
    if (this.signal.aborted) {
      run.abort(this.signal.reason);
      return;
    }
    run.watched = true;
    run.next = this.#head;
    if (this.#head !== undefined) this.#head.prev = run;
    this.#head = run;
    if (!this.#listening) {
      this.#listening = true;
      this.signal.addEventListener('abort', () => this.#stop(), { once: true });
    }
  }

  delete(run: Run): void {
    if (!run.watched) return;
    run.watched = false;
    if (run.prev === undefined) this.#head = run.next;
    else run.prev.next = run.next;
    if (run.next !== undefined) run.next.prev = run.prev;
    run.prev = undefined;
    run.next = undefined;
  }

  #stop(): void {
    const runs: Run[] = [];
    for (let run = this.#head; run !== undefined; run = run.next) runs.push(run);
    for (const run of runs) this.delete(run);
    for (const run of runs) run.abort(this.signal.reason);
  }
}

/** What {@link invoke} resolves `outcome` with. @internal */
export type InvokeOutcome = Outcome & { readonly abandoned: boolean; readonly timedOut: boolean };

/**
 * One run: its abort state and its way to an outcome. State lives in fields and methods, not in
 * closures made anew for every run.
 */
class Run {
  readonly #controller = new AbortController();
  #reason: unknown;
  aborted = false;
  /** The outcome is decided (settled or abandoned). */
  over = false;
  timeout: Timer | undefined;
  #grace: Timer | undefined;
  onStop: (() => void) | undefined;
  resolve: ((outcome: InvokeOutcome) => void) | undefined;
  // A StopWatch's list.
  watched = false;
  prev: Run | undefined;
  next: Run | undefined;

  readonly options: InvokeOptions;
  readonly stops: StopWatch | undefined;

  constructor(options: InvokeOptions, stops: StopWatch | undefined) {
    this.options = options;
    this.stops = stops;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Stop or timeout: the signal aborts, and the grace before the run is abandoned starts. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#reason = reason;
    this.#controller.abort(reason);
    if (this.over) return;
    const { clock, abandonGraceMs } = this.options;
    this.#grace = clock.setTimer(
      () =>
        this.conclude({
          ok: false,
          error: new ReconcileAbandonedError(abandonGraceMs, { cause: this.#reason }),
          abandoned: true,
          timedOut: this.timedOut(),
        }),
      abandonGraceMs,
    );
  }

  timedOut(): boolean {
    return this.#reason instanceof ReconcileTimeoutError;
  }

  /** The first of: the reconcile settled, or the grace after an abort ran out. */
  conclude(result: InvokeOutcome): void {
    if (this.over) return;
    this.over = true;
    this.timeout?.cancel();
    this.#grace?.cancel();
    if (this.stops !== undefined) this.stops.delete(this);
    else if (this.onStop !== undefined) this.options.stopSignal.removeEventListener('abort', this.onStop);
    // Like Go's cancel after the call: anything the reconcile left running is told to stop.
    if (!this.aborted) {
      this.aborted = true;
      this.#reason = FINISHED;
      this.#controller.abort(FINISHED);
    }
    this.resolve?.(result);
  }

  settledWith(value: unknown): Outcome {
    this.conclude({ ok: true, value, abandoned: false, timedOut: this.timedOut() });
    return { ok: true, value };
  }

  failedWith(error: unknown): Outcome {
    this.conclude({ ok: false, error, abandoned: false, timedOut: this.timedOut() });
    return { ok: false, error };
  }
}

/**
 * Calls a reconciler so that nothing it does can escape: a synchronous throw, a rejection or a
 * non-Error throw all become outcomes. Its signal aborts on stop or after `timeoutMs`; if it is
 * still running `abandonGraceMs` after that, the invocation resolves as abandoned. `stops`, when
 * given for `stopSignal`, watches the stop for every run of a controller at once.
 *
 * @internal
 */
export function invoke<R>(
  reconciler: Reconciler<R>,
  request: R,
  context: Omit<ReconcileContext, 'signal'>,
  options: InvokeOptions & { readonly stops?: StopWatch },
): Invocation {
  const { clock, stopSignal, timeoutMs } = options;
  const run = new Run(options, options.stops?.signal === stopSignal ? options.stops : undefined);
  const outcome = new Promise<InvokeOutcome>((resolve) => {
    run.resolve = resolve;
  });
  if (run.stops !== undefined) run.stops.add(run);
  else if (stopSignal.aborted) run.abort(stopSignal.reason);
  else {
    const onStop = (): void => run.abort(stopSignal.reason);
    run.onStop = onStop;
    stopSignal.addEventListener('abort', onStop, { once: true });
  }
  if (timeoutMs > 0 && !run.aborted)
    run.timeout = clock.setTimer(() => run.abort(new ReconcileTimeoutError(timeoutMs)), timeoutMs);

  // The signal is made here, not on first read through a getter: an object literal with an
  // accessor made per run cost far more than the AbortController (each one's own closure and
  // descriptors outlived the young generation and were promoted, run after run).
  const ctx: ReconcileContext = {
    logger: context.logger,
    reconcileId: context.reconcileId,
    failures: context.failures,
    causes: context.causes,
    droppedCauses: context.droppedCauses,
    signal: run.signal,
  };
  let settled: Promise<Outcome>;
  try {
    const returned: unknown = reconciler.reconcile(request, ctx);
    settled =
      typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function'
        ? Promise.resolve(returned).then(
            (value) => run.settledWith(value),
            (error: unknown) => run.failedWith(error),
          )
        : // A reconciler that returned at once: its outcome now, no promise to wait for.
          Promise.resolve(run.settledWith(returned));
  } catch (error) {
    settled = Promise.resolve(run.failedWith(error));
  }
  return { outcome, settled };
}
