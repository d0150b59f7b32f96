import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exponentialBackoffRetryPolicy } from '../workqueue/index.ts';
import { setup, type Widget, widget } from './informer-controller-test-support.ts';
import { opinionatedRetryDequeuePolicy } from './retry-dequeue-policy.ts';
import type { ResourceWatcher, WatcherContext } from './types.ts';

const NAMES = ['a', 'b', 'c'];

type Op =
  | {
      readonly op: 'event';
      readonly name: number;
      readonly type: 'create' | 'update' | 'delete';
      readonly generation: number;
    }
  | { readonly op: 'advance'; readonly ms: number };

const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    fc.record({
      op: fc.constant('event' as const),
      name: fc.nat(NAMES.length - 1),
      type: fc.constantFrom('create' as const, 'update' as const, 'delete' as const),
      generation: fc.integer({ min: 1, max: 2 }),
    }),
    fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 1_500 }) }),
  ),
  { minLength: 1, maxLength: 30 },
);

const outcomes = fc.array(fc.record({ fail: fc.boolean(), ms: fc.integer({ min: 0, max: 400 }) }), {
  minLength: 1,
  maxLength: 25,
});

interface CallRecord {
  readonly watcher: number;
  readonly event: string;
  readonly attempt: number;
  readonly failed: boolean;
}

describe('InformerController (property)', () => {
  it('random events, outcomes and durations: never two handlers of one object at once, the last event of every object reaches every watcher unless the policy gave up, and no call exceeds the policy count', async () => {
    await fc.assert(
      fc.asyncProperty(
        ops,
        outcomes,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        async (script, results, workers, watcherCount, maxRetries, opinionated) => {
          const { controller, events, clock, stop, start } = setup({
            workers,
            retryPolicy: exponentialBackoffRetryPolicy(100, maxRetries),
            ...(opinionated ? { retryDequeuePolicy: opinionatedRetryDequeuePolicy } : {}),
          });
          const maxCalls = maxRetries + 2;
          const active = new Set<string>();
          const violations: string[] = [];
          const calls: CallRecord[] = [];
          let n = 0;
          for (let w = 0; w < watcherCount; w++) {
            const handle = async (object: Widget, { attempt }: WatcherContext): Promise<void> => {
              const key = object.metadata.name as string;
              if (active.has(key)) violations.push(`two handlers of ${key} at once`);
              active.add(key);
              const outcome = results[n++ % results.length] as { fail: boolean; ms: number };
              try {
                await clock.sleep(outcome.ms);
              } finally {
                active.delete(key);
                calls.push({ watcher: w, event: object.spec.tag, attempt, failed: outcome.fail });
              }
              if (outcome.fail) throw new Error('random failure');
            };
            const watcher: ResourceWatcher<Widget> = {
              add: handle,
              update: (_old, object, context) => handle(object, context),
              delete: handle,
            };
            controller.addWatcher(watcher, 'Widget');
          }
          const run = start();
          const last = new Map<string, string>();
          let id = 0;
          for (const op of script) {
            if (op.op === 'advance') {
              await clock.advance(op.ms);
              continue;
            }
            const name = NAMES[op.name] as string;
            const tag = `e${++id}`;
            const object = widget(name, { tag, rv: String(id), generation: op.generation });
            if (op.type === 'create') events.create(object);
            else if (op.type === 'delete') events.delete(object);
            else events.update(widget(name, { rv: String(id - 1) }), object);
            last.set(name, tag);
          }
          await clock.runAll();
          expect(violations).toEqual([]);
          expect(controller.stats()).toMatchObject({ pendingRetries: 0, running: 0, queued: 0, objects: 0 });
          const byCall = new Map<string, CallRecord[]>();
          for (const call of calls) {
            const key = `${call.watcher}/${call.event}`;
            byCall.set(key, [...(byCall.get(key) ?? []), call]);
          }
          for (const [key, records] of byCall) {
            expect(records.length, key).toBeLessThanOrEqual(maxCalls);
            expect(
              records.map((r) => r.attempt),
              key,
            ).toEqual(records.map((_, i) => i));
          }
          for (const tag of last.values()) {
            for (let w = 0; w < watcherCount; w++) {
              const records = byCall.get(`${w}/${tag}`) ?? [];
              const succeeded = records.some((r) => !r.failed);
              expect(succeeded || records.length === maxCalls, `watcher ${w} and last event ${tag}`).toBe(
                true,
              );
            }
          }
          stop.abort();
          await run;
        },
      ),
      { numRuns: 150 },
    );
  });
});
