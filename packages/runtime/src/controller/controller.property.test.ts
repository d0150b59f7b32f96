import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { Controller } from './controller.ts';

type LogEvent = { type: 'add' | 'start' | 'end'; key: string };

const scenario = fc.record({
  workers: fc.integer({ min: 1, max: 4 }),
  adds: fc.array(
    fc.record({ at: fc.integer({ min: 0, max: 2000 }), key: fc.constantFrom('a', 'b', 'c', 'd', 'e') }),
    {
      minLength: 1,
      maxLength: 60,
    },
  ),
  durations: fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 20 }),
  partitioned: fc.boolean(),
});

describe('Controller properties', () => {
  it('never runs two reconciles of one key at once, reconciles every key after its last add, and never more often than its add windows', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ workers, adds, durations, partitioned }) => {
        const clock = new VirtualClock();
        const log: LogEvent[] = [];
        const active = new Set<string>();
        let overlap = false;
        let n = 0;
        const controller = new Controller<string>({
          name: 'prop',
          clock,
          maxConcurrentReconciles: workers,
          ...(partitioned ? { partitionOf: (k: string) => (k < 'c' ? 'p1' : 'p2') } : {}),
          reconciler: async (key) => {
            if (active.has(key)) overlap = true;
            active.add(key);
            log.push({ type: 'start', key });
            const d = durations[n++ % durations.length] ?? 0;
            if (d > 0) await clock.sleep(d);
            active.delete(key);
            log.push({ type: 'end', key });
          },
        });
        const abort = new AbortController();
        const run = controller.start(abort.signal);
        for (const { at, key } of adds) {
          clock.setTimer(() => {
            log.push({ type: 'add', key });
            controller.queue.add(key);
          }, at);
        }
        await clock.advance(2000 + 300 * adds.length + 1000);
        abort.abort();
        await run;

        expect(overlap).toBe(false);
        for (const key of new Set(adds.map((a) => a.key))) {
          const events = log.filter((e) => e.key === key && e.type !== 'end');
          // Windows: maximal runs of adds between two reconcile starts.
          let windows = 0;
          let pending = false;
          let starts = 0;
          for (const e of events) {
            if (e.type === 'add') {
              if (!pending) windows++;
              pending = true;
            } else {
              expect(pending).toBe(true); // a start always consumes at least one add
              pending = false;
              starts++;
            }
          }
          expect(pending).toBe(false); // no lost update: a start follows the last add
          expect(starts).toBeLessThanOrEqual(windows);
          expect(starts).toBeGreaterThanOrEqual(1);
        }
        expect(clock.pendingTimers).toBe(0);
      }),
      { numRuns: 150 },
    );
  });
});
