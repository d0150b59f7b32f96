import { describe, expect } from 'vitest';
import { ExpiredError, isExpired } from '../../backend/index.ts';
import { check, compareRevisions, names, rv } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, type SuiteConfigMap, suiteTypes } from './types.ts';
import { WatchReader, watching } from './watch-reader.ts';

const { configMap: CM } = suiteTypes;

/** Watch start points, event order and content, ending a watch. */
export function defineWatchTests(ctx: SuiteContext): void {
  describe('watch', () => {
    check(
      ctx,
      "a watch from a list's resourceVersion sees exactly the later changes, live, in order",
      async ({ backend }) => {
        await backend.create(CM, configMap('w-a', { v: '1' }));
        const list = await backend.list(CM);
        await watching<SuiteConfigMap>(
          backend,
          CM,
          { resourceVersion: list.resourceVersion },
          ctx.waitMs,
          async (watch) => {
            const b = await backend.create<SuiteConfigMap>(CM, configMap('w-b', { v: '1' }));
            expect(await watch.expect('ADDED', 'w-b')).toEqual(b);
            const a = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'w-a' });
            const a2 = await backend.update<SuiteConfigMap>(CM, { ...a, data: { v: '2' } });
            expect(await watch.expect('MODIFIED', 'w-a')).toEqual(a2);
            await backend.delete(CM, { namespace: NS, name: 'w-b' });
            const gone = await watch.expect('DELETED', 'w-b');
            expect(gone.data).toEqual({ v: '1' });
            expect(gone.metadata.uid).toBe(b.metadata.uid);
          },
        );
      },
    );

    check(
      ctx,
      "a watch from a list's resourceVersion replays changes made before it started, in order, with DELETED carrying the last state and the deletion's resourceVersion",
      async ({ backend }) => {
        await backend.create(CM, configMap('w-a', { v: '1' }));
        const list = await backend.list(CM);
        const b = await backend.create<SuiteConfigMap>(CM, configMap('w-b', { v: '1' }));
        const a = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'w-a' });
        const a2 = await backend.update<SuiteConfigMap>(CM, { ...a, data: { v: '2' } });
        const b2 = await backend.update<SuiteConfigMap>(CM, { ...b, data: { v: 'last' } });
        await backend.delete(CM, { namespace: NS, name: 'w-b' });
        const sentinel = await backend.create<SuiteConfigMap>(CM, configMap('w-sentinel'));
        await watching<SuiteConfigMap>(
          backend,
          CM,
          { resourceVersion: list.resourceVersion },
          ctx.waitMs,
          async (watch) => {
            expect(await watch.expect('ADDED', 'w-b')).toEqual(b);
            expect(await watch.expect('MODIFIED', 'w-a')).toEqual(a2);
            expect(await watch.expect('MODIFIED', 'w-b')).toEqual(b2);
            const gone = await watch.expect('DELETED', 'w-b');
            expect(gone.data).toEqual({ v: 'last' });
            expect(compareRevisions(rv(gone), rv(b2)), "DELETED carries the deletion's resourceVersion").toBe(
              1,
            );
            expect(await watch.expect('ADDED', 'w-sentinel')).toEqual(sentinel);
          },
        );
      },
    );

    for (const start of [undefined, '0'] as const) {
      const label = start === undefined ? 'without resourceVersion' : "from resourceVersion '0'";
      check(
        ctx,
        `a watch ${label} first sends a synthetic ADDED for every existing object, then live changes`,
        async ({ backend }) => {
          const x = await backend.create<SuiteConfigMap>(CM, configMap('w-x', { v: '1' }));
          const y0 = await backend.create<SuiteConfigMap>(CM, configMap('w-y', { v: '1' }));
          const y = await backend.update<SuiteConfigMap>(CM, { ...y0, data: { v: '2' } });
          const options = start === undefined ? {} : { resourceVersion: start };
          await watching<SuiteConfigMap>(backend, CM, options, ctx.waitMs, async (watch) => {
            const initial = await watch.take(2, 'the initial ADDED events');
            expect(initial.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
            const byName = new Map(initial.map((e) => [e.object.metadata.name, e.object]));
            expect(byName.get('w-x'), 'the initial ADDED carries the current state').toEqual(x);
            expect(byName.get('w-y'), 'the initial ADDED carries the current state').toEqual(y);
            const x2 = await backend.update<SuiteConfigMap>(CM, { ...x, data: { v: '2' } });
            expect(await watch.expect('MODIFIED', 'w-x')).toEqual(x2);
          });
        },
      );
    }

    check(
      ctx,
      'sendInitialEvents ends the initial ADDED events with a BOOKMARK marked initialEventsEnd',
      async ({ backend }) => {
        const x = await backend.create<SuiteConfigMap>(CM, configMap('w-x'));
        const y = await backend.create<SuiteConfigMap>(CM, configMap('w-y'));
        await watching<SuiteConfigMap>(
          backend,
          CM,
          { sendInitialEvents: true, allowBookmarks: true },
          ctx.waitMs,
          async (watch) => {
            const initial: SuiteConfigMap[] = [];
            for (;;) {
              const event = await watch.nextEvent('the initial events and their end bookmark');
              if (event.type === 'BOOKMARK') {
                if (event.initialEventsEnd !== true) continue;
                expect(names(initial)).toEqual(['w-x', 'w-y']);
                for (const object of [x, y]) {
                  expect(compareRevisions(event.resourceVersion, rv(object))).toBeGreaterThanOrEqual(0);
                }
                break;
              }
              expect(event.type, 'only ADDED events come before the end bookmark').toBe('ADDED');
              initial.push(event.object);
            }
            const x2 = await backend.update<SuiteConfigMap>(CM, { ...x, data: { v: '2' } });
            expect(await watch.expect('MODIFIED', 'w-x')).toEqual(x2);
          },
        );
      },
    );

    check(
      ctx,
      'a watch from a resourceVersion older than the retained history throws ExpiredError from the iteration',
      async ({ backend, compact }) => {
        const list = await backend.list(CM);
        const a = await backend.create<SuiteConfigMap>(CM, configMap('w-a', { v: '1' }));
        await backend.update(CM, { ...a, data: { v: '2' } });
        await compact();
        const watch = new WatchReader(backend, CM, { resourceVersion: list.resourceVersion }, ctx.waitMs);
        try {
          const error = await watch.nextResult('the ExpiredError').then(
            (result) => expect.fail(`expected ExpiredError, got ${JSON.stringify(result)}`),
            (thrown: unknown) => thrown,
          );
          expect(error).toBeInstanceOf(ExpiredError);
          expect(isExpired(error)).toBe(true);
        } finally {
          await watch.close();
        }
      },
      { compact: true },
    );

    check(
      ctx,
      'aborting the signal ends the iteration cleanly, also while a read is pending',
      async ({ backend }) => {
        const list = await backend.list(CM);
        const watch = new WatchReader(backend, CM, { resourceVersion: list.resourceVersion }, ctx.waitMs);
        try {
          const pending = watch.nextResult('the end of the aborted watch');
          // Give the read a moment to really be waiting, then abort.
          await new Promise((resolve) => setTimeout(resolve, 50));
          watch.abort();
          expect(await pending).toEqual({ done: true, value: undefined });
        } finally {
          await watch.close();
        }
      },
    );

    check(ctx, 'timeoutMs ends the iteration cleanly', async ({ backend }) => {
      const list = await backend.list(CM);
      const watch = new WatchReader(
        backend,
        CM,
        { resourceVersion: list.resourceVersion, timeoutMs: 1000 },
        ctx.waitMs,
      );
      try {
        await watch.expectEnd('the end of the watch after timeoutMs', 1000 + ctx.waitMs);
      } finally {
        await watch.close();
      }
    });

    check(
      ctx,
      'resourceVersions in a watch stream strictly increase and match the writes',
      async ({ backend }) => {
        const list = await backend.list(CM);
        const written: string[] = [];
        let a = await backend.create<SuiteConfigMap>(CM, configMap('w-a', { v: '0' }));
        let b = await backend.create<SuiteConfigMap>(CM, configMap('w-b', { v: '0' }));
        written.push(rv(a), rv(b));
        for (let i = 1; i <= 3; i++) {
          a = await backend.update<SuiteConfigMap>(CM, { ...a, data: { v: String(i) } });
          b = await backend.update<SuiteConfigMap>(CM, { ...b, data: { v: String(i) } });
          written.push(rv(a), rv(b));
        }
        await watching(backend, CM, { resourceVersion: list.resourceVersion }, ctx.waitMs, async (watch) => {
          const seen = (await watch.take(written.length, 'the written changes')).map((e) => rv(e.object));
          expect(seen).toEqual(written);
          for (let i = 1; i < seen.length; i++) expect(compareRevisions(seen[i], seen[i - 1])).toBe(1);
        });
      },
    );
  });
}
