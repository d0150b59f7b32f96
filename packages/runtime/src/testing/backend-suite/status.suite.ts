import { describe, expect } from 'vitest';
import { ConflictError } from '../../backend/index.ts';
import { check, expectRejects, rv, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, type SuiteWidget, suiteTypes, widget } from './types.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;
const KEY = { namespace: NS, name: 'w-a' };

/** metadata.generation and the status subresource. */
export function defineStatusTests(ctx: SuiteContext): void {
  describe('generation', () => {
    check(ctx, 'generation is 1 on create and increases by one on each spec change', async ({ backend }) => {
      const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
      expect(v1.metadata.generation).toBe(1);
      const v2 = await backend.update<SuiteWidget>(WIDGET, { ...v1, spec: { size: 2 } });
      expect(v2.metadata.generation).toBe(2);
      const v3 = await backend.patch<SuiteWidget>(WIDGET, KEY, {
        type: 'merge',
        patch: { spec: { color: 'red' } },
      });
      expect(v3.metadata.generation).toBe(3);
      expect((await backend.get(WIDGET, KEY)).metadata.generation).toBe(3);
    });

    check(
      ctx,
      'generation does not change on metadata-only writes (labels, annotations)',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const v2 = await backend.update<SuiteWidget>(WIDGET, withMeta(v1, { labels: { app: 'web' } }));
        expect(rv(v2)).not.toBe(rv(v1));
        expect(v2.metadata.generation).toBe(1);
        const v3 = await backend.patch<SuiteWidget>(WIDGET, KEY, {
          type: 'merge',
          patch: { metadata: { annotations: { note: 'x' } } },
        });
        expect(rv(v3)).not.toBe(rv(v2));
        expect(v3.metadata.generation).toBe(1);
      },
    );

    check(
      ctx,
      'generation does not change on status writes',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const v2 = await backend.updateStatus<SuiteWidget>(WIDGET, { ...v1, status: { phase: 'Ready' } });
        expect(v2.status).toEqual({ phase: 'Ready' });
        expect(v2.metadata.generation).toBe(1);
        const v3 = await backend.patch<SuiteWidget>(
          WIDGET,
          KEY,
          { type: 'merge', patch: { status: { phase: 'Done' } } },
          { subresource: 'status' },
        );
        expect(v3.status).toEqual({ phase: 'Done' });
        expect(v3.metadata.generation).toBe(1);
      },
      { needs: ['statusSubresource'] },
    );

    check(ctx, 'the ConfigMap-like kind has no generation', async ({ backend }) => {
      const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
      expect(v1.metadata.generation).toBeUndefined();
      const v2 = await backend.update<SuiteConfigMap>(CM, { ...v1, data: { a: '2' } });
      expect(v2.metadata.generation).toBeUndefined();
    });
  });

  describe('status subresource', () => {
    const needs = { needs: ['statusSubresource'] } as const;

    check(
      ctx,
      'create ignores .status',
      async ({ backend }) => {
        const created = await backend.create<SuiteWidget>(WIDGET, {
          ...widget('w-a'),
          status: { phase: 'Forged' },
        });
        expect(created.status).toBeUndefined();
        expect((await backend.get<SuiteWidget>(WIDGET, KEY)).status).toBeUndefined();
      },
      needs,
    );

    check(
      ctx,
      'update ignores .status and keeps the stored status',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const v2 = await backend.updateStatus<SuiteWidget>(WIDGET, { ...v1, status: { phase: 'Ready' } });
        const v3 = await backend.update<SuiteWidget>(WIDGET, {
          ...v2,
          spec: { size: 2 },
          status: { phase: 'Forged' },
        });
        expect(v3.spec).toEqual({ size: 2 });
        expect(v3.status).toEqual({ phase: 'Ready' });
        // Only a status change: nothing to write.
        const v4 = await backend.update<SuiteWidget>(WIDGET, { ...v3, status: { phase: 'Forged again' } });
        expect(v4.status).toEqual({ phase: 'Ready' });
        expect(rv(v4)).toBe(rv(v3));
      },
      needs,
    );

    check(
      ctx,
      'updateStatus changes only .status: spec and labels sent with it are ignored',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(
          WIDGET,
          widget('w-a', { size: 1 }, { labels: { app: 'web' } }),
        );
        const sent = withMeta(
          { ...v1, spec: { size: 9 }, status: { phase: 'Ready' } },
          { labels: { app: 'forged' } },
        );
        const v2 = await backend.updateStatus<SuiteWidget>(WIDGET, sent);
        expect(v2.status).toEqual({ phase: 'Ready' });
        expect(v2.spec).toEqual({ size: 1 });
        expect(v2.metadata.labels).toEqual({ app: 'web' });
        expect(v2.metadata.generation).toBe(1);
        expect(await backend.get(WIDGET, KEY)).toEqual(v2);
      },
      needs,
    );

    check(
      ctx,
      'updateStatus with a stale resourceVersion rejects with ConflictError',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const v2 = await backend.update<SuiteWidget>(WIDGET, { ...v1, spec: { size: 2 } });
        await expectRejects(
          backend.updateStatus(WIDGET, { ...v1, status: { phase: 'Ready' } }),
          ConflictError,
          'stale updateStatus',
        );
        expect(await backend.get(WIDGET, KEY)).toEqual(v2);
      },
      needs,
    );

    check(
      ctx,
      "patch with subresource 'status' changes only .status",
      async ({ backend }) => {
        await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }, { labels: { app: 'web' } }));
        const patched = await backend.patch<SuiteWidget>(
          WIDGET,
          KEY,
          {
            type: 'merge',
            patch: { status: { phase: 'Ready' }, spec: { size: 9 }, metadata: { labels: { app: 'forged' } } },
          },
          { subresource: 'status' },
        );
        expect(patched.status).toEqual({ phase: 'Ready' });
        expect(patched.spec).toEqual({ size: 1 });
        expect(patched.metadata.labels).toEqual({ app: 'web' });
        expect(patched.metadata.generation).toBe(1);
        expect(await backend.get(WIDGET, KEY)).toEqual(patched);
      },
      needs,
    );

    check(
      ctx,
      'a main-resource patch of .status is ignored',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const patched = await backend.patch<SuiteWidget>(WIDGET, KEY, {
          type: 'merge',
          patch: { status: { phase: 'Forged' } },
        });
        expect(patched.status).toBeUndefined();
        expect(rv(patched)).toBe(rv(v1));
      },
      needs,
    );
  });
}
