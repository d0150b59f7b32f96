import { describe, expect } from 'vitest';
import type { WatchEvent } from '../../backend/index.ts';
import { check, compareRevisions, rv, withMeta } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, NS_B, type SuiteConfigMap, suiteTypes, widget } from './types.ts';
import { WatchReader, watching } from './watch-reader.ts';

const { configMap: CM, widget: WIDGET } = suiteTypes;
/** The watch timeout of the bookmark test: long enough for a Kubernetes server's pre-deadline bookmark. */
const BOOKMARK_WATCH_MS = 4000;

/** Watches narrowed by selector, namespace and kind; bookmarks. */
export function defineWatchFilterTests(ctx: SuiteContext): void {
  describe('watch scopes and bookmarks', () => {
    check(
      ctx,
      'a label-selector watch sees an object leaving the selector as DELETED and entering it as ADDED',
      async ({ backend }) => {
        const list = await backend.list(CM);
        const options = { resourceVersion: list.resourceVersion, labelSelector: 'tier=web' };
        await watching<SuiteConfigMap>(backend, CM, options, ctx.waitMs, async (watch) => {
          let x = await backend.create<SuiteConfigMap>(
            CM,
            configMap('w-x', { v: '1' }, { labels: { tier: 'web' } }),
          );
          expect(await watch.expect('ADDED', 'w-x')).toEqual(x);
          await backend.create(CM, configMap('w-other', {}, { labels: { tier: 'db' } }));
          x = await backend.update<SuiteConfigMap>(CM, withMeta(x, { labels: { tier: 'db' } }));
          const left = await watch.expect('DELETED', 'w-x');
          expect(rv(left), "the DELETED for leaving the selector has the update's resourceVersion").toBe(
            rv(x),
          );
          x = await backend.update<SuiteConfigMap>(CM, { ...x, data: { v: 'unseen' } });
          x = await backend.update<SuiteConfigMap>(CM, withMeta(x, { labels: { tier: 'web' } }));
          expect(await watch.expect('ADDED', 'w-x')).toEqual(x);
          x = await backend.update<SuiteConfigMap>(CM, { ...x, data: { v: '2' } });
          expect(await watch.expect('MODIFIED', 'w-x')).toEqual(x);
          await backend.delete(CM, { namespace: NS, name: 'w-x' });
          await watch.expect('DELETED', 'w-x');
          await backend.create(CM, configMap('w-sentinel', {}, { labels: { tier: 'web' } }));
          await watch.expect('ADDED', 'w-sentinel');
        });
      },
    );

    check(ctx, 'a namespace-scoped watch sees only that namespace', async ({ backend }) => {
      const list = await backend.list(CM);
      const options = { resourceVersion: list.resourceVersion, namespace: NS };
      await watching<SuiteConfigMap>(backend, CM, options, ctx.waitMs, async (watch) => {
        const other = await backend.create<SuiteConfigMap>(CM, configMap('w-b', {}, { namespace: NS_B }));
        await backend.create(CM, configMap('w-a'));
        expect((await watch.expect('ADDED', 'w-a')).metadata.namespace).toBe(NS);
        await backend.update(CM, { ...other, data: { v: '2' } });
        await backend.delete(CM, { namespace: NS_B, name: 'w-b' });
        await backend.create(CM, configMap('w-a2'));
        expect((await watch.expect('ADDED', 'w-a2')).metadata.namespace).toBe(NS);
      });
    });

    check(
      ctx,
      'a watch with a metadata.name field selector sees only that object',
      async ({ backend }) => {
        const list = await backend.list(CM);
        const options = { resourceVersion: list.resourceVersion, fieldSelector: 'metadata.name=w-a' };
        await watching<SuiteConfigMap>(backend, CM, options, ctx.waitMs, async (watch) => {
          await backend.create(CM, configMap('w-b'));
          await backend.create(CM, configMap('w-a', {}, { namespace: NS_B }));
          const a = await backend.create<SuiteConfigMap>(CM, configMap('w-a'));
          const first = await watch.expect('ADDED', 'w-a');
          expect(first.metadata.namespace).toBe(NS_B);
          expect(await watch.expect('ADDED', 'w-a')).toEqual(a);
        });
      },
      { needs: ['fieldSelectors'] },
    );

    check(ctx, 'a watch of one kind does not see other kinds', async ({ backend }) => {
      const list = await backend.list(CM);
      await watching(backend, CM, { resourceVersion: list.resourceVersion }, ctx.waitMs, async (watch) => {
        await backend.create(WIDGET, widget('w-a'));
        await backend.create(CM, configMap('w-a'));
        expect((await watch.expect('ADDED', 'w-a')).kind).toBe('ConfigMap');
      });
    });

    check(
      ctx,
      'a bookmark carries a resourceVersion from which a new watch resumes without missing or duplicating events',
      async ({ backend }) => {
        const list = await backend.list(CM);
        const writes: SuiteConfigMap[] = [];
        writes.push(await backend.create<SuiteConfigMap>(CM, configMap('b-1')));
        writes.push(await backend.create<SuiteConfigMap>(CM, configMap('b-2')));
        const options = {
          resourceVersion: list.resourceVersion,
          allowBookmarks: true,
          timeoutMs: BOOKMARK_WATCH_MS,
        };
        const first = new WatchReader<SuiteConfigMap>(backend, CM, options, ctx.waitMs);
        const before: string[] = [];
        let bookmark: Extract<WatchEvent, { type: 'BOOKMARK' }> | undefined;
        try {
          while (bookmark === undefined) {
            const result = await first.nextResult('a BOOKMARK', BOOKMARK_WATCH_MS + ctx.waitMs);
            if (result.done === true)
              expect.fail(`the watch ended after ${BOOKMARK_WATCH_MS} ms without a BOOKMARK`);
            if (result.value.type === 'BOOKMARK') bookmark = result.value;
            else before.push(rv(result.value.object));
          }
        } finally {
          await first.close();
        }
        const mark = bookmark.resourceVersion;
        for (const seen of before) expect(compareRevisions(mark, seen)).toBeGreaterThanOrEqual(0);
        writes.push(await backend.create<SuiteConfigMap>(CM, configMap('b-3')));
        writes.push(
          await backend.update<SuiteConfigMap>(CM, { ...(writes[0] as SuiteConfigMap), data: { v: '2' } }),
        );
        // Events up to the bookmark were seen by the first watch; the rest must come to the second one.
        const expected = writes.map(rv).filter((v) => compareRevisions(v, mark) > 0);
        expect(before).toEqual(writes.map(rv).filter((v) => compareRevisions(v, mark) <= 0));
        await watching(backend, CM, { resourceVersion: mark }, ctx.waitMs, async (second) => {
          const seen = (await second.take(expected.length, 'the events after the bookmark')).map((e) =>
            rv(e.object),
          );
          expect(seen).toEqual(expected);
          await backend.create(CM, configMap('b-sentinel'));
          await second.expect('ADDED', 'b-sentinel');
        });
      },
      { needs: ['bookmarks'], timeoutMs: ctx.timeoutMs + BOOKMARK_WATCH_MS },
    );
  });
}
