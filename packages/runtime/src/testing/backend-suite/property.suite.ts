import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { type Backend, isAlreadyExists, isNotFound } from '../../backend/index.ts';
import { check, rv } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, suiteTypes } from './types.ts';
import { watching } from './watch-reader.ts';

const { configMap: CM } = suiteTypes;
const NUM_RUNS = 15;

interface Op {
  readonly kind: 'create' | 'update' | 'delete';
  readonly name: 'a' | 'b' | 'c';
  readonly value: number;
}

const opArbitrary: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom('create', 'update', 'delete'),
  name: fc.constantFrom('a', 'b', 'c'),
  value: fc.integer({ min: 0, max: 3 }),
});

/** Runs `ops` for run `run`, checking each result against a model of which names exist. */
async function apply(backend: Backend, run: string, ops: readonly Op[]): Promise<void> {
  const present = new Map<string, SuiteConfigMap>();
  for (const op of ops) {
    const name = `${run}-${op.name}`;
    const current = present.get(name);
    const mustFail = op.kind === 'create' ? current !== undefined : current === undefined;
    try {
      switch (op.kind) {
        case 'create':
          present.set(
            name,
            await backend.create(CM, configMap(name, { v: String(op.value) }, { labels: { run } })),
          );
          break;
        case 'update':
          present.set(
            name,
            await backend.update(CM, { ...(current ?? configMap(name)), data: { v: String(op.value) } }),
          );
          break;
        case 'delete':
          await backend.delete(CM, { namespace: NS, name });
          present.delete(name);
          break;
      }
    } catch (error) {
      const expected = op.kind === 'create' ? isAlreadyExists(error) : isNotFound(error);
      if (mustFail && expected) continue;
      throw error;
    }
    if (mustFail)
      expect.fail(
        `${op.kind} of ${current === undefined ? 'missing' : 'existing'} ${name} should have failed`,
      );
  }
}

/** The fast-check property: a watch replayed onto a map equals the final list. */
export function definePropertyTests(ctx: SuiteContext): void {
  describe('property', () => {
    check(
      ctx,
      `for random create/update/delete sequences, a watch from the initial list's resourceVersion replayed onto a map equals the final list (${NUM_RUNS} runs)`,
      async ({ backend }) => {
        let runs = 0;
        await fc.assert(
          fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 12 }), async (ops) => {
            const run = `r${runs++}`;
            const labelSelector = `run=${run}`;
            const initial = await backend.list<SuiteConfigMap>(CM, { namespace: NS, labelSelector });
            await apply(backend, run, ops);
            const final = await backend.list<SuiteConfigMap>(CM, { namespace: NS, labelSelector });
            // A sentinel write after the final list marks where the replay stops.
            await backend.create(CM, configMap(`${run}-zz`, {}, { labels: { run } }));
            const replayed = new Map<string, SuiteConfigMap>();
            const options = { namespace: NS, labelSelector, resourceVersion: initial.resourceVersion };
            await watching<SuiteConfigMap>(backend, CM, options, ctx.waitMs, async (watch) => {
              for (;;) {
                const event = await watch.next('the replayed events up to the sentinel');
                const name = event.object.metadata.name ?? '';
                if (name === `${run}-zz`) break;
                if (event.type === 'DELETED') replayed.delete(name);
                else replayed.set(name, event.object);
              }
            });
            const sorted = [...replayed.values()].sort((x, y) =>
              (x.metadata.name ?? '') < (y.metadata.name ?? '') ? -1 : 1,
            );
            expect(sorted).toEqual(final.items);
            expect(sorted.map(rv)).toEqual(final.items.map(rv));
          }),
          { numRuns: NUM_RUNS },
        );
      },
      { timeoutMs: ctx.timeoutMs * 3 },
    );
  });
}
