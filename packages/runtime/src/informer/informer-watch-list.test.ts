import { describe, expect, it } from 'vitest';
import { BadRequestError, ExpiredError, type WatchOptions } from '../backend/index.ts';
import {
  Informer,
  InformerErrorCodes,
  InitialEventsIncompleteError,
  WatchListUnsupportedError,
} from './index.ts';
import { type ConfigMap, configMap, configMaps, startInformer } from './test-harness.ts';
import { FakeBackend, settle } from './testing/index.ts';

const STREAMED = { sendInitialEvents: true, allowBookmarks: true };

function rejectStreamedLists(options: WatchOptions): void {
  if (options.sendInitialEvents === true) throw new BadRequestError('sendInitialEvents is not supported');
}

describe('Informer with streamed lists (sendInitialEvents)', () => {
  it('syncs from one watch with sendInitialEvents and keeps that watch for live events', async () => {
    const h = await startInformer([configMap('a'), configMap('b')], { initialList: 'watch-list' });
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.backend.listCalls).toEqual([]);
    expect(h.backend.watchCalls).toEqual([expect.objectContaining(STREAMED)]);
    expect(h.backend.watchCalls[0]).not.toHaveProperty('resourceVersion');
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name, 'isInInitialList' in e])).toEqual([
      ['create', 'a', true],
      ['create', 'b', true],
    ]);
    expect(h.informer.state).toEqual({ phase: 'watching', resourceVersion: '2' });
    h.replay.clear();
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    h.backend.set(configMaps, configMap('c'));
    await settle();
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['update', 'a'],
      ['create', 'c'],
    ]);
    expect(h.backend.watchCalls).toHaveLength(1);
    expect(h.informer.lastSyncResourceVersion).toBe('4');
    expect(h.informer.stats()).toMatchObject({ lists: 1, relists: 0, watches: 1, events: 2 });
    expect(h.replay.violations).toEqual([]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('is the default, and streams with the informer selectors, applying the transform to every initial object', async () => {
    const backend = new FakeBackend();
    backend.set(configMaps, configMap('a', { labels: { app: 'web' } }));
    backend.set(configMaps, configMap('b', { labels: { app: 'db' } }));
    backend.set(configMaps, configMap('c', { labels: { app: 'web' }, namespace: 'other' }));
    const informer = new Informer<ConfigMap>({
      backend,
      type: configMaps,
      namespace: 'default',
      labelSelector: 'app=web',
      transform: (o) => ({ ...o, data: { v: 'transformed' } }),
    });
    const stop = new AbortController();
    const run = informer.start(stop.signal);
    await informer.waitForSync(stop.signal);
    expect(backend.listCalls).toEqual([]);
    expect(backend.watchCalls).toEqual([
      expect.objectContaining({ ...STREAMED, namespace: 'default', labelSelector: 'app=web' }),
    ]);
    expect(informer.cache.list().map((o) => [o.metadata.name, o.data?.v])).toEqual([['a', 'transformed']]);
    expect(Object.isFrozen(informer.cache.list()[0])).toBe(true);
    stop.abort();
    await run;
  });

  it('resolves waitForSync only once the initial-events-end bookmark is processed, publishing nothing before it', async () => {
    const h = await startInformer(
      [configMap('a'), configMap('b')],
      { initialList: 'watch-list' },
      {
        prepare: (backend) => backend.holdInitialEventsEnd(),
      },
    );
    let synced = false;
    const waiting = h.informer.waitForSync(h.controller.signal).then(() => {
      synced = true;
    });
    h.backend.set(configMaps, configMap('c'));
    await settle();
    expect(synced).toBe(false);
    expect(h.informer.cache.size).toBe(0);
    expect(h.replay.events).toEqual([]);
    expect(h.informer.state).toEqual({ phase: 'listing', from: 'consistent', method: 'watch-list' });
    h.backend.releaseInitialEventsEnd();
    await waiting;
    expect(synced).toBe(true);
    await settle();
    // The list as of the bookmark, then the change made while it was held, on the same watch.
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['create', 'a'],
      ['create', 'b'],
      ['create', 'c'],
    ]);
    expect(h.backend.watchCalls).toHaveLength(1);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('drops what it received and retries after a backoff when the watch ends before the end bookmark', async () => {
    const h = await startInformer(
      [configMap('a'), configMap('b')],
      { initialList: 'watch-list' },
      {
        prepare: (backend) => backend.holdInitialEventsEnd(),
      },
    );
    h.backend.dropWatches();
    await settle();
    expect(h.informer.hasSynced()).toBe(false);
    expect(h.informer.cache.size).toBe(0);
    expect(h.replay.events).toEqual([]);
    const state = h.informer.state;
    expect(state).toMatchObject({ phase: 'backingOff', next: 'list' });
    const error = (state as { error: unknown }).error;
    expect(error).toBeInstanceOf(InitialEventsIncompleteError);
    expect(error).toMatchObject({ code: InformerErrorCodes.INITIAL_EVENTS_INCOMPLETE, received: 2 });
    expect(h.informer.stats()).toMatchObject({ lists: 0, listErrors: 1 });
    await h.clock.advance((state as { delayMs: number }).delayMs);
    await settle();
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.backend.watchCalls).toEqual([
      expect.objectContaining(STREAMED),
      expect.objectContaining(STREAMED),
    ]);
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['create', 'a'],
      ['create', 'b'],
    ]);
    expect(h.replay.violations).toEqual([]);
    await h.stop();
  });

  it('streams the list again at once when the watch expires before the end bookmark', async () => {
    const h = await startInformer(
      [configMap('a')],
      { initialList: 'watch-list' },
      {
        prepare: (backend) => backend.holdInitialEventsEnd(),
      },
    );
    h.backend.breakWatches(new ExpiredError('too old'));
    await settle();
    expect(h.clock.now()).toBe(0);
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.backend.watchCalls).toHaveLength(2);
    expect(h.backend.watchCalls[1]).not.toHaveProperty('resourceVersion');
    expect(h.informer.stats()).toMatchObject({ expired: 1, lists: 1, relists: 0 });
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual([['create', 'a']]);
    await h.stop();
  });

  it('relists with a streamed list not older than the last seen resourceVersion when a watch expires, diffing like a list', async () => {
    const h = await startInformer([configMap('a'), configMap('b')], { initialList: 'watch-list' });
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    await settle();
    h.replay.clear();
    h.backend.breakWatches(new ExpiredError('too old'));
    h.backend.remove(configMaps, { namespace: 'default', name: 'b' });
    h.backend.set(configMaps, configMap('c'));
    h.backend.compact();
    await settle();
    expect(h.clock.now()).toBe(0);
    expect(h.backend.listCalls).toEqual([]);
    expect(h.backend.watchCalls.at(-1)).toEqual(
      expect.objectContaining({ ...STREAMED, resourceVersion: '3' }),
    );
    expect(
      h.replay.events.map((e) => [
        e.type,
        e.object.metadata.name,
        e.type === 'delete' && e.finalStateUnknown,
      ]),
    ).toEqual([
      ['delete', 'b', true],
      ['create', 'c', false],
    ]);
    expect(h.informer.stats()).toMatchObject({ lists: 2, relists: 1, expired: 1 });
    expect(h.replay.violations).toEqual([]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('auto: falls back to paginated lists for good, at once, when the backend rejects sendInitialEvents', async () => {
    const h = await startInformer(
      [configMap('a')],
      { initialList: 'auto' },
      {
        prepare: (backend) => {
          backend.beforeWatch = rejectStreamedLists;
        },
      },
    );
    expect(h.clock.now()).toBe(0);
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.backend.listCalls).toHaveLength(1);
    expect(h.informer.stats()).toMatchObject({ watchListFallbacks: 1, lists: 1, listErrors: 0 });
    const fallback = h.logger.records.find(
      (r) => r.message === 'Streamed lists unsupported; using paginated lists',
    );
    const err = fallback?.fields.err as Error | undefined;
    expect(err).toBeInstanceOf(WatchListUnsupportedError);
    expect(err?.cause).toBeInstanceOf(BadRequestError);
    // A relist after an expiry lists page by page again: the fallback is remembered.
    h.backend.set(configMaps, configMap('b'));
    await settle();
    h.backend.breakWatches(new ExpiredError('too old'));
    await settle();
    expect(h.backend.listCalls).toHaveLength(2);
    expect(h.backend.watchCalls.filter((w) => w.sendInitialEvents === true)).toHaveLength(1);
    expect(h.informer.stats()).toMatchObject({ watchListFallbacks: 1, relists: 1 });
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('auto: falls back when a MODIFIED event comes before the end bookmark (a backend that ignores sendInitialEvents)', async () => {
    const h = await startInformer(
      [configMap('a')],
      { initialList: 'auto' },
      {
        prepare: (backend) => backend.holdInitialEventsEnd(),
      },
    );
    const [a] = h.backendObjects();
    h.backend.inject(configMaps, { type: 'MODIFIED', object: a });
    await settle();
    expect(h.informer.stats().watchListFallbacks).toBe(1);
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.backend.listCalls).toHaveLength(1);
    expect(h.backend.openWatches).toBe(1);
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual([['create', 'a']]);
    await h.stop();
  });

  it('watch-list: treats a rejection as a list error, backing off and never listing page by page', async () => {
    const h = await startInformer(
      [configMap('a')],
      { initialList: 'watch-list' },
      {
        prepare: (backend) => {
          backend.beforeWatch = rejectStreamedLists;
        },
      },
    );
    const state = h.informer.state;
    expect(state).toMatchObject({ phase: 'backingOff', next: 'list' });
    const error = (state as { error: unknown }).error;
    expect(error).toBeInstanceOf(WatchListUnsupportedError);
    expect((error as Error).cause).toBeInstanceOf(BadRequestError);
    await h.clock.advance(60_000);
    await settle();
    expect(h.backend.listCalls).toEqual([]);
    expect(h.backend.watchCalls.length).toBeGreaterThan(1);
    expect(h.informer.stats()).toMatchObject({ watchListFallbacks: 0, lists: 0 });
    expect(h.informer.hasSynced()).toBe(false);
    h.backend.beforeWatch = undefined;
    await h.clock.advance(60_000);
    await settle();
    expect(h.informer.hasSynced()).toBe(true);
    await h.stop();
  });

  it('skips a malformed initial event and still syncs the rest', async () => {
    const h = await startInformer(
      [configMap('a')],
      { initialList: 'watch-list' },
      {
        prepare: (backend) => backend.holdInitialEventsEnd(),
      },
    );
    h.backend.inject(configMaps, { type: 'ADDED', object: { metadata: { namespace: 'default' } } });
    h.backend.inject(configMaps, { type: 'NOPE' });
    h.backend.releaseInitialEventsEnd();
    await settle();
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.informer.stats().malformed).toBe(2);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('counts a streamed list closed right after its end bookmark as progress, not a short watch', async () => {
    const h = await startInformer([], { initialList: 'watch-list' });
    h.backend.dropWatches();
    await settle();
    expect(h.informer.stats()).toMatchObject({ shortWatches: 0, watches: 2, lists: 1 });
    expect(h.backend.watchCalls[1]).toEqual(
      expect.objectContaining({ resourceVersion: String(h.backend.revision), allowBookmarks: true }),
    );
    expect(h.backend.watchCalls[1]).not.toHaveProperty('sendInitialEvents');
    await h.stop();
  });

  it('replays the cache to listeners on resync after a streamed list', async () => {
    const h = await startInformer([configMap('a')], { initialList: 'watch-list', resyncPeriodMs: 10_000 });
    h.replay.clear();
    await h.clock.advance(10_000);
    await settle();
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name, 'isResync' in e])).toEqual([
      ['update', 'a', true],
    ]);
    await h.stop();
  });

  it('stops cleanly while a streamed list is incomplete, leaving the cache empty and unsynced', async () => {
    const h = await startInformer(
      [configMap('a')],
      { initialList: 'watch-list' },
      {
        prepare: (backend) => backend.holdInitialEventsEnd(),
      },
    );
    await h.stop();
    expect(h.informer.state.phase).toBe('stopped');
    expect(h.informer.cache.size).toBe(0);
    expect(h.informer.hasSynced()).toBe(false);
    expect(h.backend.openWatches).toBe(0);
  });
});
