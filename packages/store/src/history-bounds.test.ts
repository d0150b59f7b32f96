import { ExpiredError, OptionsError } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateSize } from './object-size.ts';
import { DEFAULT_MAX_HISTORY_BYTES } from './store-options.ts';
import { CM, type ConfigMap, cm, describeEvents, makeStore, Reader } from './testdata/fixtures.ts';

const KEY = { namespace: 'default', name: 'big' };

/** ConfigMap data of `keys` values of `valueBytes` characters each (distinct strings). */
function bigData(keys: number, valueBytes: number): Record<string, string> {
  const data: Record<string, string> = {};
  for (let i = 0; i < keys; i++) data[`k${i}`] = String(i % 10).repeat(valueBytes);
  return data;
}

describe('watch history bounded by bytes', () => {
  it('bounded memory: 1 500 merge patches on a 1 MiB ConfigMap keep the history under maxHistoryBytes, a watcher that keeps up sees every event, a lagging one and an old list get 410', async () => {
    // The history bound decides here; the per-watcher bounds are out of the way.
    const { store } = makeStore({
      maxWatcherBuffer: Number.MAX_SAFE_INTEGER,
      maxWatcherBufferBytes: Number.MAX_SAFE_INTEGER,
    });
    const created = await store.create<ConfigMap>(CM, cm('big', bigData(63, 16 * 1024)));
    const size = estimateSize(created);
    expect(size).toBeGreaterThan(1_000_000);
    const from = created.metadata.resourceVersion as string;
    const keeper = new Reader<ConfigMap>(store, CM, { resourceVersion: from });
    const lagging = new Reader<ConfigMap>(store, CM, { resourceVersion: from });
    // The bound holds whole versions: at most this many superseded versions fit, plus the newest.
    const maxEvents = Math.floor(DEFAULT_MAX_HISTORY_BYTES / size) + 1;
    let peakBytes = 0;
    let peakEvents = 0;
    for (let i = 0; i < 1_500; i++) {
      const written = await store.patch<ConfigMap>(CM, KEY, {
        type: 'merge',
        patch: { data: { counter: String(i) } },
      });
      const event = await keeper.next();
      expect(event.type).toBe('MODIFIED');
      expect(event.type !== 'BOOKMARK' && event.object.metadata.resourceVersion).toBe(
        written.metadata.resourceVersion,
      );
      const { bytes, events } = store.history();
      peakBytes = Math.max(peakBytes, bytes);
      peakEvents = Math.max(peakEvents, events);
    }
    expect(peakBytes).toBeLessThanOrEqual(DEFAULT_MAX_HISTORY_BYTES);
    expect(peakEvents).toBeLessThanOrEqual(maxEvents);
    // The accounting is real: the history is full of whole versions, not empty.
    const { bytes, events, compactedRevision } = store.history();
    expect(bytes).toBeGreaterThan(DEFAULT_MAX_HISTORY_BYTES - 2 * size);
    expect(events).toBeGreaterThanOrEqual(maxEvents - 2);
    expect(compactedRevision).toBe(store.revision - events);

    const error = await lagging.iterator.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as Error).message).toBe(`too old resource version: ${from} (${compactedRevision})`);
    await expect(store.list(CM, { resourceVersion: from, resourceVersionMatch: 'Exact' })).rejects.toThrow(
      ExpiredError,
    );
    const resumed = store.watch(CM, { resourceVersion: from })[Symbol.asyncIterator]();
    await expect(resumed.next()).rejects.toThrow(ExpiredError);
    const fromWindow = new Reader<ConfigMap>(store, CM, { resourceVersion: String(compactedRevision) });
    expect((await fromWindow.drain()).length).toBe(events);
    expect(await keeper.poll()).toBe('pending');
    await keeper.close();
    await fromWindow.close();
  });

  it('bounded memory: the history counts superseded and deleted versions, not current objects; compact() empties it', async () => {
    const { store } = makeStore();
    const a = await store.create<ConfigMap>(CM, cm('a', { v: 'x'.repeat(1000) }));
    await store.create(CM, cm('b', { v: 'y'.repeat(1000) }));
    expect(store.history()).toMatchObject({ events: 2, bytes: 0 });
    const a2 = await store.update<ConfigMap>(CM, { ...a, data: { v: 'z' } });
    expect(store.history().bytes).toBe(estimateSize(a));
    await store.delete(CM, { namespace: 'default', name: 'a' });
    expect(store.history().bytes).toBe(estimateSize(a) + estimateSize(a2));
    store.compact();
    expect(store.history()).toEqual({ events: 0, bytes: 0, compactedRevision: store.revision });
  });

  it('bounded memory: the oldest versions go first, and one write larger than the bound is kept until the next', async () => {
    const { store } = makeStore({ maxHistoryBytes: 5_000 });
    const a = await store.create<ConfigMap>(CM, cm('a', { v: '1'.repeat(2_000) }));
    const reader = new Reader<ConfigMap>(store, CM, {
      resourceVersion: a.metadata.resourceVersion as string,
    });
    const a2 = await store.patch<ConfigMap>(
      CM,
      { namespace: 'default', name: 'a' },
      {
        type: 'merge',
        patch: { data: { v: '2'.repeat(20_000) } },
      },
    );
    expect(describeEvents(await reader.drain())).toEqual([`MODIFIED a@${a2.metadata.resourceVersion}`]);
    // a2 alone is larger than the bound: replacing it leaves the history holding only that write.
    const a3 = await store.patch<ConfigMap>(
      CM,
      { namespace: 'default', name: 'a' },
      {
        type: 'merge',
        patch: { data: { v: '3' } },
      },
    );
    expect(store.history()).toEqual({
      events: 1,
      bytes: estimateSize(a2),
      compactedRevision: Number(a2.metadata.resourceVersion),
    });
    // The reader at a2 needs only a3, which is retained.
    expect(describeEvents(await reader.drain())).toEqual([`MODIFIED a@${a3.metadata.resourceVersion}`]);
    await reader.close();
  });

  it('bounded memory: a consumer more than maxWatcherBufferBytes of unread events behind is ended with 410, one with only the newest event unread never is', async () => {
    const { store } = makeStore({ maxWatcherBufferBytes: 10_000 });
    const first = await store.create<ConfigMap>(CM, cm('a', { v: '0'.repeat(3_000) }));
    const from = first.metadata.resourceVersion as string;
    const slow = store.watch(CM, { resourceVersion: from })[Symbol.asyncIterator]();
    const keeper = new Reader<ConfigMap>(store, CM, { resourceVersion: from });
    for (const name of ['b', 'c', 'd']) {
      await store.create(CM, cm(name, { v: '0'.repeat(3_000) }));
      expect((await keeper.next()).type).toBe('ADDED');
    }
    // 3 × ~3 KB unread: within the bound; the fourth makes it more than 10 000 bytes.
    await store.create(CM, cm('e', { v: '0'.repeat(3_000) }));
    expect((await keeper.next()).type).toBe('ADDED');
    const error = await slow.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as Error).message).toContain('fell more than 10000 bytes behind');
    expect(await slow.next()).toEqual({ done: true, value: undefined });
    // One write far larger than the bound does not end a watcher that read everything before it.
    await store.create(CM, cm('huge', { v: '0'.repeat(50_000) }));
    expect(describeEvents([await keeper.next()])).toEqual([`ADDED huge@${store.revision}`]);
    await keeper.close();
  });

  it('bad input: maxHistoryBytes and maxWatcherBufferBytes must be positive integers', () => {
    for (const value of [0, -1, 1.5, Number.NaN, '64Mi']) {
      expect(() => makeStore({ maxHistoryBytes: value as number })).toThrow(OptionsError);
      expect(() => makeStore({ maxWatcherBufferBytes: value as number })).toThrow(OptionsError);
    }
  });
});

describe('estimateSize', () => {
  /** JSON whose encoding has no escapes and 8-character numbers, so the estimate is exact. */
  const plain = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string({ unit: fc.constantFrom(...'abcXYZ019 -_.:/') }),
      fc.integer({ min: 10_000_000, max: 99_999_999 }),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(fc.string({ unit: fc.constantFrom(...'abcdef-.') }), tie('value'), { maxKeys: 5 }),
    ),
  })).value;

  it('no false size: equals the JSON length for values without escapes (property)', () => {
    fc.assert(
      fc.property(plain, (value) => {
        expect(estimateSize(value)).toBe(JSON.stringify(value).length);
      }),
    );
  });

  it('no crash: any JSON value is sized, and a value nested 100 000 deep does not overflow the stack', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(estimateSize(value)).toBeGreaterThan(0);
      }),
    );
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep };
    // 50 000 × `[…]` and 50 000 × `{"a":…}` around `"x"` (JSON.stringify itself overflows here).
    expect(estimateSize(deep)).toBe(50_000 * 2 + 50_000 * 6 + 3);
  });
});
