import { describe, expect } from 'vitest';
import { isAlreadyExists, isConflict } from '../../backend/index.ts';
import type { KubeObject } from '../../object/index.ts';
import { check, rv, snapshot } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, type SuiteWidget, suiteTypes, widget } from './types.ts';
import { watching } from './watch-reader.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;
const KEY = { namespace: NS, name: 'cm-a' };
const CONCURRENT_WRITERS = 8;

/** Tries to change a returned object in place; frozen objects throw, which is fine. */
function tryToMutate(object: KubeObject): void {
  const attempts: ((o: Record<string, unknown> & { metadata: Record<string, unknown> }) => void)[] = [
    (o) => {
      (o.data as Record<string, string>).a = 'mutated';
    },
    (o) => {
      (o.metadata.labels as Record<string, string>).app = 'mutated';
    },
    (o) => {
      (o.metadata.finalizers as string[]).push('suite.converge.dev/mutated');
    },
    (o) => {
      o.metadata.resourceVersion = '1';
    },
    (o) => {
      o.data = { replaced: 'yes' };
    },
  ];
  for (const attempt of attempts) {
    try {
      attempt(object as unknown as Record<string, unknown> & { metadata: Record<string, unknown> });
    } catch {
      // A frozen object refuses the change: that is one of the two allowed behaviours.
    }
  }
}

/** Settles all promises and sorts them into values and errors. */
async function settle<T>(promises: readonly Promise<T>[]): Promise<{ values: T[]; errors: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    values: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    errors: results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : [])),
  };
}

/** Returned objects are copies (or frozen); concurrent writers race safely. */
export function defineIsolationTests(ctx: SuiteContext): void {
  describe('isolation and concurrency', () => {
    check(
      ctx,
      'mutating objects returned by create, update, get, list and watch does not change the stored state',
      async ({ backend }) => {
        const base = configMap(
          'cm-a',
          { a: '1' },
          { labels: { app: 'web' }, finalizers: ['suite.converge.dev/keep'] },
        );
        const created = await backend.create<SuiteConfigMap>(CM, base);
        tryToMutate(created);
        const stored = snapshot(await backend.get<SuiteConfigMap>(CM, KEY));
        expect(stored.data).toEqual({ a: '1' });
        const updated = await backend.update<SuiteConfigMap>(CM, { ...stored, data: { a: '2' } });
        const expected = snapshot(updated);
        tryToMutate(updated);
        tryToMutate(await backend.get(CM, KEY));
        for (const item of (await backend.list(CM)).items) tryToMutate(item);
        await watching(backend, CM, {}, ctx.waitMs, async (watch) => {
          tryToMutate((await watch.expect('ADDED', 'cm-a')) as KubeObject);
        });
        expect(await backend.get(CM, KEY)).toEqual(expected);
        expect((await backend.list(CM)).items).toEqual([expected]);
        await watching(backend, CM, {}, ctx.waitMs, async (watch) => {
          expect(await watch.expect('ADDED', 'cm-a')).toEqual(expected);
        });
      },
    );

    check(
      ctx,
      'the object passed to create or update is neither modified nor retained',
      async ({ backend }) => {
        const input = configMap('cm-a', { a: '1' }, { labels: { app: 'web' } });
        const before = snapshot(input);
        const created = await backend.create<SuiteConfigMap>(CM, input);
        expect(input, 'create must not modify its argument').toEqual(before);
        (input.data as Record<string, string>).a = 'changed after create';
        (input.metadata.labels as Record<string, string>).app = 'changed after create';
        expect(await backend.get(CM, KEY)).toEqual(created);
        const next = { ...snapshot(created), data: { a: '2' } };
        const nextBefore = snapshot(next);
        const updated = await backend.update<SuiteConfigMap>(CM, next);
        expect(next, 'update must not modify its argument').toEqual(nextBefore);
        next.data.a = 'changed after update';
        expect(await backend.get(CM, KEY)).toEqual(updated);
      },
    );

    check(
      ctx,
      `${CONCURRENT_WRITERS} concurrent updates from the same resourceVersion: exactly one succeeds, the rest reject with ConflictError`,
      async ({ backend }) => {
        const base = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 0 }));
        const writers = Array.from({ length: CONCURRENT_WRITERS }, (_, i) =>
          backend.update<SuiteWidget>(WIDGET, { ...base, spec: { size: i + 1 } }),
        );
        const { values, errors } = await settle(writers);
        expect(values).toHaveLength(1);
        expect(errors).toHaveLength(CONCURRENT_WRITERS - 1);
        for (const error of errors) expect(isConflict(error), String(error)).toBe(true);
        const winner = values[0] as SuiteWidget;
        expect(await backend.get(WIDGET, { namespace: NS, name: 'w-a' })).toEqual(winner);
        expect(rv(winner)).not.toBe(rv(base));
      },
    );

    check(
      ctx,
      `${CONCURRENT_WRITERS} concurrent creates of one name: exactly one succeeds, the rest reject with AlreadyExistsError`,
      async ({ backend }) => {
        const writers = Array.from({ length: CONCURRENT_WRITERS }, (_, i) =>
          backend.create<SuiteConfigMap>(CM, configMap('cm-a', { writer: String(i) })),
        );
        const { values, errors } = await settle(writers);
        expect(values).toHaveLength(1);
        for (const error of errors) expect(isAlreadyExists(error), String(error)).toBe(true);
        expect(await backend.get(CM, KEY)).toEqual(values[0]);
      },
    );
  });
}
