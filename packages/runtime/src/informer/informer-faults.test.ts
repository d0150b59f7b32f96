import { describe, expect, it } from 'vitest';
import { ExpiredError, type ListOptions, UnavailableError } from '../backend/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { InformerErrorCodes } from './index.ts';
import { configMap, configMaps, startInformer } from './test-harness.ts';
import { settle } from './testing/index.ts';

describe('Informer under watch faults', () => {
  it('resumes a watch dropped mid-stream from the last seen resourceVersion, without relisting, missing or repeating events', async () => {
    const h = await startInformer([configMap('a')]);
    await h.clock.advance(5_000);
    h.replay.clear();
    for (let i = 1; i <= 5; i++) h.backend.set(configMaps, configMap('a', { data: { v: String(i) } }));
    h.backend.dropWatches({ discardQueued: true });
    await settle();
    expect(h.replay.events.map((e) => e.object.data?.v)).toEqual(['1', '2', '3', '4', '5']);
    expect(h.replay.violations).toEqual([]);
    expect(h.backend.listCalls).toHaveLength(1);
    expect(h.backend.watchCalls.map((w) => w.resourceVersion)).toEqual(['1', '2']);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('relists at once from the last seen resourceVersion when a watch that made progress expires', async () => {
    const h = await startInformer([configMap('a'), configMap('b')]);
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    await settle();
    h.replay.clear();
    h.backend.breakWatches(new ExpiredError('too old'));
    h.backend.remove(configMaps, { namespace: 'default', name: 'b' });
    h.backend.set(configMaps, configMap('c'));
    h.backend.compact();
    await settle();
    expect(h.backend.listCalls.at(-1)).toEqual({
      resourceVersion: '3',
      resourceVersionMatch: 'NotOlderThan',
      limit: 500,
    });
    expect(h.clock.now()).toBe(0);
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
    expect(h.replay.violations).toEqual([]);
    expect(h.informer.stats()).toMatchObject({ relists: 1, expired: 1 });
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('relists with a consistent read when the list from the last seen resourceVersion expires too', async () => {
    const h = await startInformer([configMap('a')]);
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    await settle();
    h.backend.beforeList = (options: ListOptions) => {
      if (options.resourceVersion !== undefined) throw new ExpiredError('gone');
    };
    h.backend.breakWatches(new ExpiredError('too old'));
    await settle();
    expect(h.backend.listCalls.slice(1)).toEqual([
      { resourceVersion: '2', resourceVersionMatch: 'NotOlderThan', limit: 500 },
      { limit: 500 },
    ]);
    expect(h.informer.state.phase).toBe('watching');
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('backs off before relisting when a watch expires before any event (its start point was already too old)', async () => {
    const h = await startInformer([configMap('a')]);
    await h.clock.advance(5_000);
    let once = true;
    h.backend.beforeWatch = () => {
      if (!once) return;
      once = false;
      h.backend.set(configMaps, configMap('b'));
      throw new ExpiredError('too old');
    };
    h.backend.dropWatches();
    await settle();
    expect(h.informer.state).toMatchObject({ phase: 'backingOff', next: 'list' });
    expect((h.informer.state as { error: { code: string } }).error.code).toBe(
      InformerErrorCodes.WATCH_EXPIRED_AT_START,
    );
    expect(h.backend.listCalls).toHaveLength(1);
    await h.clock.advance(1_600);
    await settle();
    expect(h.informer.state.phase).toBe('watching');
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('backs off and re-watches without relisting when a watch fails with another error', async () => {
    const h = await startInformer([configMap('a')], { backoff: { jitter: 0 } });
    h.backend.breakWatches(new UnavailableError('reset'));
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(h.informer.state).toMatchObject({ phase: 'backingOff', next: 'watch', delayMs: 800 });
    await h.clock.advance(799);
    expect(h.backend.watchCalls).toHaveLength(1);
    await h.clock.advance(1);
    await settle();
    expect(h.backend.watchCalls.map((w) => w.resourceVersion)).toEqual(['1', '1']);
    expect(h.backend.listCalls).toHaveLength(1);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    expect(h.informer.stats().watchErrors).toBe(1);
    await h.stop();
  });

  it('counts a watch that closes at once without events as an error and backs off, without relisting', async () => {
    const h = await startInformer([configMap('a')], { backoff: { jitter: 0 } });
    const opened: number[] = [];
    h.backend.beforeWatch = () => opened.push(h.clock.now());
    h.backend.closeNextWatches(3);
    h.backend.dropWatches(); // the first watch, 0 ms old and without events, is short too
    await h.clock.advance(60_000);
    expect(opened).toEqual([800, 2_400, 5_600, 12_000]);
    expect(h.informer.stats().shortWatches).toBe(4);
    expect(h.backend.listCalls).toHaveLength(1);
    expect(
      h.logger.records.filter((r) => r.message === 'Watch closed at once without events; backing off'),
    ).toHaveLength(4);
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('re-watches at once when a long watch ends cleanly (a server timeout)', async () => {
    const h = await startInformer([configMap('a')], { watchTimeoutMinMs: 10_000, watchTimeoutMaxMs: 10_000 });
    await h.clock.advance(10_000);
    await settle();
    expect(h.backend.watchCalls).toHaveLength(2);
    expect(h.informer.stats().shortWatches).toBe(0);
    await h.stop();
  });
});

describe('Informer under list faults', () => {
  it('restarts the list at once when a continue token expires mid-list, and emits nothing of the abandoned pages', async () => {
    const initial = ['a', 'b', 'c', 'd', 'e'].map((n) => configMap(n));
    const h = await startInformer(
      initial,
      { pageSize: 2 },
      {
        prepare: (backend) => {
          let expired = false;
          backend.beforeList = (options) => {
            if (options.continue === undefined || expired) return;
            expired = true;
            backend.remove(configMaps, { namespace: 'default', name: 'a' });
            backend.set(configMaps, configMap('f'));
            backend.compact();
          };
        },
      },
    );
    expect(h.backend.listCalls.map((c) => c.continue === undefined)).toEqual([
      true,
      false,
      true,
      false,
      false,
    ]);
    expect(h.clock.now()).toBe(0);
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual(
      ['b', 'c', 'd', 'e', 'f'].map((n) => ['create', n]),
    );
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.informer.stats()).toMatchObject({ lists: 1, expired: 1 });
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('backs off on list errors 800 ms, 1.6 s, 3.2 s, … with jitter from the clock, at most 30 s before jitter', async () => {
    const clock = new VirtualClock({ seed: 7 });
    const draws = new VirtualClock({ seed: 7 });
    const at: number[] = [];
    const h = await startInformer(
      [configMap('a')],
      { clock },
      {
        prepare: (backend) => {
          backend.beforeList = () => at.push(clock.now());
          backend.failNext('list', new UnavailableError('down'), 10);
        },
      },
    );
    await clock.advance(10 * 60_000);
    await settle();
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    const bases = [800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000, 30_000, 30_000];
    expect(gaps).toHaveLength(10);
    gaps.forEach((gap, i) => {
      const base = bases[i] as number;
      expect(gap).toBeGreaterThanOrEqual(base);
      expect(gap).toBeLessThan(2 * base);
      expect(gap).toBeCloseTo(base + draws.random() * base, 6);
    });
    expect(h.informer.hasSynced()).toBe(true);
    expect(h.informer.stats().listErrors).toBe(10);
    expect(h.logger.records.filter((r) => r.message === 'List failed; backing off')).toHaveLength(10);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('starts the backoff over after two minutes without errors, and keeps growing it otherwise', async () => {
    const h = await startInformer([configMap('a')], { backoff: { jitter: 0 } });
    const delays: number[] = [];
    const failWatchAndRecord = async (): Promise<void> => {
      h.backend.breakWatches(new UnavailableError('reset'));
      await settle();
      const state = h.informer.state;
      delays.push(state.phase === 'backingOff' ? state.delayMs : -1);
      await h.clock.advance(state.phase === 'backingOff' ? state.delayMs : 0);
      await settle();
    };
    await failWatchAndRecord();
    await failWatchAndRecord();
    await failWatchAndRecord();
    await h.clock.advance(60_000);
    await failWatchAndRecord();
    await h.clock.advance(121_000);
    await failWatchAndRecord();
    expect(delays).toEqual([800, 1_600, 3_200, 6_400, 800]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });
});

describe("Informer onError (app-sdk's informer ErrorHandler, client-go's watch error handler)", () => {
  it('is told of each failed list and watch with what comes next and when, and of a listener that threw', async () => {
    const seen: [string, unknown][] = [];
    const h = await startInformer(
      [configMap('a')],
      {
        backoff: { jitter: 0 },
        onError: (error, info) => {
          seen.push([(error as Error).message, info]);
          throw new Error('a broken handler is logged, never breaks the informer');
        },
      },
      { prepare: (backend) => backend.failNext('list', new UnavailableError('down'), 2) },
    );
    await h.clock.advance(800);
    await settle();
    await h.clock.advance(1_600);
    await settle();
    expect(seen).toEqual([
      ['down', { informer: 'configmaps', during: 'list', next: 'list', retryInMs: 800 }],
      ['down', { informer: 'configmaps', during: 'list', next: 'list', retryInMs: 1_600 }],
    ]);
    expect(h.informer.hasSynced()).toBe(true);
    seen.length = 0;
    h.backend.breakWatches(new UnavailableError('reset'));
    await settle();
    expect(seen).toEqual([
      ['reset', { informer: 'configmaps', during: 'watch', next: 'watch', retryInMs: 3_200 }],
    ]);
    seen.length = 0;
    h.informer.subscribe((event) => {
      if (event.object.metadata.name === 'b') throw new Error('listener bug');
    });
    await h.clock.advance(3_200);
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(seen).toEqual([
      ['listener bug', { informer: 'configmaps', during: 'listener', eventType: 'create' }],
    ]);
    expect(
      h.logger.records.filter((r) => r.message === 'Informer onError handler threw; ignored'),
    ).toHaveLength(4);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('is an option error when not a function', async () => {
    await expect(startInformer([], { onError: 'log' as never })).rejects.toThrow(/onError/);
  });
});
