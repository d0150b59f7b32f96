import { done, maxRetries, requeue, requeueAfter, TerminalError } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { parseExposition, sampleValue } from './exposition-test-support.ts';
import { Metrics } from './metrics.ts';
import { Names } from './names.ts';
import { pushController, startServer } from './test-harness.ts';

const KIND: Record<string, string> = { 'w-ok': 'apps/v1/deployments' };

const KEYS = ['ok', 'err-once', 'requeue', 'later', 'panic', 'exhaust', 'timeout', 'terminal'].map(
  (k) => `w-${k}`,
);

describe('a scripted run, then a scrape of /metrics', () => {
  it('counts successes, errors, requeues, a panic-like throw, a timeout, a terminal error and exhausted retries', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const seen = new Map<string, number>();
    const { controller, push } = pushController(clock, {
      name: 'widgets',
      maxConcurrentReconciles: 2,
      reconcileTimeoutMs: 1_000,
      abandonGraceMs: 100,
      retryPolicy: maxRetries(1),
      kindOf: (key) => KIND[key] ?? 'example.com/v1/widgets',
      reconciler: async (key, { signal }) => {
        const run = (seen.get(key) ?? 0) + 1;
        seen.set(key, run);
        switch (key) {
          case 'w-err-once':
            if (run === 1) throw new Error('transient');
            return done();
          case 'w-requeue':
            return run === 1 ? requeue() : done();
          case 'w-later':
            return run === 1 ? requeueAfter(1_000) : done();
          case 'w-panic':
            // eslint-disable-next-line @typescript-eslint/only-throw-error -- a panic-like throw of a non-Error
            throw 'not an error';
          case 'w-exhaust':
            throw new Error('always');
          case 'w-timeout':
            if (run === 1) {
              await new Promise((_, reject) =>
                signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
              );
            }
            return done();
          case 'w-terminal':
            throw new TerminalError('spec.size must be positive');
          default:
            return done();
        }
      },
    });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(controller);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    for (const key of KEYS) push(key);
    await clock.advance(5_000);

    const http = await startServer({ metrics, clock });
    const response = await http.get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parseExposition(await response.text());
    await http.stop();
    abort.abort();
    await running;

    const c = { controller: 'widgets' };
    const q = { name: 'widgets', controller: 'widgets' };
    expect(families.get(Names.reconcileTotal)?.type).toBe('counter');
    expect(families.get(Names.reconcileTime)?.type).toBe('histogram');
    expect(families.get(Names.depth)?.type).toBe('gauge');
    expect(families.get(Names.reconcileTotal)?.help).toBe('Total number of reconciliations per controller');
    expect(sampleValue(families, Names.reconcileTotal, { ...c, result: 'success' })).toBe(5);
    expect(sampleValue(families, Names.reconcileTotal, { ...c, result: 'error' })).toBe(7);
    expect(sampleValue(families, Names.reconcileTotal, { ...c, result: 'requeue' })).toBe(1);
    expect(sampleValue(families, Names.reconcileTotal, { ...c, result: 'requeue_after' })).toBe(1);
    expect(sampleValue(families, Names.reconcileErrors, c)).toBe(7);
    expect(sampleValue(families, Names.terminalErrors, c)).toBe(1);
    expect(sampleValue(families, Names.panics, c)).toBe(2);
    expect(sampleValue(families, Names.timeouts, c)).toBe(1);
    expect(sampleValue(families, Names.dropped, c)).toBe(2);
    expect(sampleValue(families, `${Names.reconcileTime}_count`, c)).toBe(14);
    expect(sampleValue(families, `${Names.reconcileTime}_bucket`, { ...c, le: '0.005' })).toBe(13);
    expect(sampleValue(families, Names.maxConcurrent, c)).toBe(2);
    expect(sampleValue(families, Names.activeWorkers, c)).toBe(0);
    expect(sampleValue(families, Names.adds, q)).toBe(14);
    expect(sampleValue(families, Names.retries, q)).toBe(5);
    expect(sampleValue(families, Names.depth, { ...q, priority: '0' })).toBe(0);
    expect(sampleValue(families, `${Names.queueDuration}_count`, q)).toBe(14);
    expect(sampleValue(families, `${Names.workDuration}_count`, q)).toBe(14);
    expect(sampleValue(families, Names.unfinished, q)).toBe(0);
    expect(sampleValue(families, Names.longestRunning, q)).toBe(0);
    expect(sampleValue(families, `${Names.eventLatency}_count`, q)).toBe(8);
    expect(sampleValue(families, Names.causes, { ...c, type: 'retry' })).toBe(4);
    expect(sampleValue(families, Names.causes, { ...c, type: 'requeue' })).toBe(1);
    expect(sampleValue(families, Names.causes, { ...c, type: 'requeue-after' })).toBe(1);
    expect(
      sampleValue(families, Names.kindReconcileTotal, {
        ...c,
        kind: 'apps/v1/deployments',
        result: 'success',
      }),
    ).toBe(1);
    expect(
      sampleValue(families, Names.kindReconcileTotal, {
        ...c,
        kind: 'example.com/v1/widgets',
        result: 'success',
      }),
    ).toBe(4);
    // No object names in labels: every label value is from a closed set or names a controller or kind.
    const names = new Set(KEYS);
    for (const family of families.values()) {
      for (const sample of family.samples)
        for (const value of Object.values(sample.labels)) expect(names.has(value)).toBe(false);
    }
  });
});
