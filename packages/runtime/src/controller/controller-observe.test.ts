import { describe, expect, it } from 'vitest';
import { flushMicrotasks, VirtualClock } from '../clock/virtual-clock.ts';
import { done, requeueAfter, TerminalError } from '../reconcile/index.ts';
import type { Source } from '../source/source.ts';
import { ExponentialRateLimiter, maxRetries } from '../workqueue/index.ts';
import { Controller } from './controller.ts';
import type { ReconcileErrorDetail } from './options.ts';

/** A source that syncs at once and lets the test push keys with an event cause. */
function pushSource() {
  let push: (key: string) => void = () => {};
  const source: Source<string> = {
    name: 'push',
    start(signal, queue) {
      push = (key) => queue.add(key, { cause: { type: 'modified', source: 'push' } });
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  return { source, push: (key: string) => push(key) };
}

describe('Controller.observe and inspect', () => {
  it('hooks added after construction see results, errors with their detail, timeouts and event latency', async () => {
    const clock = new VirtualClock();
    const { source, push } = pushSource();
    const controller = new Controller<string>({
      name: 'widgets',
      clock,
      sources: [source],
      reconcileTimeoutMs: 1_000,
      abandonGraceMs: 100,
      retryPolicy: maxRetries(0),
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10 }),
      reconciler: async (key, { signal }) => {
        if (key === 'terminal') throw new TerminalError('bad spec');
        if (key === 'slow') {
          await new Promise((_, reject) =>
            signal.addEventListener('abort', () => reject(signal.reason as Error)),
          );
        }
        if (key === 'fail') throw new Error('boom');
        return key === 'later' ? requeueAfter(5_000) : done();
      },
    });
    const results: string[] = [];
    const errors: [string, ReconcileErrorDetail][] = [];
    const latencies: number[] = [];
    controller.observe({
      metrics: {
        onReconcile: (_, result) => results.push(result),
        onReconcileError: (_, error, detail) => errors.push([error.message, detail]),
      },
      queueMetrics: { onEventLatency: (_, ms) => latencies.push(ms) },
    });
    expect(controller.maxConcurrentReconciles).toBe(1);
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await flushMicrotasks();
    for (const key of ['ok', 'terminal', 'fail', 'slow', 'later']) push(key);
    await clock.advance(2_000);
    expect(results).toEqual(['success', 'terminal', 'dropped', 'dropped', 'requeue_after']);
    expect(errors.map(([m, d]) => [m, d.result, d.timedOut])).toEqual([
      ['bad spec', 'terminal', false],
      ['boom', 'dropped', false],
      ['reconcile timed out after 1000ms', 'dropped', true],
    ]);
    expect(latencies).toEqual([0, 0, 0, 0, 1_000]);
    const [later] = controller.inspect();
    expect(later).toMatchObject({ id: 'later', state: 'waiting', waitingUntil: 6_000 });
    abort.abort();
    await run;
  });

  it('a retry scheduled by a failure is cancelled when an event runs the key early and it succeeds (its object was deleted): no leftover backoff entry, no second run', async () => {
    const clock = new VirtualClock();
    const { source, push } = pushSource();
    const objects = new Set(['default/web']);
    const runs: string[] = [];
    const controller = new Controller<string>({
      name: 'widgets',
      clock,
      sources: [source],
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10_000 }),
      reconciler: async (key) => {
        runs.push(objects.has(key) ? 'present' : 'gone');
        if (objects.has(key)) throw new Error('upstream unavailable');
        return done();
      },
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await flushMicrotasks();
    push('default/web');
    await clock.advance(0);
    expect(controller.inspect()[0]).toMatchObject({ state: 'backoff', requeues: 1, waitingUntil: 10_000 });
    // The object is deleted: its event runs the key at once, long before the retry is due.
    objects.delete('default/web');
    push('default/web');
    await clock.advance(1_000);
    expect(runs).toEqual(['present', 'gone']);
    expect(controller.inspect()).toEqual([]);
    await clock.advance(60_000);
    expect(runs).toEqual(['present', 'gone']);
    abort.abort();
    await run;
  });

  it('a key whose early run fails again keeps one retry: the earliest deadline, with both attempts counted', async () => {
    const clock = new VirtualClock();
    const { source, push } = pushSource();
    const runs: number[] = [];
    const controller = new Controller<string>({
      name: 'widgets',
      clock,
      sources: [source],
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10_000 }),
      reconciler: async () => {
        runs.push(clock.now());
        throw new Error('still failing');
      },
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await flushMicrotasks();
    push('default/web');
    await clock.advance(1_000);
    push('default/web');
    await clock.advance(0);
    // Both runs failed: the earlier retry (due at 10 000) stays, the earliest deadline wins.
    expect(runs).toEqual([0, 1_000]);
    expect(controller.inspect()[0]).toMatchObject({ state: 'backoff', requeues: 2, waitingUntil: 10_000 });
    abort.abort();
    await run;
  });

  it('shows a failing key in backoff with its attempts, last error and next retry time, until it succeeds', async () => {
    const clock = new VirtualClock();
    const { source, push } = pushSource();
    let failing = true;
    const controller = new Controller<string>({
      name: 'widgets',
      clock,
      sources: [source],
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 100 }),
      reconciler: async () => {
        if (failing) throw new Error('upstream unavailable');
        return done();
      },
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await flushMicrotasks();
    push('default/web');
    await clock.advance(0);
    await clock.advance(100);
    const [info] = controller.inspect();
    expect(info).toMatchObject({
      id: 'default/web',
      state: 'backoff',
      requeues: 2,
      waitingUntil: 300,
      lastErrorAt: 100,
    });
    expect(info?.lastError?.message).toBe('upstream unavailable');
    expect(info?.causes.causes.map((c) => c.type)).toEqual(['modified', 'retry']);
    failing = false;
    await clock.advance(200);
    expect(controller.inspect()).toEqual([]);
    push('default/web');
    failing = true;
    await clock.advance(0);
    expect(controller.inspect()[0]?.requeues).toBe(1);
    abort.abort();
    await run;
    expect(controller.inspect()).toEqual([]);
  });

  it('names the running reconcile of a running key', async () => {
    const clock = new VirtualClock();
    const { source, push } = pushSource();
    let release: () => void = () => {};
    const controller = new Controller<string>({
      name: 'widgets',
      clock,
      sources: [source],
      reconciler: () => new Promise<void>((resolve) => (release = resolve)),
    });
    const abort = new AbortController();
    const run = controller.start(abort.signal);
    await flushMicrotasks();
    push('k');
    await flushMicrotasks();
    expect(controller.inspect()).toMatchObject([{ id: 'k', state: 'running', reconcileId: 'widgets-1' }]);
    expect(controller.queueGauges()).toEqual({
      unfinishedWorkMs: 0,
      longestRunningMs: 0,
      depthByPriority: [],
    });
    await clock.advance(50);
    expect(controller.queueGauges().longestRunningMs).toBe(50);
    release();
    abort.abort();
    await run;
    expect(() => controller.observe(null as never)).toThrow(/hooks/);
  });
});
