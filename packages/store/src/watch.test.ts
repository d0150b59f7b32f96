import {
  BadRequestError,
  ExpiredError,
  NotFoundError,
  TimeoutError,
  type WatchEvent,
} from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CM, type ConfigMap, cm, describeEvents, makeStore, Reader } from './testdata/fixtures.ts';

const KEY = (name: string) => ({ namespace: 'default', name });

describe('watch start points', () => {
  it('from N delivers only events after N: the retained history, then live events', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const from = String(store.revision);
    const b = await store.create<ConfigMap>(CM, cm('b'));
    await store.update(CM, { ...b, data: { v: '2' } });
    const reader = new Reader(store, CM, { resourceVersion: from });
    expect(describeEvents(await reader.drain())).toEqual(['ADDED b@3', 'MODIFIED b@4']);
    await store.delete(CM, KEY('a'));
    const events = await reader.drain();
    expect(describeEvents(events)).toEqual(['DELETED a@5']);
    await reader.close();
  });

  it.each([undefined, '0'])(
    'from %j sends a synthetic ADDED for each current object, then live events',
    async (rv) => {
      const { store } = makeStore();
      await store.create(CM, cm('a'));
      const b = await store.create<ConfigMap>(CM, cm('b'));
      await store.update(CM, { ...b, data: { v: '2' } });
      const reader = new Reader(store, CM, rv === undefined ? {} : { resourceVersion: rv });
      expect(describeEvents(await reader.drain())).toEqual(['ADDED a@2', 'ADDED b@4']);
      await store.create(CM, cm('c'));
      expect(describeEvents(await reader.drain())).toEqual(['ADDED c@5']);
      await reader.close();
    },
  );

  it('sendInitialEvents ends the initial events with a BOOKMARK marked initialEventsEnd at the snapshot revision', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    await store.create(CM, cm('b'));
    const reader = new Reader(store, CM, { sendInitialEvents: true, allowBookmarks: true });
    expect(describeEvents(await reader.drain())).toEqual(['ADDED a@2', 'ADDED b@3', 'BOOKMARK@3 end']);
    await reader.close();
  });

  it('sendInitialEvents: false with no resourceVersion starts at the current revision without initial events', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const reader = new Reader(store, CM, { sendInitialEvents: false });
    expect(await reader.drain()).toEqual([]);
    await store.create(CM, cm('b'));
    expect(describeEvents(await reader.drain())).toEqual(['ADDED b@3']);
    await reader.close();
  });

  it('from a resourceVersion older than the history, next() throws ExpiredError `too old resource version: N (oldest)`', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    await store.create(CM, cm('b'));
    store.compact();
    const iterator = store.watch(CM, { resourceVersion: '2' })[Symbol.asyncIterator]();
    const error = await iterator.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as Error).message).toBe('too old resource version: 2 (3)');
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('from a future resourceVersion it waits on the clock: events once the store gets there, else TimeoutError after 3 s', async () => {
    const { store, clock } = makeStore();
    const ahead = new Reader(store, CM, { resourceVersion: String(store.revision + 2) });
    expect(await ahead.poll()).toBe('pending');
    await store.create(CM, cm('a'));
    await store.create(CM, cm('b'));
    await store.create(CM, cm('c'));
    expect(describeEvents(await ahead.drain())).toEqual(['ADDED c@4']);
    await ahead.close();
    const never = store.watch(CM, { resourceVersion: '100' })[Symbol.asyncIterator]();
    const outcome = never.next().catch((e: unknown) => e);
    await clock.advance(2_999);
    await clock.advance(1);
    const error = (await outcome) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toBe('Timeout: Too large resource version: 100, current: 4');
  });

  it('errors (unknown type, bad selector, bad resourceVersion) come from next(), never from watch()', async () => {
    const { store } = makeStore();
    const cases: [Parameters<typeof store.watch>, new (...args: never[]) => Error][] = [
      [[{ ...CM, plural: 'nothings' }, {}], NotFoundError],
      [[CM, { labelSelector: 'a in (' }], BadRequestError],
      [[CM, { resourceVersion: 'x1' }], BadRequestError],
    ];
    for (const [args, errorClass] of cases) {
      const iterable = store.watch(...args);
      await expect(iterable[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(errorClass);
    }
  });
});

describe('watch filtering', () => {
  it('label selectors see entering as ADDED, staying as MODIFIED, leaving as DELETED with the previous state at the new revision', async () => {
    const { store } = makeStore();
    const reader = new Reader<ConfigMap>(store, CM, {
      resourceVersion: String(store.revision),
      labelSelector: 'tier=web',
    });
    let x = await store.create<ConfigMap>(CM, cm('x', { v: '1' }, { labels: { tier: 'db' } }));
    x = await store.update<ConfigMap>(CM, { ...x, metadata: { ...x.metadata, labels: { tier: 'web' } } });
    x = await store.update<ConfigMap>(CM, { ...x, data: { v: '2' } });
    x = await store.update<ConfigMap>(CM, {
      ...x,
      metadata: { ...x.metadata, labels: { tier: 'db' } },
      data: { v: '3' },
    });
    const events = await reader.drain();
    expect(describeEvents(events)).toEqual(['ADDED x@3', 'MODIFIED x@4', 'DELETED x@5']);
    const left = events[2] as Extract<WatchEvent<ConfigMap>, { object: unknown }>;
    expect(left.object.data).toEqual({ v: '2' });
    expect(left.object.metadata.labels).toEqual({ tier: 'web' });
    await reader.close();
  });

  it('a real delete is DELETED with the last state and the deletion revision', async () => {
    const { store } = makeStore();
    const a = await store.create<ConfigMap>(CM, cm('a', { v: 'last' }));
    const reader = new Reader<ConfigMap>(store, CM, {
      resourceVersion: a.metadata.resourceVersion as string,
    });
    await store.delete(CM, KEY('a'));
    const [event] = await reader.drain();
    expect(event?.type).toBe('DELETED');
    const gone = (event as Extract<WatchEvent<ConfigMap>, { object: unknown }>).object;
    expect(gone.data).toEqual({ v: 'last' });
    expect(gone.metadata.uid).toBe(a.metadata.uid);
    expect(gone.metadata.resourceVersion).toBe(String(store.revision));
    await reader.close();
  });

  it('namespace and field selectors narrow the events', async () => {
    const { store } = makeStore();
    const inNs = new Reader(store, CM, { resourceVersion: '1', namespace: 'b' });
    const byName = new Reader(store, CM, { resourceVersion: '1', fieldSelector: 'metadata.name=x' });
    await store.create(CM, cm('x', {}, { namespace: 'a' }));
    await store.create(CM, cm('y', {}, { namespace: 'b' }));
    await store.create(CM, cm('x', {}, { namespace: 'b' }));
    expect(describeEvents(await inNs.drain())).toEqual(['ADDED y@3', 'ADDED x@4']);
    expect(describeEvents(await byName.drain())).toEqual(['ADDED x@2', 'ADDED x@4']);
  });

  it('property: replaying a selector watch onto a map gives the final selected list', async () => {
    const op = fc.record({
      name: fc.constantFrom('a', 'b', 'c'),
      kind: fc.constantFrom('upsert', 'delete'),
      label: fc.constantFrom('web', 'db'),
      v: fc.nat({ max: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const { store } = makeStore();
        const reader = new Reader<ConfigMap>(store, CM, { resourceVersion: '1', labelSelector: 'tier=web' });
        for (const o of ops) {
          const current = await store.get<ConfigMap>(CM, KEY(o.name)).catch(() => undefined);
          if (o.kind === 'delete') {
            if (current !== undefined) await store.delete(CM, KEY(o.name));
          } else if (current === undefined) {
            await store.create(CM, cm(o.name, { v: String(o.v) }, { labels: { tier: o.label } }));
          } else {
            await store.update(CM, {
              ...current,
              metadata: { ...current.metadata, labels: { tier: o.label } },
              data: { v: String(o.v) },
            });
          }
        }
        const replayed = new Map<string, ConfigMap>();
        for (const event of await reader.drain()) {
          if (event.type === 'BOOKMARK') continue;
          if (event.type === 'DELETED') replayed.delete(event.object.metadata.name as string);
          else replayed.set(event.object.metadata.name as string, event.object);
        }
        const final = await store.list<ConfigMap>(CM, { labelSelector: 'tier=web' });
        expect(
          [...replayed.values()].sort((p, q) =>
            (p.metadata.name as string) < (q.metadata.name as string) ? -1 : 1,
          ),
        ).toEqual(final.items);
        await reader.close();
      }),
      { numRuns: 100 },
    );
  });
});

describe('watch lifetime', () => {
  it('sends a BOOKMARK at the current revision every bookmarkIntervalMs when allowBookmarks is set', async () => {
    const { store, clock } = makeStore({ bookmarkIntervalMs: 1_000 });
    const withBookmarks = new Reader(store, CM, { resourceVersion: '1', allowBookmarks: true });
    const without = new Reader(store, CM, { resourceVersion: '1' });
    await store.create(CM, cm('a'));
    await clock.advance(999);
    expect(describeEvents(await withBookmarks.drain())).toEqual(['ADDED a@2']);
    await clock.advance(1);
    expect(describeEvents(await withBookmarks.drain())).toEqual(['BOOKMARK@2']);
    await store.create(CM, cm('b'));
    await clock.advance(1_000);
    expect(describeEvents(await withBookmarks.drain())).toEqual(['ADDED b@3', 'BOOKMARK@3']);
    expect(describeEvents(await without.drain())).toEqual(['ADDED a@2', 'ADDED b@3']);
  });

  it('with a timeout, a bookmark comes 2 s before the deadline, and the watch ends cleanly at the deadline', async () => {
    const { store, clock } = makeStore();
    const reader = new Reader(store, CM, { resourceVersion: '1', allowBookmarks: true, timeoutMs: 5_000 });
    await clock.advance(3_000);
    expect(describeEvents(await reader.drain())).toEqual(['BOOKMARK@1']);
    await clock.advance(1_999);
    expect(await reader.poll()).toBe('pending');
    await clock.advance(1);
    expect(await reader.poll()).toEqual({ done: true, value: undefined });
  });

  it('aborting the signal ends the iteration, also while a read is pending', async () => {
    const { store } = makeStore();
    const reader = new Reader(store, CM, { resourceVersion: '1' });
    expect(await reader.poll()).toBe('pending');
    reader.abort.abort();
    expect(await reader.poll()).toEqual({ done: true, value: undefined });
  });

  it('a consumer more than maxWatcherBuffer events behind is ended with ExpiredError, and no longer tracked', async () => {
    const { store } = makeStore({ maxWatcherBuffer: 3 });
    const slow = store.watch(CM, { resourceVersion: '1' })[Symbol.asyncIterator]();
    for (const name of ['a', 'b', 'c', 'd']) await store.create(CM, cm(name));
    const error = await slow.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as Error).message).toContain('fell more than 3 events behind');
    expect(await slow.next()).toEqual({ done: true, value: undefined });
  });

  it('only the events a watch would deliver count against maxWatcherBuffer: a storm in another namespace does not expire a namespaced watch (kube filters before buffering), its own backlog still does', async () => {
    const { store } = makeStore({ maxWatcherBuffer: 3 });
    const narrow = store
      .watch(CM, { namespace: 'quiet', resourceVersion: String(store.revision) })
      [Symbol.asyncIterator]();
    for (let i = 0; i < 3; i++) await store.create(CM, cm(`q${i}`, {}, { namespace: 'quiet' }));
    for (let i = 0; i < 50; i++) await store.create(CM, cm(`storm-${i}`));
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const next = await narrow.next();
      if (!next.done && next.value.type !== 'BOOKMARK') names.push(next.value.object.metadata.name as string);
    }
    expect(names).toEqual(['q0', 'q1', 'q2']);
    for (let i = 3; i < 7; i++) await store.create(CM, cm(`q${i}`, {}, { namespace: 'quiet' }));
    const error = await narrow.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as Error).message).toContain('fell more than 3 events behind');
  });

  it('a consumer that falls behind the history window gets ExpiredError', async () => {
    const { store } = makeStore({ maxHistoryEvents: 2 });
    const reader = new Reader(store, CM, { resourceVersion: '1' });
    for (const name of ['a', 'b', 'c']) await store.create(CM, cm(name));
    const result = await reader.iterator.next().catch((e: unknown) => e);
    expect(result).toBeInstanceOf(ExpiredError);
    expect((result as Error).message).toBe('too old resource version: 1 (2)');
  });

  it('history is kept for historyWindowMs on the clock, then resuming from an old revision expires', async () => {
    const { store, clock } = makeStore({ historyWindowMs: 60_000 });
    await store.create(CM, cm('a'));
    await clock.advance(30_000);
    await store.create(CM, cm('b'));
    const early = new Reader(store, CM, { resourceVersion: '1' });
    expect(describeEvents(await early.drain())).toEqual(['ADDED a@2', 'ADDED b@3']);
    await clock.advance(30_001);
    const expired = store.watch(CM, { resourceVersion: '1' })[Symbol.asyncIterator]();
    await expect(expired.next()).rejects.toThrow('too old resource version: 1 (2)');
    const fine = new Reader(store, CM, { resourceVersion: '2' });
    expect(describeEvents(await fine.drain())).toEqual(['ADDED b@3']);
    expect(store.compactedRevision).toBe(2);
  });

  it('each [Symbol.asyncIterator]() call opens an independent watch', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const iterable = store.watch(CM);
    const first = iterable[Symbol.asyncIterator]();
    const second = iterable[Symbol.asyncIterator]();
    expect((await first.next()).value).toMatchObject({ type: 'ADDED' });
    expect((await second.next()).value).toMatchObject({ type: 'ADDED' });
  });

  it('close() ends every open watch', async () => {
    const { store } = makeStore();
    const reader = new Reader(store, CM, { resourceVersion: '1' });
    expect(await reader.poll()).toBe('pending');
    await store.close();
    expect(await reader.poll()).toEqual({ done: true, value: undefined });
  });
});
