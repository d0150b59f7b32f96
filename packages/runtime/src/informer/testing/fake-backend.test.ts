import { describe, expect, it } from 'vitest';
import { ConflictError, ExpiredError, NotFoundError, type WatchEvent } from '../../backend/index.ts';
import { VirtualClock } from '../../testing/index.ts';
import { configMap, configMaps } from '../test-harness.ts';
import { FakeBackend, settle } from './index.ts';

async function take(stream: AsyncIterable<WatchEvent>, count: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const event of stream) {
    out.push(event);
    if (out.length === count) break;
  }
  return out;
}

describe('FakeBackend', () => {
  it('paginates a list from one snapshot, unaffected by writes between pages', async () => {
    const backend = new FakeBackend();
    for (const n of ['a', 'b', 'c']) backend.set(configMaps, configMap(n));
    const first = await backend.list(configMaps, { limit: 2 });
    backend.remove(configMaps, { namespace: 'default', name: 'c' });
    const second = await backend.list(configMaps, { limit: 2, continue: first.continue as string });
    expect([...first.items, ...second.items].map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(second.resourceVersion).toBe(first.resourceVersion);
    expect(second.continue).toBeUndefined();
  });

  it('expires a continue token and a watch older than the compacted history', async () => {
    const backend = new FakeBackend();
    for (const n of ['a', 'b', 'c']) backend.set(configMaps, configMap(n));
    const first = await backend.list(configMaps, { limit: 1 });
    backend.set(configMaps, configMap('d'));
    backend.compact();
    await expect(
      backend.list(configMaps, { limit: 1, continue: first.continue as string }),
    ).rejects.toBeInstanceOf(ExpiredError);
    await expect(take(backend.watch(configMaps, { resourceVersion: '2' }), 1)).rejects.toBeInstanceOf(
      ExpiredError,
    );
  });

  it('replays history after a resourceVersion, then live changes, honouring selectors', async () => {
    const backend = new FakeBackend();
    backend.set(configMaps, configMap('a', { labels: { app: 'web' } }));
    backend.set(configMaps, configMap('b'));
    const stream = backend.watch(configMaps, { resourceVersion: '0', labelSelector: 'app=web' });
    const events = take(stream, 3);
    backend.set(configMaps, configMap('a', { labels: { app: 'db' } }));
    backend.set(configMaps, configMap('b', { labels: { app: 'web' } }));
    expect((await events).map((e) => [e.type, e.type === 'BOOKMARK' ? '' : e.object.metadata.name])).toEqual([
      ['ADDED', 'a'],
      ['DELETED', 'a'],
      ['ADDED', 'b'],
    ]);
    expect(backend.openWatches).toBe(0);
  });

  it('enforces optimistic concurrency and reports missing objects', async () => {
    const backend = new FakeBackend();
    const created = await backend.create(configMaps, configMap('a'));
    await backend.update(configMaps, { ...created, data: { v: '1' } });
    await expect(backend.update(configMaps, { ...created, data: { v: '2' } })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(backend.get(configMaps, { namespace: 'default', name: 'x' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const patched = await backend.patch(
      configMaps,
      { namespace: 'default', name: 'a' },
      { type: 'merge', patch: { data: { w: '2' } } },
    );
    expect((patched as { data?: object }).data).toEqual({ v: '1', w: '2' });
  });

  it('ends a watch after timeoutMs on its clock and when its signal aborts', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    const timed = take(backend.watch(configMaps, { resourceVersion: '0', timeoutMs: 1_000 }), 1);
    const controller = new AbortController();
    const aborted = take(backend.watch(configMaps, { resourceVersion: '0', signal: controller.signal }), 1);
    await settle(2);
    expect(backend.openWatches).toBe(2);
    await clock.advance(1_000);
    expect(await timed).toEqual([]);
    controller.abort();
    expect(await aborted).toEqual([]);
    expect(backend.openWatches).toBe(0);
  });
});
