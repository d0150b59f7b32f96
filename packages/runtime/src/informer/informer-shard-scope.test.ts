import { describe, expect, it } from 'vitest';
import type { ObjectEvent } from '../event/index.ts';
import { MemoryLogger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { slotsSelector, uidSlot } from '../sharding/slots.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { Informer } from './informer.ts';
import type { InformerShardScope } from './options.ts';

const configMaps = suiteTypes.configMap;

/** A scope whose selector the test sets: `set` changes it and tells the listeners. */
class TestScope implements InformerShardScope {
  #selector: string;
  readonly #listeners = new Set<() => void>();

  constructor(selector: string) {
    this.#selector = selector;
  }

  selector(): string {
    return this.#selector;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  set(selector: string): void {
    this.#selector = selector;
    for (const listener of this.#listeners) listener();
  }
}

const LOW = Array.from({ length: 32 }, (_, s) => s);
const HIGH = Array.from({ length: 32 }, (_, s) => s + 32);
const inLow = (o: KubeObject): boolean => uidSlot(o.metadata.uid ?? '') < 32;

async function setUp(scope: InformerShardScope) {
  const clock = new VirtualClock({ startMs: 1_000_000 });
  const backend = new ReferenceBackend({ types: [configMaps], clock });
  for (let i = 0; i < 60; i++) {
    await backend.create(configMaps, { metadata: { namespace: 'default', name: `cm-${i}` } });
  }
  const logger = new MemoryLogger();
  const informer = new Informer({ backend, type: configMaps, clock, logger, shardScope: scope });
  const events: ObjectEvent<KubeObject>[] = [];
  informer.subscribe((event) => events.push(event));
  const stop = new AbortController();
  const run = informer.start(stop.signal);
  await clock.advance(100);
  await informer.waitForSync(stop.signal);
  const all = async () => (await backend.list(configMaps, {})).items;
  const names = (objects: readonly KubeObject[]) => objects.map((o) => o.metadata.name ?? '').sort();
  const cached = () => names(informer.cache.list());
  const finish = async () => {
    stop.abort();
    await run;
  };
  return { clock, backend, informer, events, logger, all, names, cached, finish };
}

describe('an informer with a shard scope', () => {
  it('caches only the shard, and when the shard moves creates what came in and drops what left without a delete', async () => {
    const scope = new TestScope(slotsSelector(LOW));
    const h = await setUp(scope);
    const objects = await h.all();
    const low = objects.filter(inLow);
    const high = objects.filter((o) => !inLow(o));
    expect(low.length).toBeGreaterThan(10);
    expect(high.length).toBeGreaterThan(10);
    expect(h.cached()).toEqual(h.names(low));
    expect(h.events.every((e) => e.type === 'create' && inLow(e.object))).toBe(true);

    // Grow the shard to everything: the upper half is created, nothing else happens.
    h.events.length = 0;
    scope.set(slotsSelector([...LOW, ...HIGH]));
    await h.clock.advance(100);
    expect(h.cached()).toEqual(h.names(objects));
    expect(h.events.map((e) => e.type)).toEqual(high.map(() => 'create'));
    expect(h.names(h.events.map((e) => e.object))).toEqual(h.names(high));

    // Shrink it to the upper half: the lower half leaves the cache, and no one hears a delete.
    h.events.length = 0;
    scope.set(slotsSelector(HIGH));
    await h.clock.advance(100);
    expect(h.cached()).toEqual(h.names(high));
    expect(h.events).toEqual([]);
    expect(h.informer.stats().relists).toBe(2);

    // Events outside the shard do not arrive; inside it they do, deletes included.
    const [lowOne] = low;
    const [highOne] = high;
    await h.backend.delete(configMaps, { namespace: 'default', name: lowOne?.metadata.name ?? '' });
    await h.backend.delete(configMaps, { namespace: 'default', name: highOne?.metadata.name ?? '' });
    await h.clock.advance(100);
    expect(h.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['delete', highOne?.metadata.name],
    ]);
    await h.finish();
  });

  it('a delete in the shard while it moves is still a delete; of an object that left, nobody hears', async () => {
    const scope = new TestScope(slotsSelector(LOW));
    const h = await setUp(scope);
    const low = (await h.all()).filter(inLow);
    const staying = low.filter((o) => uidSlot(o.metadata.uid ?? '') < 16);
    const leaving = low.filter((o) => uidSlot(o.metadata.uid ?? '') >= 16);
    const [gone] = staying;
    const [goneElsewhere] = leaving;
    expect(gone && goneElsewhere).toBeDefined();
    h.events.length = 0;
    // The shard shrinks to slots 0–15, and before the informer lists it again one object of each
    // half is deleted.
    scope.set(slotsSelector(LOW.slice(0, 16)));
    await h.backend.delete(configMaps, { namespace: 'default', name: gone?.metadata.name ?? '' });
    await h.backend.delete(configMaps, { namespace: 'default', name: goneElsewhere?.metadata.name ?? '' });
    await h.clock.advance(100);
    expect(h.events.map((e) => [e.type, e.object.metadata.name])).toEqual([['delete', gone?.metadata.name]]);
    expect(h.cached()).toEqual(h.names(staying.filter((o) => o !== gone)));
    await h.finish();
  });

  it('keeps its shard, with an error logged, when the scope gives a selector that does not parse', async () => {
    const scope = new TestScope(slotsSelector(LOW));
    const h = await setUp(scope);
    const before = h.cached();
    scope.set('shardRange(object.metadata.uid, nope)');
    await h.clock.advance(100);
    expect(h.cached()).toEqual(before);
    expect(h.informer.stats().relists).toBe(0);
    expect(
      h.logger.records.some(
        (r) => r.message === 'The shard scope gave an invalid selector; keeping the current one',
      ),
    ).toBe(true);
    await h.finish();
  });

  it('refuses a scope beside a shardSelector, and a scope that is not one', () => {
    const backend = new ReferenceBackend({ types: [configMaps] });
    const scope = new TestScope(slotsSelector(LOW));
    expect(
      () =>
        new Informer({ backend, type: configMaps, shardScope: scope, shardSelector: slotsSelector(HIGH) }),
    ).toThrow(/shardScope.*one or the other/);
    expect(() => new Informer({ backend, type: configMaps, shardScope: { selector: 'x' } as never })).toThrow(
      /shardScope/,
    );
  });
});
