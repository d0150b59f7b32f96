import { describe, expect } from 'vitest';
import { ConflictError, InvalidError, isConflict, NotFoundError } from '../../backend/index.ts';
import { check, expectCauseOn, expectRejects, rv, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, type SuiteWidget, suiteTypes, widget } from './types.ts';
import { watching } from './watch-reader.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;

/** resourceVersion semantics of writes, optimistic concurrency, no-op writes. */
export function defineUpdateTests(ctx: SuiteContext): void {
  describe('resourceVersion and update', () => {
    check(
      ctx,
      'resourceVersions are opaque strings that change on every write (create, update, patch, updateStatus)',
      async ({ backend }) => {
        const created = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const updated = await backend.update<SuiteWidget>(WIDGET, { ...created, spec: { size: 2 } });
        const patched = await backend.patch<SuiteWidget>(
          WIDGET,
          { namespace: NS, name: 'w-a' },
          { type: 'merge', patch: { metadata: { labels: { x: 'y' } } } },
        );
        const status = await backend.updateStatus<SuiteWidget>(WIDGET, {
          ...patched,
          status: { phase: 'Ready' },
        });
        const versions = [created, updated, patched, status].map(rv);
        for (const version of versions) expect(version).not.toBe('');
        expect(new Set(versions).size).toBe(versions.length);
        expect(rv(await backend.get(WIDGET, { namespace: NS, name: 'w-a' }))).toBe(versions[3]);
      },
    );

    check(
      ctx,
      'a write that changes nothing (update or patch) leaves the resourceVersion unchanged and emits no watch event',
      async ({ backend }) => {
        const created = await backend.create<SuiteConfigMap>(
          CM,
          configMap('cm-a', { a: '1' }, { labels: { app: 'web' } }),
        );
        await watching(backend, CM, { resourceVersion: rv(created) }, ctx.waitMs, async (watch) => {
          const same = await backend.update<SuiteConfigMap>(CM, created);
          expect(rv(same)).toBe(rv(created));
          const patched = await backend.patch<SuiteConfigMap>(
            CM,
            { namespace: NS, name: 'cm-a' },
            { type: 'merge', patch: { data: { a: '1' }, metadata: { labels: { app: 'web' } } } },
          );
          expect(rv(patched)).toBe(rv(created));
          expect(await backend.get(CM, { namespace: NS, name: 'cm-a' })).toEqual(created);
          // The first event after the no-op writes must be this one: proof that they emitted nothing.
          await backend.create(CM, configMap('cm-sentinel'));
          await watch.expect('ADDED', 'cm-sentinel');
        });
      },
    );

    check(
      ctx,
      'update with a stale resourceVersion rejects with ConflictError and changes nothing',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        const v2 = await backend.update<SuiteConfigMap>(CM, { ...v1, data: { a: '2' } });
        const error = await expectRejects(
          backend.update(CM, { ...v1, data: { a: '3' } }),
          ConflictError,
          'stale update',
        );
        expect(isConflict(error)).toBe(true);
        expect(error.status).toBe(409);
        expect(await backend.get(CM, { namespace: NS, name: 'cm-a' })).toEqual(v2);
      },
    );

    check(
      ctx,
      'update with the current resourceVersion succeeds and returns the stored object',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const v2 = await backend.update<SuiteWidget>(WIDGET, { ...v1, spec: { size: 2, color: 'red' } });
        expect(v2.spec).toEqual({ size: 2, color: 'red' });
        expect(v2.metadata.uid).toBe(v1.metadata.uid);
        expect(v2.metadata.creationTimestamp).toBe(v1.metadata.creationTimestamp);
        expect(await backend.get(WIDGET, { namespace: NS, name: 'w-a' })).toEqual(v2);
      },
    );

    check(
      ctx,
      'update of the custom kind without resourceVersion rejects with InvalidError',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteWidget>(WIDGET, widget('w-a', { size: 1 }));
        const unconditional = withMeta({ ...v1, spec: { size: 2 } }, { resourceVersion: undefined });
        const error = await expectRejects(
          backend.update(WIDGET, unconditional),
          InvalidError,
          'update without RV',
        );
        expectCauseOn(error.causes, 'metadata.resourceVersion');
        expect(await backend.get(WIDGET, { namespace: NS, name: 'w-a' })).toEqual(v1);
      },
    );

    check(
      ctx,
      'update of the ConfigMap-like kind without resourceVersion is unconditional',
      async ({ backend }) => {
        const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
        await backend.update(CM, { ...v1, data: { a: '2' } });
        const blind = withMeta({ ...v1, data: { a: '3' } }, { resourceVersion: undefined });
        const v3 = await backend.update<SuiteConfigMap>(CM, blind);
        expect(v3.data).toEqual({ a: '3' });
        expect(await backend.get(CM, { namespace: NS, name: 'cm-a' })).toEqual(v3);
      },
    );

    check(ctx, 'update of a missing object rejects with NotFoundError', async ({ backend }) => {
      await expectRejects(backend.update(CM, configMap('missing', { a: '1' })), NotFoundError, 'update');
    });

    check(ctx, 'update keeps the server-set uid and creationTimestamp', async ({ backend }) => {
      const v1 = await backend.create<SuiteConfigMap>(CM, configMap('cm-a', { a: '1' }));
      const v2 = await backend.update<SuiteConfigMap>(
        CM,
        withMeta({ ...v1, data: { a: '2' } }, { creationTimestamp: '2001-02-03T04:05:06Z' }),
      );
      expect(v2.metadata.uid).toBe(v1.metadata.uid);
      expect(v2.metadata.creationTimestamp).toBe(v1.metadata.creationTimestamp);
    });
  });
}
