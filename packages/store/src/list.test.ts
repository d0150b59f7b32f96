import {
  BadRequestError,
  ExpiredError,
  InvalidError,
  type ObjectList,
  TimeoutError,
} from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import type { Store } from './store.ts';
import { CLUSTER_WIDGET, CM, type ConfigMap, cm, makeStore } from './testdata/fixtures.ts';

/**
 * This thread's CPU time in milliseconds. Work is bounded in CPU time, not wall time: on a loaded
 * machine the thread is descheduled for as long as the scheduler likes, which is no work of ours.
 */
const cpuMs = (): number => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1_000;
};

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

describe('list', () => {
  it('returns objects in key order: namespace, then name', async () => {
    const { store } = makeStore();
    await seed(store);
    expect(keysOf(await store.list(CM))).toEqual(['a/y', 'a/z', 'a-b/q', 'b/x', 'c/w']);
  });

  it('scopes by namespace and filters by label and field selectors', async () => {
    const { store } = makeStore();
    await seed(store);
    expect(keysOf(await store.list(CM, { namespace: 'a' }))).toEqual(['a/y', 'a/z']);
    expect(keysOf(await store.list(CM, { labelSelector: 'app=web' }))).toEqual(['a/y', 'a-b/q', 'b/x']);
    expect(keysOf(await store.list(CM, { fieldSelector: 'metadata.name=x' }))).toEqual(['b/x']);
    expect(keysOf(await store.list(CM, { fieldSelector: 'metadata.namespace!=a' }))).toEqual([
      'a-b/q',
      'b/x',
      'c/w',
    ]);
    expect(keysOf(await store.list(CM, { namespace: 'a', labelSelector: 'app in (db)' }))).toEqual(['a/z']);
  });

  it('bad selectors, limits and unsupported fields are BadRequestErrors', async () => {
    const { store } = makeStore();
    await expect(store.list(CM, { labelSelector: 'a in (b' })).rejects.toBeInstanceOf(BadRequestError);
    await expect(store.list(CM, { fieldSelector: 'spec.x=1' })).rejects.toThrow(
      'field label not supported: spec.x',
    );
    await expect(store.list(CM, { limit: -1 })).rejects.toBeInstanceOf(BadRequestError);
    await expect(store.list(CM, { namespace: 5 as never })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('carries the revision it was taken at', async () => {
    const { store } = makeStore();
    await seed(store);
    expect((await store.list(CM)).resourceVersion).toBe(String(store.revision));
  });

  it('ignores the namespace option for cluster-scoped types', async () => {
    const { store } = makeStore();
    await store.create(CLUSTER_WIDGET, { metadata: { name: 'c' } });
    expect((await store.list(CLUSTER_WIDGET, { namespace: 'default' })).items).toHaveLength(1);
  });
});

describe('resourceVersion semantics of list', () => {
  it("unset and '0' serve the latest state", async () => {
    const { store } = makeStore();
    await seed(store);
    for (const resourceVersion of [undefined, '0']) {
      const list = await store.list(CM, resourceVersion === undefined ? {} : { resourceVersion });
      expect(list.items).toHaveLength(5);
      expect(list.resourceVersion).toBe(String(store.revision));
    }
  });

  it('N (NotOlderThan) serves the latest state; Exact N serves the snapshot at N', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', { v: '1' }));
    const at = store.revision;
    const a = await store.get<ConfigMap>(CM, { namespace: 'default', name: 'a' });
    await store.update(CM, { ...a, data: { v: '2' } });
    await store.create(CM, cm('b'));
    const notOlder = await store.list<ConfigMap>(CM, { resourceVersion: String(at) });
    expect(notOlder.items.map((o) => o.data?.v)).toEqual(['2', undefined]);
    const exact = await store.list<ConfigMap>(CM, {
      resourceVersion: String(at),
      resourceVersionMatch: 'Exact',
    });
    expect(exact.items.map((o) => o.data?.v)).toEqual(['1']);
    expect(exact.resourceVersion).toBe(String(at));
    const legacy = await store.list<ConfigMap>(CM, { resourceVersion: String(at), limit: 10 });
    expect(legacy.items.map((o) => o.data?.v)).toEqual(['1']);
  });

  it('Exact N older than the history is an ExpiredError', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const at = store.revision;
    await store.create(CM, cm('b'));
    store.compact();
    await expect(
      store.list(CM, { resourceVersion: String(at), resourceVersionMatch: 'Exact' }),
    ).rejects.toThrow(new ExpiredError('The resourceVersion for the provided list is too old.'));
  });

  it('N ahead of the store waits up to 3 s on the clock: served when it arrives, else TimeoutError', async () => {
    const { store, clock } = makeStore();
    const ahead = String(store.revision + 1);
    let served: ObjectList | undefined;
    void store.list(CM, { resourceVersion: ahead }).then((l) => {
      served = l;
    });
    await clock.advance(1_000);
    expect(served).toBeUndefined();
    await store.create(CM, cm('a'));
    await clock.advance(0);
    expect(served?.items).toHaveLength(1);
    const late = store.list(CM, { resourceVersion: String(store.revision + 5) });
    const outcome = late.catch((e: unknown) => e);
    await clock.advance(3_000);
    const error = (await outcome) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toBe(
      `Timeout: Too large resource version: ${store.revision + 5}, current: ${store.revision}`,
    );
    expect(error.details.causes?.[0]?.reason).toBe('ResourceVersionTooLarge');
  });

  it('resourceVersionMatch is validated as kube-apiserver does (InvalidError), a malformed resourceVersion is a BadRequestError', async () => {
    const { store } = makeStore();
    await expect(store.list(CM, { resourceVersionMatch: 'Exact' })).rejects.toBeInstanceOf(InvalidError);
    await expect(
      store.list(CM, { resourceVersion: '0', resourceVersionMatch: 'Exact' }),
    ).rejects.toBeInstanceOf(InvalidError);
    await expect(
      store.list(CM, { resourceVersion: '1', resourceVersionMatch: 'Newest' as never }),
    ).rejects.toBeInstanceOf(InvalidError);
    for (const resourceVersion of ['abc', '-1', '01', '1.5', '99999999999999999999']) {
      await expect(store.list(CM, { resourceVersion })).rejects.toBeInstanceOf(BadRequestError);
    }
  });
});

describe('scale', () => {
  it('lists 100 000 objects in pages of 500 without scanning the type per page', async () => {
    const { store } = makeStore();
    for (let i = 0; i < 100_000; i++) {
      await store.create(CM, { metadata: { name: `o-${String(i).padStart(6, '0')}`, namespace: 'bench' } });
    }
    const started = cpuMs();
    let count = 0;
    let pages = 0;
    let token: string | undefined;
    do {
      const page: ObjectList = await store.list(CM, {
        limit: 500,
        ...(token === undefined ? {} : { continue: token }),
      });
      count += page.items.length;
      pages++;
      token = page.continue;
    } while (token !== undefined);
    const elapsed = cpuMs() - started;
    expect(count).toBe(100_000);
    expect(pages).toBe(200);
    // A scan of the whole type per page would be ~200 × 100 000 visits; this stays far below a second.
    expect(elapsed).toBeLessThan(2_000);
  }, 60_000);
});
