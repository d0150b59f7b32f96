import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { noopLogger } from '../log/index.ts';
import { ReconcileAbandonedError, type Reconciler, ReconcileTimeoutError } from '../reconcile/index.ts';
import { invoke, StopWatch } from './invoke.ts';

const context = { logger: noopLogger, reconcileId: 'c-1', failures: 0, causes: [], droppedCauses: 0 };

function options(clock: VirtualClock, stopSignal = new AbortController().signal) {
  return { clock, stopSignal, timeoutMs: 1_000, abandonGraceMs: 500 };
}

describe('invoke', () => {
  it("aborts a run's signal once the run returned, with one shared 'reconcile finished' reason", async () => {
    const clock = new VirtualClock();
    const signals: AbortSignal[] = [];
    const reconciler: Reconciler<string> = {
      reconcile: async (_request, { signal }) => {
        signals.push(signal);
        expect(signal.aborted).toBe(false);
      },
    };
    for (const request of ['a', 'b']) {
      const outcome = await invoke(reconciler, request, context, options(clock)).outcome;
      expect(outcome).toMatchObject({ ok: true, abandoned: false, timedOut: false });
    }
    const [first, second] = signals as [AbortSignal, AbortSignal];
    expect(first.aborted && second.aborted).toBe(true);
    expect((first.reason as Error).message).toBe('reconcile finished');
    expect(second.reason).toBe(first.reason);
    // Shared, so nobody may change it for the others.
    expect(Object.isFrozen(first.reason)).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('turns a synchronous throw, a rejection and a non-Error throw into outcomes', async () => {
    const clock = new VirtualClock();
    const thrown = new Error('sync');
    const cases: Array<[Reconciler<string>, unknown]> = [
      [
        {
          reconcile: () => {
            throw thrown;
          },
        },
        thrown,
      ],
      [{ reconcile: () => Promise.reject(thrown) }, thrown],
      [
        {
          reconcile: () => {
            // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test
            throw 'a string';
          },
        },
        'a string',
      ],
    ];
    for (const [reconciler, error] of cases) {
      const outcome = await invoke(reconciler, 'k', context, options(clock)).outcome;
      expect(outcome).toMatchObject({ ok: false, error, abandoned: false });
    }
  });

  it('aborts on timeout, and abandons a run that ignores its signal for the grace period', async () => {
    const clock = new VirtualClock();
    let reason: unknown;
    const reconciler: Reconciler<string> = {
      reconcile: (_request, { signal }) =>
        new Promise<void>(() => {
          signal.addEventListener('abort', () => {
            reason = signal.reason;
          });
        }),
    };
    const invocation = invoke(reconciler, 'k', context, options(clock));
    let settled = false;
    void invocation.outcome.then(() => {
      settled = true;
    });
    await clock.advance(999);
    expect(reason).toBeUndefined();
    await clock.advance(1);
    expect(reason).toBeInstanceOf(ReconcileTimeoutError);
    await clock.advance(499);
    expect(settled).toBe(false);
    await clock.advance(1);
    const outcome = await invocation.outcome;
    expect(outcome).toMatchObject({ ok: false, abandoned: true, timedOut: true });
    expect((outcome as { error: unknown }).error).toBeInstanceOf(ReconcileAbandonedError);
  });

  it('aborts with the stop reason when the controller stops mid-run', async () => {
    const clock = new VirtualClock();
    const stop = new AbortController();
    let reason: unknown;
    const reconciler: Reconciler<string> = {
      reconcile: (_request, { signal }) =>
        new Promise<void>((resolve) =>
          signal.addEventListener(
            'abort',
            () => {
              reason = signal.reason;
              resolve();
            },
            { once: true },
          ),
        ),
    };
    const invocation = invoke(reconciler, 'k', context, options(clock, stop.signal));
    const why = new Error('stopping');
    stop.abort(why);
    expect(await invocation.outcome).toMatchObject({ ok: true, abandoned: false, timedOut: false });
    expect(reason).toBe(why);
  });

  it("a run's signal is aborted by a stop mid-run and once the run returned; a synchronous run leaves no timer", async () => {
    const clock = new VirtualClock();
    const stop = new AbortController();
    let ctxOf: { readonly signal: AbortSignal } | undefined;
    let resume: () => void = () => {};
    const reconciler: Reconciler<string> = {
      reconcile: (_request, ctx) => {
        ctxOf = ctx;
        return new Promise<void>((resolve) => {
          resume = resolve;
        });
      },
    };
    const invocation = invoke(reconciler, 'k', context, options(clock, stop.signal));
    const why = new Error('stopping');
    stop.abort(why);
    // Read after the stop: aborted, with the stop's reason.
    expect(ctxOf?.signal.aborted).toBe(true);
    expect(ctxOf?.signal.reason).toBe(why);
    resume();
    expect(await invocation.outcome).toMatchObject({ ok: true, abandoned: false, timedOut: false });

    // A synchronous reconciler that never reads it: its outcome at once, no timer left behind.
    let later: { readonly signal: AbortSignal } | undefined;
    const sync = invoke(
      {
        reconcile: (_request, ctx) => {
          later = ctx;
        },
      },
      'k',
      context,
      options(clock),
    );
    expect(await sync.outcome).toMatchObject({ ok: true, abandoned: false });
    expect(await sync.settled).toEqual({ ok: true, value: undefined });
    expect(clock.pendingTimers).toBe(0);
    // Read after the run returned (work it left running): aborted with the shared reason.
    expect(later?.signal.aborted).toBe(true);
    expect((later?.signal.reason as Error | undefined)?.message).toBe('reconcile finished');
    // A spread copy keeps the signal.
    expect({ ...later }.signal).toBe(later?.signal);
  });

  it('one StopWatch stops every run under way with one listener, and forgets runs that finished', async () => {
    const clock = new VirtualClock();
    const stop = new AbortController();
    const listen = vi.spyOn(stop.signal, 'addEventListener');
    const stops = new StopWatch(stop.signal);
    const reasons: unknown[] = [];
    const hang: Reconciler<string> = {
      reconcile: (_request, { signal }) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            reasons.push(signal.reason);
            resolve();
          }),
        ),
    };
    const quick: Reconciler<string> = { reconcile: async () => {} };
    for (let i = 0; i < 50; i++)
      await invoke(quick, 'q', context, { ...options(clock, stop.signal), stops }).outcome;
    const running = ['a', 'b', 'c'].map((k) =>
      invoke(hang, k, context, { ...options(clock, stop.signal), stops }),
    );
    expect(listen).toHaveBeenCalledTimes(1);
    const why = new Error('stopping');
    stop.abort(why);
    for (const r of running) expect(await r.outcome).toMatchObject({ ok: true, abandoned: false });
    // The three under way, each once; none of the fifty that had finished.
    expect(reasons).toEqual([why, why, why]);
    // After the stop, a new run starts aborted.
    let seen: unknown;
    await invoke(
      {
        reconcile: (_r, { signal }) => {
          seen = signal.reason;
        },
      },
      'late',
      context,
      {
        ...options(clock, stop.signal),
        stops,
      },
    ).outcome;
    expect(seen).toBe(why);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('StopWatch deadlines', () => {
  /** A run that starts `after` ms after the one before and takes `takes` ms (undefined: until aborted). */
  interface Planned {
    readonly after: number;
    readonly takes: number | undefined;
  }
  const TIMEOUT = 100;
  const planned = fc.record({
    after: fc.integer({ min: 0, max: 150 }),
    // Never exactly the timeout: which of two timers due at one instant fires first is not part of the contract.
    takes: fc.option(
      fc.oneof(fc.integer({ min: 0, max: TIMEOUT - 1 }), fc.integer({ min: TIMEOUT + 1, max: 300 })),
      {
        nil: undefined,
      },
    ),
  });

  /** Runs `plan` on a virtual clock; for each run, when its signal aborted and why (if it did before it returned). */
  async function play(plan: readonly Planned[], watch: boolean) {
    const clock = new VirtualClock();
    const stop = new AbortController();
    const stops = watch
      ? new StopWatch(stop.signal, { clock, timeoutMs: TIMEOUT })
      : new StopWatch(stop.signal);
    const seen: { start: number; abortedAt?: number; reason?: unknown }[] = [];
    const outcomes: Promise<unknown>[] = [];
    for (const p of plan) {
      await clock.advance(p.after);
      const record: { start: number; abortedAt?: number; reason?: unknown } = { start: clock.now() };
      seen.push(record);
      const reconciler: Reconciler<string> = {
        reconcile: (_r, { signal }) =>
          new Promise<void>((resolve) => {
            signal.addEventListener('abort', () => {
              record.abortedAt = clock.now();
              record.reason = signal.reason;
              resolve();
            });
            if (p.takes !== undefined) clock.setTimer(resolve, p.takes);
          }),
      };
      const o = {
        clock,
        stopSignal: stop.signal,
        timeoutMs: TIMEOUT,
        abandonGraceMs: 50,
        stops,
        startedAt: clock.now(),
      };
      outcomes.push(invoke(reconciler, 'k', context, o).outcome);
    }
    await clock.advance(1_000);
    await Promise.all(outcomes);
    stops.idle();
    return { seen, pending: clock.pendingTimers };
  }

  it('time out exactly the runs that outlast the timeout, at their start plus the timeout, with one timer for all; none is left once idle', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(planned, { minLength: 1, maxLength: 12 }), async (plan) => {
        const shared = await play(plan, true);
        const own = await play(plan, false);
        plan.forEach((p, i) => {
          const run = shared.seen[i] as { start: number; abortedAt?: number; reason?: unknown };
          const outlasts = p.takes === undefined || p.takes > TIMEOUT;
          if (outlasts) {
            expect(run.reason).toBeInstanceOf(ReconcileTimeoutError);
            expect(run.abortedAt).toBe(run.start + TIMEOUT);
          } else expect(run.reason).not.toBeInstanceOf(ReconcileTimeoutError);
        });
        // The same as a timer of its own per run.
        expect(shared.seen).toEqual(own.seen);
        expect(shared.pending).toBe(0);
      }),
      // Saturated: overlapping, back-to-back and hanging runs, and a deadline passing while
      // others wait, all come within the first ~50 cases.
      { numRuns: 150 },
    );
  });

  it('arms one timer while runs follow each other, and re-arms it only when it fires', async () => {
    const clock = new VirtualClock();
    const stop = new AbortController();
    const stops = new StopWatch(stop.signal, { clock, timeoutMs: 1_000 });
    const armed = vi.spyOn(clock, 'setTimer');
    const quick: Reconciler<string> = { reconcile: async () => {} };
    // A backlog: one run after another, the watch never idle.
    for (let i = 0; i < 100; i++) {
      const o = {
        clock,
        stopSignal: stop.signal,
        timeoutMs: 1_000,
        abandonGraceMs: 500,
        stops,
        startedAt: clock.now(),
      };
      await invoke(quick, 'q', context, o).outcome;
      await clock.advance(5);
    }
    // 500 ms of runs: the first run's timer is still the one armed.
    expect(armed).toHaveBeenCalledTimes(1);
    stops.idle();
    expect(clock.pendingTimers).toBe(0);
  });
});
