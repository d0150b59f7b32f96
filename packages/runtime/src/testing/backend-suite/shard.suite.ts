import { describe, expect } from 'vitest';
import { type Backend, BadRequestError, type ObjectList } from '../../backend/index.ts';
import { fnv1a64, matchesShard, shardSelectorFor } from '../../selector/index.ts';
import { check, expectRejects, keys } from './helpers.ts';
import type { SuiteContext } from './options.ts';
import { configMap, NS, NS_B, type SuiteConfigMap, suiteTypes } from './types.ts';
import { watching } from './watch-reader.ts';

const { configMap: CM } = suiteTypes;
const SHARDS = 3;
const MAX_PAGES = 50;

function hex(value: bigint): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}

/** A selector of exactly the objects whose `field` hashes like one of `values`. */
function exactly(field: 'uid' | 'namespace', values: readonly string[]): string {
  return values
    .map((v) => {
      const h = fnv1a64(v);
      return `shardRange(object.metadata.${field}, '${hex(h)}', '${hex(h + 1n)}')`;
    })
    .join(' || ');
}

async function seed(backend: Backend): Promise<SuiteConfigMap[]> {
  const created: SuiteConfigMap[] = [];
  for (let i = 0; i < 12; i++) {
    const namespace = i % 2 === 0 ? NS : NS_B;
    created.push(
      await backend.create<SuiteConfigMap>(CM, configMap(`s-${i}`, { i: String(i) }, { namespace })),
    );
  }
  return created;
}

async function allPages(backend: Backend, shardSelector: string, limit: number): Promise<SuiteConfigMap[]> {
  const items: SuiteConfigMap[] = [];
  let page: ObjectList<SuiteConfigMap> = await backend.list<SuiteConfigMap>(CM, { shardSelector, limit });
  for (let n = 0; ; n++) {
    expect(n, 'the sharded list should end within a bounded number of pages').toBeLessThan(MAX_PAGES);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    if (page.continue === undefined) return items;
    page = await backend.list<SuiteConfigMap>(CM, { shardSelector, limit, continue: page.continue });
  }
}

/** Reading the first event of a watch, which must fail with a BadRequestError. */
async function firstEvent(backend: Backend, shardSelector: string): Promise<void> {
  const iterator = backend.watch(CM, { shardSelector })[Symbol.asyncIterator]();
  try {
    await iterator.next();
  } finally {
    await iterator.return?.();
  }
}

/** KEP-5866 sharded list and watch: `shardSelector` on every list and watch. */
export function defineShardTests(ctx: SuiteContext): void {
  const needs = { needs: ['shardSelectors'] } as const;
  describe('shard selectors (KEP-5866)', () => {
    check(
      ctx,
      'shard-selector lists return exactly their shard, and the shards together return every object once',
      async ({ backend }) => {
        const created = await seed(backend);
        const seen: string[] = [];
        for (let i = 0; i < SHARDS; i++) {
          const shardSelector = shardSelectorFor(i, SHARDS);
          const list = await backend.list<SuiteConfigMap>(CM, { shardSelector });
          const expected = created.filter((o) => matchesShard(o, shardSelector));
          expect(keys(list.items), `shard ${i} of ${SHARDS}`).toEqual(keys(expected).sort());
          seen.push(...keys(list.items));
        }
        expect(seen.sort()).toEqual(keys(created).sort());
        const inNs = await backend.list<SuiteConfigMap>(CM, {
          namespace: NS,
          shardSelector: exactly('namespace', [NS]),
        });
        expect(keys(inNs.items)).toEqual(keys(created.filter((o) => o.metadata.namespace === NS)).sort());
        const other = await backend.list<SuiteConfigMap>(CM, {
          namespace: NS,
          shardSelector: exactly('namespace', [NS_B]),
        });
        expect(other.items).toEqual([]);
      },
      needs,
    );

    check(
      ctx,
      'a shard-selector list pages with continue tokens through its shard only',
      async ({ backend }) => {
        const created = await seed(backend);
        const shardSelector = shardSelectorFor(0, 2);
        const paged = await allPages(backend, shardSelector, 2);
        const whole = await backend.list<SuiteConfigMap>(CM, { shardSelector });
        expect(keys(paged)).toEqual(keys(whole.items));
        expect(keys(paged)).toEqual(keys(created.filter((o) => matchesShard(o, shardSelector))).sort());
      },
      { needs: ['shardSelectors', 'pagination'] },
    );

    check(
      ctx,
      'a shard-selector watch sees every event of the objects in its shard and none of the others',
      async ({ backend }) => {
        const { resourceVersion } = await backend.list(CM);
        const a = await backend.create<SuiteConfigMap>(CM, configMap('w-a'));
        const c = await backend.create<SuiteConfigMap>(CM, configMap('w-c'));
        const b = await backend.create<SuiteConfigMap>(CM, configMap('w-b', {}, { namespace: NS_B }));
        await backend.update(CM, { ...c, data: { v: '2' } });
        const a2 = await backend.update<SuiteConfigMap>(CM, { ...a, data: { v: '2' } });
        await backend.delete(CM, { namespace: NS, name: 'w-c' });
        await backend.delete(CM, { namespace: NS_B, name: 'w-b' });
        const uids = [a, b].map((o) => o.metadata.uid as string);
        const shardSelector = exactly('uid', uids);
        await watching<SuiteConfigMap>(
          backend,
          CM,
          { resourceVersion, shardSelector },
          ctx.waitMs,
          async (watch) => {
            expect(await watch.expect('ADDED', 'w-a')).toEqual(a);
            expect(await watch.expect('ADDED', 'w-b')).toEqual(b);
            expect(await watch.expect('MODIFIED', 'w-a')).toEqual(a2);
            // w-c's events come before this one in the stream: a leak would have shown up here
            await watch.expect('DELETED', 'w-b');
          },
        );
      },
      needs,
    );

    check(
      ctx,
      'a shard-selector watch from no resourceVersion starts with the ADDED events of its shard only',
      async ({ backend }) => {
        await backend.create(CM, configMap('i-b', {}, { namespace: NS_B }));
        const a = await backend.create<SuiteConfigMap>(CM, configMap('i-a'));
        const shardSelector = exactly('namespace', [NS]);
        await watching<SuiteConfigMap>(backend, CM, { shardSelector }, ctx.waitMs, async (watch) => {
          expect(await watch.expect('ADDED', 'i-a')).toEqual(a);
          await backend.create(CM, configMap('i-b2', {}, { namespace: NS_B }));
          await backend.create(CM, configMap('i-a2'));
          await watch.expect('ADDED', 'i-a2');
        });
      },
      needs,
    );

    check(
      ctx,
      'a malformed shard selector is a BadRequestError on list and on watch',
      async ({ backend }) => {
        await backend.create(CM, configMap('m-a'));
        for (const shardSelector of [
          'shardRange(object.metadata.name, "0x0000000000000000", "0x8000000000000000")',
          "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
          'app=web',
        ]) {
          await expectRejects(backend.list(CM, { shardSelector }), BadRequestError, `list ${shardSelector}`);
          await expectRejects(firstEvent(backend, shardSelector), BadRequestError, `watch ${shardSelector}`);
        }
      },
      needs,
    );
  });
}
