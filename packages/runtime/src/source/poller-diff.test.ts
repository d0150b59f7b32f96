import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { ObjectEvent } from '../event/index.ts';
import { Poller } from './poller.ts';

interface Item {
  readonly id: string;
  readonly v: number;
}

const itemArb = fc.record({
  id: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  v: fc.integer({ min: 0, max: 2 }),
});
/** A poll result: a failure, or a list that may contain duplicate keys (which must fail too). */
const stepArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant('fail' as const) },
  { weight: 4, arbitrary: fc.array(itemArb, { maxLength: 6 }) },
);

function hasDuplicates(items: readonly Item[]): boolean {
  return new Set(items.map((i) => i.id)).size !== items.length;
}

/** Applies events to a map, checking each one is consistent with what the map holds. */
function apply(view: Map<string, Item>, event: ObjectEvent<Item>): void {
  const id = event.object.id;
  switch (event.type) {
    case 'create':
      expect(view.has(id)).toBe(false);
      view.set(id, event.object);
      return;
    case 'update':
      expect(view.get(id)).toBe(event.oldObject);
      view.set(id, event.object);
      return;
    case 'delete':
      expect(view.get(id)).toBe(event.object);
      view.delete(id);
      return;
    case 'generic':
      throw new Error('a poller never emits generic events');
  }
}

describe('Poller diff', () => {
  it('for any sequence of list results, the events applied to a map reproduce the last successful list', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        async (steps, resync) => {
          const clock = new VirtualClock();
          let call = 0;
          const poller = new Poller<Item>({
            list: async () => {
              const step = steps[call++];
              if (step === undefined || step === 'fail') throw new Error('list failed');
              return step.map((item) => ({ ...item }));
            },
            keyOf: (item) => item.id,
            intervalMs: 1000,
            jitterFactor: 0,
            errorBackoffMs: 1000,
            maxErrorBackoffMs: 1000,
            resync,
            clock,
          });
          const view = new Map<string, Item>();
          poller.subscribe((event) => apply(view, event));
          const stop = new AbortController();
          const run = poller.start(stop.signal);
          await clock.advance(1000 * (steps.length - 1));
          stop.abort();
          await run;

          expect(call).toBe(steps.length);
          const successes = steps.filter((s) => s !== 'fail').filter((s) => !hasDuplicates(s));
          const last = successes.at(-1) ?? [];
          expect(new Map([...view].map(([k, v]) => [k, { ...v }]))).toEqual(
            new Map(last.map((i) => [i.id, i])),
          );
          expect(poller.list()).toEqual(expect.arrayContaining(last));
          expect(poller.hasSynced()).toBe(successes.length > 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
