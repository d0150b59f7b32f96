import { describe, expect } from 'vitest';
import { ConflictError, InvalidError, NotFoundError } from '../../backend/index.ts';
import { check, expectRejects, rv } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, type SuiteWidget, suiteTypes, widget } from './types.ts';

const { configMap: CM } = suiteTypes;
const KEY = { namespace: NS, name: 'cm-a' };

/** JSON merge patch (RFC 7386) and JSON patch (RFC 6902). */
export function definePatchTests(ctx: SuiteContext): void {
  describe('patch', () => {
    check(
      ctx,
      'merge patch sets keys, leaves the others alone, and null deletes a key',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(
          CM,
          configMap('cm-a', { a: '1', b: '2' }, { labels: { app: 'web' } }),
        );
        const v2 = await backend.patch<SuiteConfigMap>(CM, KEY, {
          type: 'merge',
          patch: { data: { b: null, c: '3' }, metadata: { labels: { tier: 'front' } } },
        });
        expect(v2.data).toEqual({ a: '1', c: '3' });
        expect(v2.metadata.labels).toEqual({ app: 'web', tier: 'front' });
        expect(rv(v2)).not.toBe(rv(v1));
        expect(await backend.get(CM, KEY)).toEqual(v2);
      },
    );

    check(
      ctx,
      'a resourceVersion in a merge patch is a precondition: stale rejects with ConflictError, current succeeds',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        const v2 = await backend.update<SuiteConfigMap>(CM, { ...v1, data: { a: '2' } });
        await expectRejects(
          backend.patch(CM, KEY, {
            type: 'merge',
            patch: { metadata: { resourceVersion: rv(v1) }, data: { a: '3' } },
          }),
          ConflictError,
          'patch with a stale resourceVersion',
        );
        expect(await backend.get(CM, KEY)).toEqual(v2);
        const v3 = await backend.patch<SuiteConfigMap>(CM, KEY, {
          type: 'merge',
          patch: { metadata: { resourceVersion: rv(v2) }, data: { a: '3' } },
        });
        expect(v3.data).toEqual({ a: '3' });
        expect(rv(v3)).not.toBe(rv(v2));
      },
    );

    check(ctx, 'patch of a missing object rejects with NotFoundError', async ({ backend }) => {
      await expectRejects(
        backend.patch(CM, { namespace: NS, name: 'missing' }, { type: 'merge', patch: { data: { a: '1' } } }),
        NotFoundError,
        'patch',
      );
    });

    check(
      ctx,
      'JSON patch applies add, replace and remove in order',
      async ({ backend }) => {
        await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1', b: '2' }));
        const patched = await backend.patch<SuiteConfigMap>(CM, KEY, {
          type: 'json',
          patch: [
            { op: 'test', path: '/data/a', value: '1' },
            { op: 'replace', path: '/data/a', value: 'x' },
            { op: 'add', path: '/data/d', value: '4' },
            { op: 'remove', path: '/data/b' },
            { op: 'add', path: '/metadata/labels', value: { app: 'web' } },
            { op: 'copy', from: '/data/d', path: '/data/e' },
          ],
        });
        expect(patched.data).toEqual({ a: 'x', d: '4', e: '4' });
        expect(patched.metadata.labels).toEqual({ app: 'web' });
        expect(await backend.get(CM, KEY)).toEqual(patched);
      },
      { needs: ['jsonPatch'] },
    );

    check(
      ctx,
      'JSON patch decodes ~1 and ~0 in paths',
      async ({ backend }) => {
        // ConfigMap data keys may not hold `~` on a real server, so `~0` goes in a Widget's free-form spec.
        await backend.create<SuiteConfigMap>(
          CM,
          configMap('cm-a', { a: '1' }, { labels: { 'example.com/app': 'web' } }),
        );
        const patched = await backend.patch<SuiteConfigMap>(CM, KEY, {
          type: 'json',
          patch: [{ op: 'replace', path: '/metadata/labels/example.com~1app', value: 'db' }],
        });
        expect(patched.metadata.labels).toEqual({ 'example.com/app': 'db' });
        const W = suiteTypes.widget;
        await backend.create<SuiteWidget>(W, widget('w-a', { size: 1 }));
        const w = await backend.patch<SuiteWidget>(
          W,
          { namespace: NS, name: 'w-a' },
          {
            type: 'json',
            patch: [{ op: 'add', path: '/spec/x~0y', value: 'tilde' }],
          },
        );
        expect(w.spec).toEqual({ size: 1, 'x~y': 'tilde' });
      },
      { needs: ['jsonPatch'] },
    );

    check(
      ctx,
      'JSON patch with a failing test operation rejects with InvalidError and changes nothing',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        await expectRejects(
          backend.patch(CM, KEY, {
            type: 'json',
            patch: [
              { op: 'replace', path: '/data/a', value: 'changed' },
              { op: 'test', path: '/data/a', value: 'not-this' },
            ],
          }),
          InvalidError,
          'JSON patch with a failing test',
        );
        expect(await backend.get(CM, KEY)).toEqual(v1);
      },
      { needs: ['jsonPatch'] },
    );

    check(
      ctx,
      'JSON patch removing a missing path rejects with InvalidError and changes nothing',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        await expectRejects(
          backend.patch(CM, KEY, { type: 'json', patch: [{ op: 'remove', path: '/data/missing' }] }),
          InvalidError,
          'JSON patch removing a missing path',
        );
        expect(await backend.get(CM, KEY)).toEqual(v1);
      },
      { needs: ['jsonPatch'] },
    );
  });
}
