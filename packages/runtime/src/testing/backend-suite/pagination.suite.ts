import { describe, expect } from 'vitest';
import {
  type Backend,
  BadRequestError,
  ExpiredError,
  isExpired,
  type ListOptions,
  type ObjectList,
} from '../../backend/index.ts';
import type { KubeObject } from '../../object/index.ts';
import { check, expectRejects, keys } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, NS_B, type SuiteConfigMap, suiteTypes } from './types.ts';

const { configMap: CM } = suiteTypes;
const MAX_PAGES = 50;

/** Follows continue tokens from `first` to the last page. */
async function remainingPages(
  backend: Backend,
  first: ObjectList<SuiteConfigMap>,
  options: ListOptions,
): Promise<ObjectList<SuiteConfigMap>[]> {
  const pages: ObjectList<SuiteConfigMap>[] = [];
  let token = first.continue;
  while (token !== undefined) {
    expect(pages.length, 'the list should end within a bounded number of pages').toBeLessThan(MAX_PAGES);
    const page = await backend.list<SuiteConfigMap>(CM, { ...options, continue: token });
    pages.push(page);
    token = page.continue;
  }
  return pages;
}

function items(pages: readonly ObjectList<SuiteConfigMap>[]): SuiteConfigMap[] {
  return pages.flatMap((p) => p.items as SuiteConfigMap[]);
}

/** limit / continue from one snapshot. */
export function definePaginationTests(ctx: SuiteContext): void {
  const needs = { needs: ['pagination'] } as const;
  describe('pagination', () => {
    check(
      ctx,
      'list with limit returns pages of at most limit items with every object exactly once, in key order',
      async ({ backend }) => {
        const expected: string[] = [];
        for (const [ns, name] of [
          [NS, 'p-1'],
          [NS, 'p-2'],
          [NS, 'p-3'],
          [NS, 'p-4'],
          [NS_B, 'p-5'],
          [NS_B, 'p-6'],
          [NS_B, 'p-7'],
        ] as const) {
          await backend.create(CM, configMap(name, { n: name }, { namespace: ns }));
          expected.push(`${ns}/${name}`);
        }
        const first = await backend.list<SuiteConfigMap>(CM, { limit: 3 });
        expect(first.continue, 'a first page of 3 out of 7 has a continue token').toEqual(expect.any(String));
        const pages = [first, ...(await remainingPages(backend, first, { limit: 3 }))];
        for (const page of pages) {
          expect(page.items.length).toBeLessThanOrEqual(3);
          expect(page.resourceVersion, 'every page reports the snapshot resourceVersion').toBe(
            first.resourceVersion,
          );
        }
        expect(pages.at(-1)?.continue).toBeUndefined();
        expect(keys(items(pages))).toEqual(expected);
        const unpaged = await backend.list(CM);
        expect(items(pages)).toEqual(unpaged.items);
      },
      needs,
    );

    check(
      ctx,
      'pagination honours the namespace and label selector on every page',
      async ({ backend }) => {
        for (let i = 1; i <= 6; i++) {
          const labels = { parity: i % 2 === 0 ? 'even' : 'odd' };
          await backend.create(CM, configMap(`q-${i}`, {}, { labels }));
          await backend.create(CM, configMap(`q-${i}`, {}, { namespace: NS_B, labels }));
        }
        const options = { namespace: NS, labelSelector: 'parity=even', limit: 2 };
        const first = await backend.list<SuiteConfigMap>(CM, options);
        const pages = [first, ...(await remainingPages(backend, first, options))];
        expect(keys(items(pages))).toEqual([`${NS}/q-2`, `${NS}/q-4`, `${NS}/q-6`]);
      },
      needs,
    );

    check(
      ctx,
      "later pages come from the first page's snapshot: objects created, deleted or modified in between do not appear, disappear or change",
      async ({ backend }) => {
        const before = new Map<string, KubeObject>();
        for (const name of ['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6']) {
          before.set(name, await backend.create(CM, configMap(name, { v: 'old' })));
        }
        const first = await backend.list<SuiteConfigMap>(CM, { namespace: NS, limit: 2 });
        expect(keys(first.items)).toEqual([`${NS}/c-1`, `${NS}/c-2`]);
        // Changes behind the cursor, after the first page was served.
        await backend.create(CM, configMap('c-35', { v: 'new' }));
        await backend.create(CM, configMap('c-9', { v: 'new' }));
        await backend.delete(CM, { namespace: NS, name: 'c-5' });
        const c6 = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'c-6' });
        await backend.update(CM, { ...c6, data: { v: 'new' } });
        const rest = items(await remainingPages(backend, first, { namespace: NS, limit: 2 }));
        expect(keys(rest)).toEqual([`${NS}/c-3`, `${NS}/c-4`, `${NS}/c-5`, `${NS}/c-6`]);
        for (const item of rest) expect(item).toEqual(before.get(item.metadata.name ?? ''));
      },
      needs,
    );

    check(
      ctx,
      'a continue token rejects with ExpiredError once history was compacted past its snapshot',
      async ({ backend, compact }) => {
        for (const name of ['e-1', 'e-2', 'e-3', 'e-4', 'e-5']) await backend.create(CM, configMap(name));
        const first = await backend.list<SuiteConfigMap>(CM, { limit: 2 });
        expect(first.continue).toEqual(expect.any(String));
        const e1 = await backend.get<SuiteConfigMap>(CM, { namespace: NS, name: 'e-1' });
        await backend.update(CM, { ...e1, data: { v: 'later' } });
        await backend.create(CM, configMap('e-6'));
        await compact();
        const error = await expectRejects(
          backend.list(CM, { limit: 2, continue: first.continue as string }),
          ExpiredError,
          'continue after compaction',
        );
        expect(isExpired(error)).toBe(true);
        expect(error.status).toBe(410);
      },
      { ...needs, compact: true },
    );

    check(
      ctx,
      'a malformed continue token rejects with BadRequestError',
      async ({ backend }) => {
        await backend.create(CM, configMap('m-1'));
        await expectRejects(
          backend.list(CM, { limit: 2, continue: 'not a continue token' }),
          BadRequestError,
          'malformed continue token',
        );
      },
      needs,
    );
  });
}
