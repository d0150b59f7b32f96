import { BadRequestError, ExpiredError, type ObjectList } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeContinue, encodeContinue } from './continue-token.ts';
import type { Store } from './store.ts';
import { CM, type ConfigMap, cm, makeStore } from './testdata/fixtures.ts';

const keysOf = (list: ObjectList): string[] =>
  list.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

async function seed(store: Store): Promise<void> {
  for (const [ns, name, app] of [
    ['b', 'x', 'web'],
    ['a', 'z', 'db'],
    ['a', 'y', 'web'],
    ['a-b', 'q', 'web'],
    ['c', 'w', 'db'],
  ] as const) {
    await store.create(CM, cm(name, {}, { namespace: ns, labels: { app } }));
  }
}

async function allPages(
  store: Store,
  options: { limit: number; namespace?: string; labelSelector?: string },
) {
  const pages: ObjectList[] = [];
  let token: string | undefined;
  do {
    const page = await store.list(CM, { ...options, ...(token === undefined ? {} : { continue: token }) });
    pages.push(page);
    token = page.continue;
  } while (token !== undefined && pages.length < 1000);
  return pages;
}

describe('pagination', () => {
  it('pages hold at most limit items, with remainingItemCount, and together every object once in order', async () => {
    const { store } = makeStore();
    await seed(store);
    const pages = await allPages(store, { limit: 2 });
    expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
    expect(pages.map((p) => p.remainingItemCount)).toEqual([3, 1, undefined]);
    expect(pages.flatMap(keysOf)).toEqual(['a/y', 'a/z', 'a-b/q', 'b/x', 'c/w']);
    expect(new Set(pages.map((p) => p.resourceVersion)).size).toBe(1);
  });

  it('remainingItemCount is left out when a selector is used (as Kubernetes does)', async () => {
    const { store } = makeStore();
    await seed(store);
    const first = await store.list(CM, { limit: 1, labelSelector: 'app=web' });
    expect(first.continue).toEqual(expect.any(String));
    expect(first.remainingItemCount).toBeUndefined();
  });

  it('a limit equal to the number of objects returns no continue token', async () => {
    const { store } = makeStore();
    await seed(store);
    const page = await store.list(CM, { limit: 5 });
    expect(page.items).toHaveLength(5);
    expect(page.continue).toBeUndefined();
  });

  it('every page comes from the first page snapshot, whatever is written in between', async () => {
    const { store } = makeStore();
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5']) await store.create(CM, cm(name, { v: 'old' }));
    const first = await store.list<ConfigMap>(CM, { limit: 2 });
    await store.create(CM, cm('c25', { v: 'new' }));
    await store.delete(CM, { namespace: 'default', name: 'c4' });
    const c5 = await store.get<ConfigMap>(CM, { namespace: 'default', name: 'c5' });
    await store.update(CM, { ...c5, data: { v: 'new' } });
    const second = await store.list<ConfigMap>(CM, { limit: 2, continue: first.continue as string });
    expect(second.remainingItemCount).toBe(1);
    const third = await store.list<ConfigMap>(CM, { limit: 2, continue: second.continue as string });
    const rest = [...second.items, ...third.items];
    expect(rest.map((o) => o.metadata.name)).toEqual(['c3', 'c4', 'c5']);
    expect(rest.map((o) => o.data?.v)).toEqual(['old', 'old', 'old']);
    expect(third.continue).toBeUndefined();
  });

  it('remainingItemCount counts the snapshot, not the objects written since', async () => {
    const { store } = makeStore();
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']) await store.create(CM, cm(name));
    const first = await store.list(CM, { limit: 2 });
    expect(first.remainingItemCount).toBe(4);
    await store.delete(CM, { namespace: 'default', name: 'c6' });
    await store.create(CM, cm('c7'));
    await store.create(CM, cm('c8'));
    const second = await store.list(CM, { limit: 2, continue: first.continue as string });
    expect(second.items.map((o) => o.metadata.name)).toEqual(['c3', 'c4']);
    expect(second.remainingItemCount).toBe(2);
    expect((await store.list(CM, { limit: 2 })).remainingItemCount).toBe(5);
  });

  it('pagination honours namespace and selectors on every page', async () => {
    const { store } = makeStore();
    for (let i = 0; i < 10; i++) {
      await store.create(CM, cm(`o${i}`, {}, { namespace: 'a', labels: { even: String(i % 2 === 0) } }));
      await store.create(CM, cm(`o${i}`, {}, { namespace: 'b', labels: { even: String(i % 2 === 0) } }));
    }
    const pages = await allPages(store, { limit: 2, namespace: 'b', labelSelector: 'even=true' });
    expect(pages.flatMap(keysOf)).toEqual(['b/o0', 'b/o2', 'b/o4', 'b/o6', 'b/o8']);
  });

  it('continue tokens are base64url JSON with the snapshot revision and the next key', async () => {
    const { store } = makeStore();
    await seed(store);
    const first = await store.list(CM, { limit: 2 });
    const token = first.continue as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(token, 'base64url').toString())).toEqual({
      v: 'meta.k8s.io/v1',
      rv: Number(first.resourceVersion),
      start: 'a\u0000z\u0000',
    });
  });

  it('a malformed continue token is a BadRequestError, and so is a resourceVersion sent with one', async () => {
    const { store } = makeStore();
    await seed(store);
    const first = await store.list(CM, { limit: 1 });
    for (const token of [
      'not a token',
      'e30',
      Buffer.from('{"v":"x","rv":1,"start":"a"}').toString('base64url'),
    ]) {
      await expect(store.list(CM, { limit: 1, continue: token })).rejects.toBeInstanceOf(BadRequestError);
    }
    await expect(
      store.list(CM, { limit: 1, continue: first.continue as string, resourceVersion: '3' }),
    ).rejects.toThrow('specifying resource version is not allowed when using continue');
  });

  it('a continue token whose snapshot was compacted is an ExpiredError with the Kubernetes message', async () => {
    const { store, clock } = makeStore({ historyWindowMs: 10_000 });
    await seed(store);
    const first = await store.list(CM, { limit: 2 });
    // Still readable: nothing after the snapshot was compacted yet.
    expect((await store.list(CM, { limit: 2, continue: first.continue as string })).items).toHaveLength(2);
    const x = await store.get(CM, { namespace: 'b', name: 'x' });
    await store.update(CM, { ...x, metadata: { ...x.metadata, labels: { app: 'changed' } } });
    await clock.advance(11_000);
    await store.create(CM, cm('later'));
    const error = await store
      .list(CM, { limit: 2, continue: first.continue as string })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as Error).message).toMatch(
      /^The provided continue parameter is too old to display a consistent list result\./,
    );
  });

  it('fuzz: random strings and mangled tokens as continue are BadRequestErrors or pages, never crashes', async () => {
    const { store } = makeStore();
    await seed(store);
    const good = (await store.list(CM, { limit: 1 })).continue as string;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.base64String(),
          fc.nat({ max: good.length - 1 }).map((i) => good.slice(0, i) + good.slice(i + 1)),
          fc
            .record({ rv: fc.integer(), start: fc.string() })
            .map((b) => encodeContinue({ revision: b.rv, start: b.start })),
        ),
        async (token) => {
          try {
            const page = await store.list(CM, { limit: 2, continue: token });
            expect(Array.isArray(page.items)).toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(BadRequestError);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(decodeContinue(good).revision).toBe(store.revision);
  });
});
