import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../backend/errors.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { AlreadyStartedError, isConvergeError, OptionsError } from '../errors.ts';
import { MemoryLogger } from '../log/index.ts';
import {
  done,
  NonErrorThrownError,
  type ReconcileContext,
  ReconcileTimeoutError,
  RequeueAfterError,
  requeue,
  requeueAfter,
  requeueNow,
  TerminalError,
} from '../reconcile/index.ts';
import type { Source } from '../source/source.ts';
import { exponentialBackoffRetryPolicy, kroRetryPolicy, maxRetries } from '../workqueue/index.ts';
import { Controller } from './controller.ts';
import { ShutdownTimeoutError, SourceFailedError, SourceSyncError } from './errors.ts';
import type { ControllerOptions } from './options.ts';

type Call = { key: string; at: number; failures: number };

/** A source whose sync the test controls, and which can push keys at any time. */
function manualSource(name = 'manual') {
  let release: () => void = () => {};
  let fail: (e: unknown) => void = () => {};
  const synced = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  let push: (key: string) => void = () => {};
  const source: Source<string> = {
    name,
    start(signal, queue) {
      push = (key) => queue.add(key);
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    waitForSync: () => synced,
  };
  return { source, sync: () => release(), failSync: (e: unknown) => fail(e), push: (k: string) => push(k) };
}

function setup(
  reconcile: ControllerOptions<string>['reconciler'],
  extra: Partial<ControllerOptions<string>> = {},
) {
  const clock = new VirtualClock();
  const logger = new MemoryLogger();
  const controller = new Controller<string>({ name: 'test', reconciler: reconcile, clock, logger, ...extra });
  const abort = new AbortController();
  return { clock, logger, controller, abort };
}

describe('Controller', () => {
  it('queues events that arrive during the sync and reconciles them only after every source synced', async () => {
    const calls: string[] = [];
    const a = manualSource('a');
    const b = manualSource('b');
    const { clock, controller, abort } = setup((key) => void calls.push(key), {
      sources: [a.source, b.source],
    });
    const run = controller.start(abort.signal);
    await clock.advance(0);
    a.push('x');
    b.push('y');
    a.sync();
    await clock.advance(10);
    expect(controller.state).toBe('syncing');
    expect(calls).toEqual([]);
    b.sync();
    await clock.advance(10);
    expect(controller.state).toBe('running');
    expect(calls).toEqual(['x', 'y']);
    abort.abort();
    await run;
    expect(controller.state).toBe('stopped');
  });

  it('never reconciles one request concurrently and runs it exactly once more when added during its reconcile', async () => {
    const active = new Set<string>();
    let overlaps = 0;
    const calls: string[] = [];
    const clock = new VirtualClock();
    const controller = new Controller<string>({
      name: 'c',
      clock,
      maxConcurrentReconciles: 4,
      reconciler: async (key) => {
        if (active.has(key)) overlaps++;
        active.add(key);
        calls.push(key);
        await clock.sleep(100);
        active.delete(key);
      },
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await clock.advance(0);
    controller.queue.add('k');
    await clock.advance(10);
    for (let i = 0; i < 5; i++) controller.queue.add('k');
    await clock.advance(1000);
    expect(overlaps).toBe(0);
    expect(calls).toEqual(['k', 'k']);
    abort.abort();
    await run;
  });

  it('lets the event loop run during a backlog of reconciles that do no I/O (workers yield every 64 reconciles)', async () => {
    let reconciled = 0;
    const controller = new Controller<string>({
      name: 'busy',
      clock: new VirtualClock(),
      maxConcurrentReconciles: 4,
      reconciler: () => {
        reconciled++;
      },
    });
    for (let i = 0; i < 10_000; i++) controller.queue.add(`key-${i}`);
    const stop = new AbortController();
    const run = controller.start(stop.signal);
    // A macrotask queued now (a timer, a socket read, an informer page) runs after at most 64
    // reconciles per worker, not after the whole backlog.
    const seenByMacrotask = await new Promise<number>((resolve) => setImmediate(() => resolve(reconciled)));
    expect(seenByMacrotask).toBeGreaterThan(0);
    expect(seenByMacrotask).toBeLessThanOrEqual(4 * 64);
    while (reconciled < 10_000) await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    await run;
  });

  it("retries with controller-runtime's default rate limiter: per-request backoff max-of an overall 10 qps, burst 100 bucket", async () => {
    const clock = new VirtualClock();
    const calls = new Map<string, number>();
    const controller = new Controller<string>({
      name: 'bucket',
      clock,
      maxConcurrentReconciles: 4,
      reconciler: (key) => {
        const n = (calls.get(key) ?? 0) + 1;
        calls.set(key, n);
        if (n === 1) throw new Error('first attempt fails');
      },
    });
    for (let i = 0; i < 150; i++) controller.queue.add(`key-${i}`);
    const stop = new AbortController();
    const run = controller.start(stop.signal);
    const total = (): number => [...calls.values()].reduce((a, b) => a + b, 0);
    await clock.advance(0);
    expect(total()).toBe(150);
    // The per-request backoff alone would retry all 150 after 5 ms; the bucket lets 100 through.
    await clock.advance(10);
    expect(total()).toBe(250);
    // The other 50 come at 10 per second.
    await clock.advance(1_000);
    expect(total()).toBe(260);
    await clock.advance(4_000);
    expect(total()).toBe(300);
    stop.abort();
    await run;
  });

  it("answers has(), length, processingCount and waitingCount on a running controller's queue (openclarity's Has and Len)", async () => {
    const clock = new VirtualClock();
    const controller = new Controller<string>({
      name: 'c',
      clock,
      reconciler: async (key) => {
        if (key === 'slow') await clock.sleep(100);
      },
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await clock.advance(0);
    const queue = controller.queue;
    queue.add('slow');
    queue.add('next');
    queue.addAfter('later', 1000);
    await clock.advance(1);
    // 'slow' is processing, 'next' queued behind it (one worker), 'later' waiting.
    expect(['slow', 'next', 'later', 'other'].map((k) => queue.has(k))).toEqual([true, true, true, false]);
    expect([queue.length, queue.processingCount, queue.waitingCount]).toEqual([1, 1, 1]);
    await clock.advance(200);
    expect([queue.has('slow'), queue.has('next'), queue.has('later')]).toEqual([false, false, true]);
    await clock.advance(1000);
    expect(queue.has('later')).toBe(false);
    expect([queue.length, queue.processingCount, queue.waitingCount]).toEqual([0, 0, 0]);
    abort.abort();
    await run;
  });

  it('runs at most maxConcurrentReconciles reconciles at once', async () => {
    let active = 0;
    let peak = 0;
    const clock = new VirtualClock();
    const controller = new Controller<string>({
      name: 'c',
      clock,
      maxConcurrentReconciles: 3,
      reconciler: async () => {
        active++;
        peak = Math.max(peak, active);
        await clock.sleep(50);
        active--;
      },
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await clock.advance(0);
    for (let i = 0; i < 10; i++) controller.queue.add(`k${i}`);
    await clock.advance(500);
    expect(peak).toBe(3);
    expect(controller.stats().adds).toBe(10);
    abort.abort();
    await run;
  });

  describe('result classification', () => {
    async function drive(
      reconcile: (key: string, ctx: ReconcileContext, n: number) => unknown,
      ms: number,
      extra: Partial<ControllerOptions<string>> = {},
    ) {
      const calls: Call[] = [];
      const { clock, controller, abort, logger } = setup((key, ctx) => {
        calls.push({ key, at: clock.now(), failures: ctx.failures });
        return reconcile(key, ctx, calls.length) as never;
      }, extra);
      const run = controller.start(abort.signal);
      await clock.advance(0);
      controller.queue.add('k');
      await clock.advance(ms);
      abort.abort();
      await run;
      return { calls, logger, controller };
    }

    it('retries a synchronous throw with exponential backoff from 5 ms', async () => {
      const { calls } = await drive(() => {
        throw new Error('boom');
      }, 40);
      expect(calls.map((c) => c.at)).toEqual([0, 5, 15, 35]);
      expect(calls.map((c) => c.failures)).toEqual([0, 1, 2, 3]);
    });

    it('retries a rejected promise like a throw', async () => {
      const { calls } = await drive(async () => Promise.reject(new Error('no')), 16);
      expect(calls.map((c) => c.at)).toEqual([0, 5, 15]);
    });

    it('retries a non-Error throw and reports it as a NonErrorThrownError with the value as cause', async () => {
      const errors: Error[] = [];
      const { calls } = await drive(
        () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the behaviour under test
          throw 'a string';
        },
        6,
        { onError: (e) => errors.push(e) },
      );
      expect(calls).toHaveLength(2);
      expect(errors[0]).toBeInstanceOf(NonErrorThrownError);
      expect(errors[0]?.cause).toBe('a string');
    });

    it('never retries a TerminalError, even wrapped in a cause chain, and still reports it', async () => {
      const errors: Error[] = [];
      const { calls, controller } = await drive(
        () => {
          throw new Error('outer', { cause: new TerminalError('bad spec') });
        },
        10_000,
        { onError: (e) => errors.push(e) },
      );
      expect(calls).toHaveLength(1);
      expect(errors).toHaveLength(1);
      expect(controller.stats().retries).toBe(0);
    });

    it('treats a thrown RequeueAfterError anywhere in the cause chain as requeueAfter', async () => {
      const { calls } = await drive((_k, _c, n) => {
        if (n === 1) throw new Error('wrapped', { cause: new RequeueAfterError(1000, 'not ready') });
      }, 5000);
      expect(calls.map((c) => c.at)).toEqual([0, 1000]);
    });

    it('lets an error beat a requeueAfter the reconcile had decided on', async () => {
      const { calls } = await drive((_k, _c, n) => {
        const result = requeueAfter(10_000);
        if (n < 3) throw new Error('failed after deciding');
        return result;
      }, 100);
      expect(calls.map((c) => c.at)).toEqual([0, 5, 15]);
    });

    it('forgets failures on requeueAfter and requeues after exactly that delay', async () => {
      const { calls } = await drive((_k, _c, n) => {
        if (n <= 2) throw new Error('x');
        if (n === 3) return requeueAfter(500);
        return done();
      }, 2000);
      expect(calls.map((c) => [c.at, c.failures])).toEqual([
        [0, 0],
        [5, 1],
        [15, 2],
        [515, 0],
      ]);
    });

    it('backs off requeue() through the rate limiter and keeps the failure count', async () => {
      const { calls } = await drive((_k, _c, n) => (n < 4 ? requeue() : done()), 1000);
      expect(calls.map((c) => [c.at, c.failures])).toEqual([
        [0, 0],
        [5, 1],
        [15, 2],
        [35, 3],
      ]);
    });

    it('runs requeueNow() again at once without forgetting failures', async () => {
      const { calls } = await drive((_k, _c, n) => {
        if (n === 1) throw new Error('x');
        return n === 2 ? requeueNow() : done();
      }, 100);
      expect(calls.map((c) => [c.at, c.failures])).toEqual([
        [0, 0],
        [5, 1],
        [5, 1],
      ]);
    });

    it('treats returning nothing as done and an arbitrary value as a retryable invalid result', async () => {
      const ok = await drive(() => undefined, 100);
      expect(ok.calls).toHaveLength(1);
      const errors: Error[] = [];
      const bad = await drive((_k, _c, n) => (n === 1 ? { requeue: true } : done()), 100, {
        onError: (e) => errors.push(e),
      });
      expect(bad.calls).toHaveLength(2);
      expect(isConvergeError(errors[0]) && errors[0].code).toBe('CONVERGE_ERR_RECONCILE_INVALID_RESULT');
    });

    it('drops a request after maxRetries(2) with 3 calls, and a new add starts again from 0 failures', async () => {
      const calls: Call[] = [];
      const { clock, controller, abort } = setup(
        (key, ctx) => {
          calls.push({ key, at: clock.now(), failures: ctx.failures });
          throw new Error('always');
        },
        { retryPolicy: maxRetries(2) },
      );
      const run = controller.start(abort.signal);
      await clock.advance(0);
      controller.queue.add('k');
      await clock.advance(100_000);
      expect(calls.map((c) => c.failures)).toEqual([0, 1, 2]);
      controller.queue.add('k');
      await clock.advance(1);
      expect(calls.map((c) => c.failures)).toEqual([0, 1, 2, 0]);
      abort.abort();
      await run;
    });

    it("makes exactly 7 calls with grafana's exponential policy (5 s, 5), retrying after 5, 10, 20, 40, 80 and 160 s", async () => {
      const { calls } = await drive(
        () => {
          throw new Error('always');
        },
        1_000_000,
        { retryPolicy: exponentialBackoffRetryPolicy(5000, 5) },
      );
      expect(calls.map((c) => c.at)).toEqual([0, 5000, 15_000, 35_000, 75_000, 155_000, 315_000]);
    });

    it("kro's retry policy: NotFound (also as a cause) is a success with no onError and no retry; other errors run 1 + max times", async () => {
      const errors: Error[] = [];
      const results: string[] = [];
      const gone = await drive(
        (_k, _c, n) => {
          if (n === 1) throw new NotFoundError('configmaps "x" not found');
          throw new Error('wrapped', { cause: new NotFoundError('gone') });
        },
        100_000,
        {
          retryPolicy: kroRetryPolicy(3),
          onError: (e) => errors.push(e),
          metrics: { onReconcile: (_n, result) => results.push(result) },
        },
      );
      expect(gone.calls.map((c) => [c.at, c.failures])).toEqual([[0, 0]]);
      expect(errors).toEqual([]);
      expect(results).toEqual(['success']);
      const failing = await drive(
        () => {
          throw new ConflictError('conflict');
        },
        100_000,
        { retryPolicy: kroRetryPolicy(3), onError: (e) => errors.push(e) },
      );
      expect(failing.calls.map((c) => c.failures)).toEqual([0, 1, 2, 3]);
      expect(errors).toHaveLength(4);
    });

    it('calls onError for every failed attempt, retries included', async () => {
      const errors: Error[] = [];
      await drive(
        () => {
          throw new Error('e');
        },
        16,
        { onError: (e) => errors.push(e) },
      );
      expect(errors).toHaveLength(3);
    });
  });

  it('aborts the signal of a reconcile that runs past reconcileTimeoutMs and retries it', async () => {
    const reasons: unknown[] = [];
    const { clock, controller, abort } = setup(
      (_key, { signal }) =>
        new Promise((resolve, reject) => {
          if (reasons.length > 0) return resolve(done());
          signal.addEventListener('abort', () => {
            reasons.push(signal.reason);
            reject(signal.reason as Error);
          });
        }),
      { reconcileTimeoutMs: 1000 },
    );
    const run = controller.start(abort.signal);
    await clock.advance(0);
    controller.queue.add('k');
    await clock.advance(999);
    expect(reasons).toHaveLength(0);
    await clock.advance(1);
    expect(reasons[0]).toBeInstanceOf(ReconcileTimeoutError);
    await clock.advance(5);
    expect(controller.stats().running).toBe(0);
    abort.abort();
    await run;
  });

  it('does not let a reconcile that never settles stall its worker: it is abandoned and retried', async () => {
    const calls: Array<[string, number]> = [];
    const { clock, controller, abort, logger } = setup(
      (key) => {
        calls.push([key, clock.now()]);
        if (key === 'hang' && calls.filter(([k]) => k === 'hang').length === 1) return new Promise(() => {});
        return done();
      },
      { reconcileTimeoutMs: 1000, abandonGraceMs: 500, shutdownTimeoutMs: 100 },
    );
    const run = controller.start(abort.signal);
    await clock.advance(0);
    controller.queue.add('hang');
    controller.queue.add('next');
    await clock.advance(1499);
    expect(calls).toEqual([['hang', 0]]);
    await clock.advance(1);
    expect(calls).toEqual([
      ['hang', 0],
      ['next', 1500],
    ]);
    await clock.advance(5);
    expect(calls[2]).toEqual(['hang', 1505]);
    expect(logger.records.some((r) => r.message === 'Reconcile abandoned')).toBe(true);
    abort.abort();
    const result = run.then(
      () => undefined,
      (e: unknown) => e,
    );
    await clock.advance(100);
    const error = await result;
    expect(error).toBeInstanceOf(ShutdownTimeoutError);
    expect((error as ShutdownTimeoutError).running).toEqual(['hang']);
  });

  describe('shutdown', () => {
    it('does not start queued requests, aborts in-flight reconciles at once and waits for them', async () => {
      const started: string[] = [];
      let sawAbortAt = -1;
      const { clock, controller, abort } = setup(async (key, { signal }) => {
        started.push(key);
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            sawAbortAt = clock.now();
            void clock.sleep(200).then(resolve);
          }),
        );
      });
      const run = controller.start(abort.signal);
      await clock.advance(0);
      controller.queue.add('a');
      controller.queue.add('b');
      await clock.advance(10);
      let finished = false;
      void run.then(() => {
        finished = true;
      });
      abort.abort();
      await clock.advance(0);
      expect(sawAbortAt).toBe(10);
      await clock.advance(199);
      expect(finished).toBe(false);
      await clock.advance(1);
      expect(finished).toBe(true);
      expect(started).toEqual(['a']);
      expect(clock.pendingTimers).toBe(0);
    });

    it('rejects with a ShutdownTimeoutError naming the requests still running after shutdownTimeoutMs', async () => {
      const { clock, controller, abort } = setup(() => new Promise(() => {}), {
        shutdownTimeoutMs: 1000,
        abandonGraceMs: 60_000,
        reconcileTimeoutMs: 0,
      });
      const run = controller.start(abort.signal).catch((e: unknown) => e);
      await clock.advance(0);
      controller.queue.add('stuck');
      await clock.advance(1);
      abort.abort();
      await clock.advance(1000);
      const error = await run;
      expect(error).toBeInstanceOf(ShutdownTimeoutError);
      expect((error as ShutdownTimeoutError).running).toEqual(['stuck']);
    });

    it('does not wait at all when shutdownTimeoutMs is 0', async () => {
      const { clock, controller, abort } = setup(() => new Promise(() => {}), { shutdownTimeoutMs: 0 });
      const run = controller.start(abort.signal);
      await clock.advance(0);
      controller.queue.add('stuck');
      await clock.advance(1);
      abort.abort();
      await expect(run).resolves.toBeUndefined();
    });

    it('ignores and counts adds after shutdown instead of throwing', async () => {
      const { clock, controller, abort } = setup(() => done());
      const run = controller.start(abort.signal);
      await clock.advance(0);
      abort.abort();
      await run;
      expect(() => controller.queue.add('late')).not.toThrow();
      controller.queue.addAfter('late', 10);
      expect(controller.stats().droppedAfterShutdown).toBe(2);
    });

    it('stop() stops a running controller like its signal', async () => {
      const { clock, controller, abort } = setup(() => done());
      const run = controller.start(abort.signal);
      await clock.advance(0);
      controller.stop();
      await run;
      expect(controller.state).toBe('stopped');
    });
  });

  describe('lifecycle errors', () => {
    it('rejects a second start with AlreadyStartedError', async () => {
      const { clock, controller, abort } = setup(() => done());
      const run = controller.start(abort.signal);
      await expect(controller.start(abort.signal)).rejects.toBeInstanceOf(AlreadyStartedError);
      await clock.advance(0);
      abort.abort();
      await run;
      await expect(controller.start(new AbortController().signal)).rejects.toBeInstanceOf(
        AlreadyStartedError,
      );
    });

    it('fails with SourceSyncError when a source does not sync within syncTimeoutMs, without starting workers', async () => {
      const m = manualSource();
      const calls: string[] = [];
      const { clock, controller, abort } = setup((k) => void calls.push(k), {
        sources: [m.source],
        syncTimeoutMs: 5000,
      });
      const run = controller.start(abort.signal).catch((e: unknown) => e);
      await clock.advance(0);
      m.push('x');
      await clock.advance(5000);
      const error = await run;
      expect(error).toBeInstanceOf(SourceSyncError);
      expect(calls).toEqual([]);
    });

    it('with syncTimeoutMs: Infinity waits for a source that is down at start for as long as it takes, saying every 30 s which it waits for', async () => {
      const poller = manualSource('vms');
      const ready = manualSource('config');
      const calls: string[] = [];
      const { clock, controller, abort, logger } = setup((k) => void calls.push(k), {
        sources: [poller.source, ready.source],
        syncTimeoutMs: Number.POSITIVE_INFINITY,
      });
      const run = controller.start(abort.signal);
      await clock.advance(0);
      ready.sync();
      poller.push('x');
      await clock.advance(0);
      expect(controller.syncStatus()).toEqual({ synced: false, waitingFor: ['vms'] });
      // An hour of virtual time: no failure, a line every 30 s, no reconcile before the sync.
      await clock.advance(3_600_000);
      expect(controller.state).toBe('syncing');
      expect(calls).toEqual([]);
      const waits = logger.records.filter((r) => r.message === 'Sources not synced yet; still waiting');
      expect(waits).toHaveLength(120);
      expect(waits[0]?.fields).toMatchObject({ waitingFor: ['vms'], waitedMs: 30_000 });
      expect(waits[0]?.fields).not.toHaveProperty('syncTimeoutMs');
      expect(waits[0]?.level).toBe('warn');
      poller.sync();
      await clock.advance(1);
      expect(controller.state).toBe('running');
      expect(controller.syncStatus()).toEqual({ synced: true, waitingFor: [] });
      expect(calls).toEqual(['x']);
      // No line after the sync, and no timer left behind by the progress reports.
      await clock.advance(60_000);
      expect(
        logger.records.filter((r) => r.message === 'Sources not synced yet; still waiting'),
      ).toHaveLength(120);
      abort.abort();
      await run;
    });

    it('with syncTimeoutMs 90 000, says at 30 s and 60 s which sources it waits for, then fails naming them', async () => {
      const m = manualSource('poller');
      const { clock, controller, abort, logger } = setup(() => done(), {
        sources: [m.source],
        syncTimeoutMs: 90_000,
      });
      const run = controller.start(abort.signal).catch((e: unknown) => e);
      await clock.advance(90_000);
      const error = (await run) as SourceSyncError;
      expect(error).toBeInstanceOf(SourceSyncError);
      expect(error.source).toBe('poller');
      const waits = logger.records.filter((r) => r.message === 'Sources not synced yet; still waiting');
      expect(waits.map((r) => r.fields)).toEqual([
        expect.objectContaining({ waitingFor: ['poller'], waitedMs: 30_000, syncTimeoutMs: 90_000 }),
        expect.objectContaining({ waitingFor: ['poller'], waitedMs: 60_000, syncTimeoutMs: 90_000 }),
      ]);
    });

    it('fails with SourceSyncError when a source rejects its sync', async () => {
      const m = manualSource('bad');
      const { clock, controller, abort } = setup(() => done(), { sources: [m.source] });
      const run = controller.start(abort.signal).catch((e: unknown) => e);
      await clock.advance(0);
      m.failSync(new Error('list failed'));
      await clock.advance(0);
      const error = (await run) as SourceSyncError;
      expect(error).toBeInstanceOf(SourceSyncError);
      expect(error.source).toBe('bad');
      expect((error.cause as Error).message).toBe('list failed');
    });

    it('stops with SourceFailedError when a running source fails', async () => {
      let failNow: (e: Error) => void = () => {};
      const source: Source<string> = {
        name: 'flaky',
        start: () =>
          new Promise((_, reject) => {
            failNow = reject;
          }),
      };
      const { clock, controller, abort } = setup(() => done(), { sources: [source] });
      const run = controller.start(abort.signal).catch((e: unknown) => e);
      await clock.advance(0);
      expect(controller.state).toBe('running');
      failNow(new Error('watch broke'));
      await clock.advance(0);
      expect(await run).toBeInstanceOf(SourceFailedError);
    });

    it('starts a source added with watch() while running and resolves once it synced', async () => {
      const calls: string[] = [];
      const { clock, controller, abort } = setup((k) => void calls.push(k));
      const run = controller.start(abort.signal);
      await clock.advance(0);
      const m = manualSource('late');
      let synced = false;
      void controller.watch(m.source).then(() => {
        synced = true;
      });
      await clock.advance(0);
      m.push('from-late');
      await clock.advance(0);
      expect(synced).toBe(false);
      m.sync();
      await clock.advance(0);
      expect(synced).toBe(true);
      expect(calls).toEqual(['from-late']);
      abort.abort();
      await run;
    });
  });

  describe('bad options', () => {
    const reconciler = () => done();
    it.each([
      ['maxConcurrentReconciles', { maxConcurrentReconciles: -1 }],
      ['maxConcurrentReconciles', { maxConcurrentReconciles: 0 }],
      ['maxConcurrentReconciles', { maxConcurrentReconciles: 1.5 }],
      ['reconcileTimeoutMs', { reconcileTimeoutMs: Number.NaN }],
      ['shutdownTimeoutMs', { shutdownTimeoutMs: -5 }],
      ['abandonGraceMs', { abandonGraceMs: Number.POSITIVE_INFINITY }],
      ['syncTimeoutMs', { syncTimeoutMs: Number.NaN }],
      ['syncTimeoutMs', { syncTimeoutMs: -1 }],
      ['syncTimeoutMs', { syncTimeoutMs: Number.NEGATIVE_INFINITY }],
      ['name', { name: '' }],
      ['reconciler', { reconciler: 42 as never }],
    ])('throws an OptionsError naming %s', (field, extra) => {
      let thrown: unknown;
      try {
        new Controller<string>({ name: 'x', reconciler, ...(extra as Partial<ControllerOptions<string>>) });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(OptionsError);
      expect((thrown as OptionsError).field).toBe(field);
    });
  });
});
