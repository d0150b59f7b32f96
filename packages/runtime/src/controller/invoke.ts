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
  /** When the run started, on `clock` (read here when not given). */
  readonly startedAt?: number;
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

/** The clock and the timeout a controller's runs share. */
interface Timeouts {
  readonly clock: Clock;
  readonly timeoutMs: number;
}

/**
 * The runs under way that one stop signal stops, and when given the clock and timeout they share,
 * times out: one `abort` listener for all of them instead of one added and removed per run (with
 * the run's own AbortController, the larger part of what a reconcile over a cache allocated;
 * `npm run bench:steady-state` counts the collections), and one timer for all their deadlines
 * instead of a timer armed and cancelled per run (a Node timer object and its list insertion per
 * reconcile). The timer is armed for the earliest deadline and, when it fires, times out the runs
 * whose deadline passed and is armed again for the next; while runs follow each other it stays
 * armed, and {@link StopWatch.idle} (a worker about to wait for work) cancels it once none runs.
 * The runs are kept in a list through their own links: no Set whose table is rebuilt as runs come
 * and go. A controller keeps one for its workers and passes it to every {@link invoke}.
 *
 * @internal
 */
export class StopWatch {
  readonly signal: AbortSignal;
  readonly #timeouts: Timeouts | undefined;
  #head: Run | undefined;
  #listening = false;
  #timer: Timer | undefined;
  /** When the armed timer fires (clock ms); +Infinity when none is armed. */
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(signal: AbortSignal, timeouts?: Timeouts) {
    this.signal = signal;
    if (timeouts !== undefined && timeouts.timeoutMs > 0) this.#timeouts = timeouts;
  }

  /** Whether this watch times out the runs of `options` (same clock and timeout). */
  timesOut(options: Pick<InvokeOptions, 'clock' | 'timeoutMs'>): boolean {
    const t = this.#timeouts;
    return t !== undefined && t.clock === options.clock && t.timeoutMs === options.timeoutMs;
  }

  /**
   * Aborts `run` when the signal aborts (at once if it has), and when `run.deadline` is set, once
   * the clock reaches it.
   */
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
    // Its deadline is its start plus the timeout: no clock read to arm for it.
    const deadline = run.deadline;
    const t = this.#timeouts;
    if (deadline !== undefined && t !== undefined && deadline < this.#timerAt)
      this.#arm(t, deadline, deadline - t.timeoutMs);
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

  /** No run is under way and none is about to start: the deadline timer need not stay armed. */
  idle(): void {
    if (this.#head === undefined) this.#disarm();
  }

  /** Arms the timer for `at`, the clock being at `now`. */
  #arm(t: Timeouts, at: number, now: number): void {
    this.#timer?.cancel();
    this.#timerAt = at;
    this.#timer = t.clock.setTimer(() => this.#expire(t), Math.max(0, at - now));
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  /**
   * The timer fired: the runs whose deadline passed time out, and it is armed for the earliest
   * left. Every run is looked at (a controller's runs are at most its workers), so a deadline
   * earlier than an older run's (the wall clock set back) is not missed.
   */
  #expire(t: Timeouts): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = t.clock.now();
    const due: Run[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (let run = this.#head; run !== undefined; run = run.next) {
      const deadline = run.deadline;
      if (deadline === undefined) continue;
      if (deadline <= now) due.push(run);
      else if (deadline < next) next = deadline;
    }
    for (const run of due) {
      // Out of the list: its signal has aborted, a stop has nothing left to tell it.
      this.delete(run);
      run.abort(new ReconcileTimeoutError(t.timeoutMs));
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(t, next, now);
  }

  #stop(): void {
    this.#disarm();
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
  /** When a StopWatch times it out (clock ms), if one does. */
  deadline: number | undefined = undefined;
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
  // The watch's one timer times the run out, instead of a timer of its own.
  const watched = timeoutMs > 0 && run.stops?.timesOut(options) === true;
  if (watched) run.deadline = (options.startedAt ?? clock.now()) + timeoutMs;
  if (run.stops !== undefined) run.stops.add(run);
  else if (stopSignal.aborted) run.abort(stopSignal.reason);
  else {
    const onStop = (): void => run.abort(stopSignal.reason);
    run.onStop = onStop;
    stopSignal.addEventListener('abort', onStop, { once: true });
  }
  if (timeoutMs > 0 && !run.aborted && !watched)
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
