import { describe, expect } from 'vitest';
import { ConflictError, InvalidError, NotFoundError } from '../../backend/index.ts';
import { check, compareRevisions, expectRejects, rv, TIMESTAMP, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, type SuiteWidget, suiteTypes, widget } from './types.ts';
import { watching } from './watch-reader.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;
const HOLD = 'suite.converge.dev/hold';
const HOLD_2 = 'suite.converge.dev/hold-2';
const KEY = { namespace: NS, name: 'w-a' };

/** delete, finalizers and preconditions. */
export function defineDeleteTests(ctx: SuiteContext): void {
  const needs = { needs: ['finalizers'] } as const;
  describe('delete and finalizers', () => {
    check(
      ctx,
      'delete without finalizers removes the object: get rejects with NotFoundError and watchers see DELETED',
      async ({ backend }) => {
        const created = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        await watching<SuiteConfigMap>(
          backend,
          CM,
          { resourceVersion: rv(created) },
          ctx.waitMs,
          async (watch) => {
            expect(await backend.delete(CM, { namespace: NS, name: 'cm-a' })).toEqual({ status: 'deleted' });
            await expectRejects(
              backend.get(CM, { namespace: NS, name: 'cm-a' }),
              NotFoundError,
              'get after delete',
            );
            const gone = await watch.expect('DELETED', 'cm-a');
            expect(gone.data).toEqual({ a: '1' });
            expect(compareRevisions(rv(gone), rv(created))).toBe(1);
          },
        );
        expect((await backend.list(CM)).items).toEqual([]);
      },
    );

    check(ctx, 'delete of a missing object rejects with NotFoundError', async ({ backend }) => {
      await expectRejects(backend.delete(CM, { namespace: NS, name: 'missing' }), NotFoundError, 'delete');
    });

    check(
      ctx,
      'delete with finalizers only marks the object: deletionTimestamp set, generation bumped, still readable, watchers see MODIFIED',
      async ({ backend }) => {
        const created = await backend.create<SuiteWidget>(
          WIDGET,
          widget('w-a', { size: 1 }, { finalizers: [HOLD] }),
        );
        await watching<SuiteWidget>(
          backend,
          WIDGET,
          { resourceVersion: rv(created) },
          ctx.waitMs,
          async (watch) => {
            const result = await backend.delete<SuiteWidget>(WIDGET, KEY);
            if (result.status !== 'pending') return expect.fail('delete with a finalizer should be pending');
            const marked = result.object;
            expect(marked.metadata.deletionTimestamp).toMatch(TIMESTAMP);
            expect(marked.metadata.finalizers).toEqual([HOLD]);
            expect(marked.metadata.generation).toBe(2);
            expect(marked.spec).toEqual({ size: 1 });
            expect(await backend.get(WIDGET, KEY)).toEqual(marked);
            expect(await watch.expect('MODIFIED', 'w-a')).toEqual(marked);
            // Deleting again changes nothing.
            const again = await backend.delete<SuiteWidget>(WIDGET, KEY);
            expect(again).toEqual({ status: 'pending', object: marked });
          },
        );
      },
      needs,
    );

    check(
      ctx,
      'removing the last finalizer deletes the object and watchers see DELETED',
      async ({ backend }) => {
        const created = await backend.create<SuiteWidget>(
          WIDGET,
          widget('w-a', { size: 1 }, { finalizers: [HOLD, HOLD_2] }),
        );
        await watching<SuiteWidget>(
          backend,
          WIDGET,
          { resourceVersion: rv(created) },
          ctx.waitMs,
          async (watch) => {
            await backend.delete(WIDGET, KEY);
            await watch.expect('MODIFIED', 'w-a');
            const marked = await backend.get<SuiteWidget>(WIDGET, KEY);
            const one = await backend.update<SuiteWidget>(WIDGET, withMeta(marked, { finalizers: [HOLD_2] }));
            expect(one.metadata.finalizers).toEqual([HOLD_2]);
            expect(await watch.expect('MODIFIED', 'w-a')).toEqual(one);
            await backend.update(WIDGET, withMeta(one, { finalizers: [] }));
            // Like Kubernetes, DELETED may carry the last stored state (here: still with HOLD_2).
            const gone = await watch.expect('DELETED', 'w-a');
            expect(gone.metadata.uid).toBe(created.metadata.uid);
            expect(compareRevisions(rv(gone), rv(one))).toBe(1);
            await expectRejects(backend.get(WIDGET, KEY), NotFoundError, 'get after the last finalizer went');
          },
        );
      },
      needs,
    );

    check(
      ctx,
      'removing the last finalizer with a merge patch deletes the object',
      async ({ backend }) => {
        await backend.create<SuiteConfigMap>(CM, configMap('cm-a', {}, { finalizers: [HOLD] }));
        await backend.delete(CM, { namespace: NS, name: 'cm-a' });
        await backend.patch(
          CM,
          { namespace: NS, name: 'cm-a' },
          { type: 'merge', patch: { metadata: { finalizers: null } } },
        );
        await expectRejects(
          backend.get(CM, { namespace: NS, name: 'cm-a' }),
          NotFoundError,
          'get after the patch',
        );
      },
      needs,
    );

    check(
      ctx,
      'a terminating object accepts no new finalizers: the update rejects with InvalidError',
      async ({ backend }) => {
        await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }, { finalizers: [HOLD] }));
        await backend.delete(WIDGET, KEY);
        const marked = await backend.get<SuiteWidget>(WIDGET, KEY);
        await expectRejects(
          backend.update(WIDGET, withMeta(marked, { finalizers: [HOLD, HOLD_2] })),
          InvalidError,
          'adding a finalizer while terminating',
        );
        expect(await backend.get(WIDGET, KEY)).toEqual(marked);
      },
      needs,
    );

    check(
      ctx,
      'delete with a uid precondition that does not match rejects with ConflictError; a matching one deletes',
      async ({ backend }) => {
        const created = await backend.create<SuiteConfigMap>(CM, configMap('cm-a'));
        const key = { namespace: NS, name: 'cm-a' };
        await expectRejects(
          backend.delete(CM, key, { preconditions: { uid: 'not-the-uid' } }),
          ConflictError,
          'delete with a wrong uid',
        );
        expect(await backend.get(CM, key)).toEqual(created);
        const uid = created.metadata.uid as string;
        expect(await backend.delete(CM, key, { preconditions: { uid } })).toEqual({ status: 'deleted' });
      },
    );

    check(
      ctx,
      'delete with a resourceVersion precondition that is stale rejects with ConflictError; the current one deletes',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        const v2 = await backend.update<SuiteConfigMap>(CM, { ...v1, data: { a: '2' } });
        const key = { namespace: NS, name: 'cm-a' };
        await expectRejects(
          backend.delete(CM, key, { preconditions: { resourceVersion: rv(v1) } }),
          ConflictError,
          'delete with a stale resourceVersion',
        );
        expect(await backend.get(CM, key)).toEqual(v2);
        expect(await backend.delete(CM, key, { preconditions: { resourceVersion: rv(v2) } })).toEqual({
          status: 'deleted',
        });
      },
    );
  });
}
