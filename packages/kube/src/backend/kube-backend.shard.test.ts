import { BadRequestError, matchesShard, shardSelectorFor, type WatchEvent } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { configMaps } from './fault-test-support.ts';
import { collect, fake, json, stream } from './wire-test-support.ts';

const LOWER = shardSelectorFor(0, 2);

/**
 * ConfigMaps with uids on both sides of the halfway point of the hash space. Real uids are random
 * UUIDs: strings that differ only in their last bytes (`uid-1`, `uid-2`) share FNV-1a's top bits.
 */
const objects = [
  '3f1c2a9e-6b1d-4c55-9a0e-1d2b3c4d5e60',
  'a7e4b0c2-9d3f-4e81-8b6a-2c3d4e5f6071',
  '5b9d8e7f-1a2b-4c3d-8e4f-5a6b7c8d9e02',
  '0d1e2f30-4152-4637-8849-5a6b7c8d9eaf',
  'e1d2c3b4-a596-4877-9968-5a4b3c2d1e0f',
].map((uid, i) => ({
  metadata: { name: `cm-${i}`, namespace: 'home', uid, resourceVersion: String(10 + i) },
}));
const inLower = objects.filter((o) => matchesShard(o, LOWER)).map((o) => o.metadata.name);

describe('KubeBackend shardSelector (KEP-5866)', () => {
  it('sends shardSelector on a list and filters what a server without the feature gate sent anyway', async () => {
    expect(inLower.length, 'the fixture has objects in both halves').toBeGreaterThan(0);
    expect(inLower.length).toBeLessThan(objects.length);
    const { backend, requests } = await fake((_r, res) =>
      // a server that ignores the parameter: every object, and no metadata.shardInfo
      json(res, 200, {
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '20' },
        items: objects,
      }),
    );
    const list = await backend.list(configMaps, { namespace: 'home', shardSelector: LOWER, limit: 100 });
    expect(requests[0]?.url.searchParams.get('shardSelector')).toBe(LOWER);
    expect(requests[0]?.url.searchParams.get('limit')).toBe('100');
    expect(list.items.map((o) => o.metadata.name)).toEqual(inLower);
    await backend.list(configMaps, { shardSelector: '' });
    expect(requests[1]?.url.searchParams.has('shardSelector'), "'' is no selector").toBe(false);
  });

  it('sends shardSelector on a watch and passes on only the events of the shard, and every bookmark', async () => {
    const lines = [
      ...objects.map((object) => ({ type: 'ADDED', object })),
      {
        type: 'BOOKMARK',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '30' } },
      },
    ];
    const { backend, requests } = await fake((_r, res) => stream(res, lines));
    const events = await collect(
      backend.watch(configMaps, { resourceVersion: '9', allowBookmarks: true, shardSelector: LOWER }),
    );
    expect(requests[0]?.url.searchParams.get('shardSelector')).toBe(LOWER);
    const named = events.map((e: WatchEvent) =>
      e.type === 'BOOKMARK' ? 'BOOKMARK' : e.object.metadata.name,
    );
    expect(named).toEqual([...inLower, 'BOOKMARK']);
  });

  it('refuses a malformed selector with a BadRequestError before sending anything', async () => {
    const { backend, requests } = await fake((_r, res) => json(res, 500, {}));
    await expect(backend.list(configMaps, { shardSelector: 'shardRange(x)' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    await expect(collect(backend.watch(configMaps, { shardSelector: 'nope' }))).rejects.toBeInstanceOf(
      BadRequestError,
    );
    expect(requests).toEqual([]);
  });
});
