import { AsyncLocalStorage } from 'node:async_hooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flushMicrotasks, VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import { done, requeueAfter, TerminalError } from '../reconcile/index.ts';
import type { Source } from '../source/source.ts';
import { ExponentialRateLimiter, maxRetries } from '../workqueue/index.ts';
import { Controller } from './controller.ts';
import type { ReconcileInfo, ReconcileInterceptor, ReconcileSummary } from './intercept.ts';

type Key = { namespace: string; name: string };

/** A controller of object keys whose source syncs at once; `push(name)` adds `ns/name` with a `modified` cause. */
function pushController(
  clock: VirtualClock,
  reconcile: (key: Key) => unknown,
  options: { interceptor?: ReconcileInterceptor } = {},
) {
  let push: (name: string) => void = () => {};
  const source: Source<Key> = {
    name: 'push',
    start(signal, queue) {
      push = (name) =>
        queue.add(
          { namespace: 'ns', name },
          {
            cause: {
              type: 'modified',
              source: 'push',
              object: { kind: 'Widget', name, resourceVersion: '9' },
            },
          },
        );
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  const controller = new Controller<Key>({
    name: 'widgets',
    clock,
    sources: [source],
    retryPolicy: maxRetries(1),
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10 }),
    kindOf: () => 'example.com/v1/widgets',
    reconciler: (key) => reconcile(key) as ReturnType<typeof done>,
    ...options,
  });
  return { controller, push: (name: string) => push(name) };
}

describe('a reconcile interceptor', () => {
  it('is told who runs and why (causes stamped with their arrival), and gets each run’s summary', async () => {
    const clock = new VirtualClock({ startMs: 1_000 });
    const seen: [ReconcileInfo, ReconcileSummary][] = [];
    const { controller, push } = pushController(clock, ({ name }) => {
      if (name === 'fail') throw new Error('boom');
      if (name === 'terminal') throw new TerminalError('bad spec');
      return name === 'later' ? requeueAfter(5_000) : done();
    });
    controller.observe({
      interceptor: {
        aroundReconcile: async (info, run) => {
          seen.push([info, await run()]);
        },
      },
    });
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await flushMicrotasks();
    await clock.advance(3);
    for (const name of ['ok', 'fail', 'later', 'terminal']) push(name);
    await clock.advance(100);
    const [first] = seen;
    expect(first?.[0]).toEqual({
      controller: 'widgets',
      reconcileId: 'widgets-1',
      key: 'ns/ok',
      request: { namespace: 'ns', name: 'ok' },
      namespace: 'ns',
      name: 'ok',
      kind: 'example.com/v1/widgets',
      failures: 0,
      causes: {
        causes: [
          {
            type: 'modified',
            source: 'push',
            object: { kind: 'Widget', name: 'ok', resourceVersion: '9' },
            at: 1_003,
          },
        ],
        dropped: 0,
      },
    });
    const byName = (name: string, n = 0) => seen.filter(([info]) => info.name === name)[n]?.[1];
    expect(byName('ok')).toEqual({ result: 'success', durationMs: 0, timedOut: false, abandoned: false });
    expect(byName('fail')).toMatchObject({ result: 'error', error: { message: 'boom' } });
    // The retry: its failures, and the failed run's cause kept with a retry cause after it.
    const retry = seen.filter(([info]) => info.name === 'fail')[1]?.[0];
    expect(retry?.failures).toBe(1);
    expect(retry?.causes.causes.map((c) => [c.type, c.at])).toEqual([
      ['modified', 1_003],
      ['retry', 1_003],
    ]);
    expect(byName('fail', 1)).toMatchObject({ result: 'dropped', error: { message: 'boom' } });
    expect(byName('later')).toEqual({
      result: 'requeue_after',
      durationMs: 0,
      requeueAfterMs: 5_000,
      timedOut: false,
      abandoned: false,
    });
    expect(byName('terminal')).toMatchObject({ result: 'terminal', error: { message: 'bad spec' } });
    abort.abort();
    await running;
  });

  it('runs the reconciler inside the interceptor’s context, nested in the order added', async () => {
    const clock = new VirtualClock();
    const storage = new AsyncLocalStorage<string[]>();
    const inside: (string[] | undefined)[] = [];
    const { controller, push } = pushController(
      clock,
      async () => {
        inside.push(storage.getStore());
        await clock.sleep(1);
        inside.push(storage.getStore());
      },
      {
        interceptor: { aroundReconcile: (info, run) => storage.run([info.reconcileId], run) },
      },
    );
    controller.observe({
      interceptor: {
        aroundReconcile: (_, run) => storage.run([...(storage.getStore() ?? []), 'inner'], run),
      },
    });
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await flushMicrotasks();
    push('a');
    await clock.advance(5);
    expect(inside).toEqual([
      ['widgets-1', 'inner'],
      ['widgets-1', 'inner'],
    ]);
    abort.abort();
    await running;
  });

  it('cannot break a controller: a hook that throws, rejects, skips or repeats run still gets one run', async () => {
    const misbehaving: ReconcileInterceptor['aroundReconcile'][] = [
      () => {
        throw new Error('sync throw');
      },
      () => Promise.reject(new Error('rejected')),
      async (_, run) => {
        await run();
        throw new Error('after run');
      },
      async () => undefined,
      async (_, run) => {
        await Promise.all([run(), run()]);
        return run();
      },
      () => 'not a promise' as never,
    ];
    for (const aroundReconcile of misbehaving) {
      const clock = new VirtualClock();
      const runs: string[] = [];
      const { controller, push } = pushController(
        clock,
        ({ name }) => {
          runs.push(name);
          if (name === 'fail' && runs.length === 2) throw new Error('once');
        },
        { interceptor: { aroundReconcile } },
      );
      const abort = new AbortController();
      const running = controller.start(abort.signal);
      await flushMicrotasks();
      push('a');
      push('fail');
      await clock.advance(100);
      expect(runs).toEqual(['a', 'fail', 'fail']);
      expect(controller.inspect()).toEqual([]);
      abort.abort();
      await running;
    }
  });

  it('is checked when added, and causes are not stamped without one', async () => {
    const clock = new VirtualClock();
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ aroundReconcile: fc.anything() })), (interceptor) => {
        fc.pre(
          interceptor !== undefined &&
            typeof (interceptor as { aroundReconcile?: unknown } | null)?.aroundReconcile !== 'function',
        );
        const { controller } = pushController(clock, () => done());
        expect(() => controller.observe({ interceptor: interceptor as ReconcileInterceptor })).toThrow(
          OptionsError,
        );
        expect(() => pushController(clock, () => done(), { interceptor: interceptor as never })).toThrow(
          OptionsError,
        );
      }),
    );
    const causes: unknown[] = [];
    const { controller, push } = pushController(clock, () => done());
    controller.observe({ metrics: { onReconcile: (_, __, ___, ____, set) => causes.push(set?.causes[0]) } });
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await flushMicrotasks();
    push('a');
    await clock.advance(1);
    expect(causes).toEqual([
      { type: 'modified', source: 'push', object: { kind: 'Widget', name: 'a', resourceVersion: '9' } },
    ]);
    abort.abort();
    await running;
  });
});
