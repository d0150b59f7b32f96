import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../backend/index.ts';
import { done, requeueAfter } from '../reconcile/index.ts';
import { settle } from '../testing/index.ts';
import { label, object, setup, widgetKind } from './test-support.ts';
import type { KindRequest } from './types.ts';

const KINDS = [widgetKind('a'), widgetKind('b'), widgetKind('c')];
const NAMES = ['x', 'y', 'z'];
const kindAt = (i: number): ResourceType => KINDS[i] ?? widgetKind('a');

type Op =
  | { readonly op: 'serve'; readonly kind: number }
  | { readonly op: 'stop'; readonly kind: number }
  | { readonly op: 'write'; readonly kind: number; readonly name: number }
  | { readonly op: 'advance'; readonly ms: number };

type Outcome = { readonly after: number; readonly result: 'done' | 'error' | 'requeueAfter' };

const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('serve' as const), kind: fc.nat(2) }),
    fc.record({ op: fc.constant('stop' as const), kind: fc.nat(2) }),
    fc.record({ op: fc.constant('write' as const), kind: fc.nat(2), name: fc.nat(2) }),
    fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 500 }) }),
  ),
  { minLength: 1, maxLength: 40 },
);

const outcomes = fc.array(
  fc.record({
    after: fc.integer({ min: 0, max: 300 }),
    result: fc.constantFrom('done' as const, 'error' as const, 'requeueAfter' as const),
  }),
  { minLength: 1, maxLength: 20 },
);

describe('DynamicController (property)', () => {
  it('random serve/stop/events/outcomes never reconcile a stopped kind after stopServing resolved, nor one request twice at once', async () => {
    await fc.assert(
      fc.asyncProperty(ops, outcomes, fc.integer({ min: 1, max: 3 }), async (script, results, workers) => {
        const { backend, stop, controller, clock } = setup({ workers, syncTimeoutMs: 60_000 });
        const run = controller.start(stop.signal);
        const stoppedKinds = new Set<number>();
        const running = new Set<string>();
        const violations: string[] = [];
        let generation = 1;
        let call = 0;
        const handlerFor =
          (kind: number) =>
          async (request: KindRequest, { signal }: { signal: AbortSignal }) => {
            const key = label(request);
            if (stoppedKinds.has(kind)) violations.push(`reconcile of stopped kind: ${key}`);
            if (running.has(key)) violations.push(`concurrent reconcile of ${key}`);
            running.add(key);
            const outcome = results[call++ % results.length] as Outcome;
            try {
              await clock.sleep(outcome.after, signal).catch(() => undefined);
              if (outcome.result === 'error') throw new Error('boom');
              return outcome.result === 'requeueAfter' ? requeueAfter(100) : done();
            } finally {
              running.delete(key);
            }
          };
        for (const step of script) {
          switch (step.op) {
            case 'serve':
              stoppedKinds.delete(step.kind);
              await controller.serve(kindAt(step.kind), handlerFor(step.kind));
              break;
            case 'stop':
              await controller.stopServing(kindAt(step.kind));
              stoppedKinds.add(step.kind);
              break;
            case 'write':
              backend.set(
                kindAt(step.kind),
                object(kindAt(step.kind), NAMES[step.name] ?? 'x', 'default', ++generation),
              );
              await settle(3);
              break;
            case 'advance':
              await clock.advance(step.ms);
              break;
          }
        }
        await clock.advance(2_000);
        stop.abort();
        await run;
        expect(violations).toEqual([]);
        expect(running.size).toBe(0);
        expect(backend.openWatches).toBe(0);
        expect(clock.pendingTimers).toBe(0);
      }),
      { numRuns: 60 },
    );
  });
});
