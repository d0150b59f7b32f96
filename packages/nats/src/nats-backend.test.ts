import {
  BadRequestError,
  ExpiredError,
  type KubeObject,
  OptionsError,
  resourceType,
  UnavailableError,
  UnsupportedError,
  type WatchEvent,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from './keys.ts';
import { NatsBackend } from './nats-backend.ts';
import { sharedNatsUrl, uniqueSuffix } from './test-harness.ts';
import { CM, deleteBuckets, NS, type TestBackend, testBackend } from './test-support.ts';

/**
 * This thread's CPU time in milliseconds. Work is bounded in CPU time, not wall time: on a loaded
 * machine the thread is descheduled for as long as the scheduler likes, which is no work of ours.
 */
const cpuMs = (): number => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1_000;
};

const APP = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'App',
  plural: 'apps',
  namespaced: true,
});
const configMap = (name: string, labels: Record<string, string> = {}): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, labels },
    data: { v: '1' },
  }) as KubeObject;

/** Reads `count` object events of a watch, then stops it. */
async function take(iterable: AsyncIterable<WatchEvent>, count: number): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of iterable) {
    if (event.type === 'BOOKMARK') continue;
    seen.push(`${event.type} ${event.object.metadata.name}@${event.object.metadata.resourceVersion}`);
    if (seen.length >= count) break;
  }
  return seen;
}

describe('NatsBackend options', () => {
  it('rejects bad options with an OptionsError naming the field', async () => {
    const url = await sharedNatsUrl();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'servers'],
      [{ servers: url, connection: {} }, 'servers'],
      [{ servers: [] }, 'servers'],
      [{ servers: url, bucketPrefix: 'a.b' }, 'bucketPrefix'],
      [{ servers: url, history: 65 }, 'history'],
      [{ servers: url, history: 0 }, 'history'],
      [{ servers: url, replicas: 2.5 }, 'replicas'],
      [{ servers: url, deleteMode: 'erase' }, 'deleteMode'],
      [{ servers: url, continueTtlMs: -1 }, 'continueTtlMs'],
      [{ servers: url, heartbeatMs: 100 }, 'heartbeatMs'],
      [{ servers: url, heartbeatMs: 20_000 }, 'heartbeatMs'],
      [{ servers: url, streamCheckIntervalMs: 0 }, 'streamCheckIntervalMs'],
      [{ servers: url, bucketFor: 'x' }, 'bucketFor'],
      [{ servers: url, types: [{ kind: 'x' }] }, 'type.group'],
    ];
    for (const [options, field] of cases) {
      await expect(NatsBackend.connect(options as never), JSON.stringify(options)).rejects.toMatchObject({
        name: 'OptionsError',
        field,
      });
    }
  });

  it('an unreachable server is an UnavailableError', async () => {
    await expect(NatsBackend.connect({ servers: 'nats://127.0.0.1:1' })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});

describe('NatsBackend', () => {
  let t: TestBackend | undefined;
  afterEach(async () => {
    await t?.destroy();
    t = undefined;
  });

  it('names itself after the server, registers types at runtime and resolves them; clashing buckets are refused', async () => {
    t = await testBackend([CM]);
    const { backend, prefix } = t;
    expect(backend.name).toMatch(/^nats:.+:\d+$/);
    expect(backend.resolveType('v1', 'ConfigMap')).toEqual(CM);
    expect(backend.resolveType('example.com/v1', 'App')).toBeUndefined();
    await expect(backend.list(APP)).rejects.toMatchObject({ reason: 'NotFound' });
    await backend.registerType(APP);
    expect(backend.bucketName(APP)).toBe(`${prefix}example-com_v1_apps`);
    expect(backend.resolveType('example.com/v1', 'App')).toEqual(APP);
    expect(await backend.registerType(APP)).toEqual(APP);
    const clash = resourceType({
      group: 'example-com',
      version: 'v1',
      kind: 'App',
      plural: 'apps',
      namespaced: true,
    });
    await expect(backend.registerType(clash)).rejects.toBeInstanceOf(OptionsError);
  });

  it('bucketFor overrides the bucket of a type', async () => {
    const url = await sharedNatsUrl();
    const name = `custom_${uniqueSuffix()}`;
    const backend = await NatsBackend.connect({
      servers: url,
      types: [CM],
      bucketFor: (type) => (type.kind === 'ConfigMap' ? name : undefined),
    });
    try {
      expect(backend.bucketName(CM)).toBe(name);
      await backend.create(CM, configMap('a'));
      const nc = await connect({ servers: url });
      const kv = await new Kvm(nc).open(name);
      expect((await kv.get(encodeKey(NS, 'a')))?.json()).toMatchObject({ metadata: { name: 'a' } });
      await nc.close();
    } finally {
      await backend.close();
      await deleteBuckets(url, name);
    }
  });

  it('a connection passed in is used and stays open after close()', async () => {
    const url = await sharedNatsUrl();
    const nc = await connect({ servers: url });
    const prefix = `c${uniqueSuffix()}_`;
    const backend = await NatsBackend.connect({ connection: nc, types: [CM], bucketPrefix: prefix });
    await backend.create(CM, configMap('a'));
    await backend.close();
    expect(nc.isClosed()).toBe(false);
    await expect(backend.get(CM, { namespace: NS, name: 'a' })).rejects.toBeInstanceOf(UnavailableError);
    await nc.close();
    await deleteBuckets(url, prefix);
  });

  it('writes of other KV clients: a create is ADDED, a put MODIFIED, a bare delete DELETED with metadata from the key', async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    const start = (await backend.list(CM)).resourceVersion;
    const nc = await connect({ servers: url });
    const kv = await new Kvm(nc).open(backend.bucketName(CM));
    const key = encodeKey(NS, 'foreign');
    const created = await kv.create(key, JSON.stringify({ metadata: {}, data: { by: 'kv' } }));
    const put = await kv.put(
      key,
      JSON.stringify({ metadata: { name: 'foreign' }, data: { by: 'kv', again: 'yes' } }),
    );
    await kv.delete(key);
    await nc.close();
    const events: WatchEvent[] = [];
    for await (const event of backend.watch(CM, { resourceVersion: start })) {
      events.push(event);
      if (events.length === 3) break;
    }
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[0]).toMatchObject({
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'foreign', namespace: NS, resourceVersion: String(created) },
      },
    });
    expect(events[1]).toMatchObject({
      object: { metadata: { resourceVersion: String(put) }, data: { again: 'yes' } },
    });
    expect(events[2]).toMatchObject({
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'foreign', namespace: NS, resourceVersion: String(put + 1) },
      },
    });
  });

  it("deleteMode 'purge' removes a key's history with the delete; watchers from before that history expire", async () => {
    t = await testBackend([CM], { deleteMode: 'purge' });
    const { backend } = t;
    const a = await backend.create(CM, configMap('a'));
    const a2 = await backend.update(CM, { ...a, data: { v: '2' } } as KubeObject);
    const live = backend.watch(CM, { resourceVersion: a2.metadata.resourceVersion as string });
    await backend.delete(CM, { namespace: NS, name: 'a' });
    const [deleted] = await take(live, 1);
    expect(deleted).toMatch(/^DELETED a@/);
    const old = backend.watch(CM, { resourceVersion: a.metadata.resourceVersion as string });
    await expect(take(old, 1)).rejects.toBeInstanceOf(ExpiredError);
  });

  it('dryRun writes validate and return the result without storing it', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    const dry = await backend.create(CM, configMap('a'), { dryRun: true });
    expect(dry.metadata.uid).toEqual(expect.any(String));
    await expect(backend.get(CM, { namespace: NS, name: 'a' })).rejects.toMatchObject({ reason: 'NotFound' });
    const a = await backend.create(CM, configMap('a'));
    const changed = await backend.update(CM, { ...a, data: { v: 'dry' } } as KubeObject, { dryRun: true });
    expect(changed).toMatchObject({ data: { v: 'dry' } });
    expect(await backend.delete(CM, { namespace: NS, name: 'a' }, { dryRun: true })).toEqual({
      status: 'deleted',
    });
    expect(await backend.get(CM, { namespace: NS, name: 'a' })).toEqual(a);
  });

  it('strategic merge and apply patches are UnsupportedErrors, as in the store; an unknown patch type a BadRequestError', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    await backend.create(CM, configMap('a'));
    const key = { namespace: NS, name: 'a' };
    await expect(backend.patch(CM, key, { type: 'strategic', patch: {} })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
    await expect(backend.patch(CM, key, { type: 'apply', patch: {} })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
    await expect(backend.patch(CM, key, { type: 'yaml', patch: {} } as never)).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });

  it('continue tokens expire after continueTtlMs, are capped, and belong to their list', async () => {
    const clock = new VirtualClock();
    t = await testBackend([CM], { clock, continueTtlMs: 1000, maxContinueSnapshots: 2 });
    const { backend } = t;
    for (const name of ['a', 'b', 'c']) await backend.create(CM, configMap(name, { app: 'x' }));
    const page = await backend.list(CM, { limit: 1 });
    await expect(
      backend.list(CM, { limit: 1, continue: page.continue as string, labelSelector: 'app=x' }),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(
      (await backend.list(CM, { limit: 1, continue: page.continue as string })).items[0]?.metadata.name,
    ).toBe('b');
    await clock.advance(1000);
    await expect(backend.list(CM, { limit: 1, continue: page.continue as string })).rejects.toBeInstanceOf(
      ExpiredError,
    );
    const first = await backend.list(CM, { limit: 1 });
    await backend.list(CM, { limit: 1 });
    await backend.list(CM, { limit: 1 });
    expect(backend.stats().heldListSnapshots).toBe(2);
    await expect(backend.list(CM, { limit: 1, continue: first.continue as string })).rejects.toBeInstanceOf(
      ExpiredError,
    );
  });

  it('a label-selector watch from a revision reads the previous state to tell entering from changing', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    let a = await backend.create(CM, configMap('a', { tier: 'db' }));
    let b = await backend.create(CM, configMap('b', { tier: 'web' }));
    const start = (await backend.list(CM)).resourceVersion;
    a = await backend.update(CM, {
      ...a,
      metadata: { ...a.metadata, labels: { tier: 'web' } },
    } as KubeObject);
    b = await backend.update(CM, { ...b, data: { v: '2' } } as KubeObject);
    await backend.update(CM, { ...a, data: { v: '3' } } as KubeObject);
    await backend.update(CM, { ...b, metadata: { ...b.metadata, labels: { tier: 'db' } } } as KubeObject);
    const seen = await take(backend.watch(CM, { resourceVersion: start, labelSelector: 'tier=web' }), 4);
    expect(seen.map((s) => s.split('@')[0])).toEqual(['ADDED a', 'MODIFIED b', 'MODIFIED a', 'DELETED b']);
  });
});

describe('a large bucket', () => {
  let t: TestBackend | undefined;
  afterEach(async () => {
    await t?.destroy();
    t = undefined;
  });

  it('lists 10 000 objects from one consumer without blocking the event loop for long', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    const names = Array.from({ length: 10_000 }, (_, i) => `cm-${String(i).padStart(5, '0')}`);
    for (let i = 0; i < names.length; i += 500) {
      await Promise.all(names.slice(i, i + 500).map((name) => backend.create(CM, configMap(name))));
    }
    // The longest block is the most CPU time this thread spent between two ticks of a 5 ms timer.
    let longest = 0;
    let last = cpuMs();
    const ticker = setInterval(() => {
      const now = cpuMs();
      longest = Math.max(longest, now - last);
      last = now;
    }, 5);
    const started = cpuMs();
    const list = await backend.list(CM);
    const took = cpuMs() - started;
    clearInterval(ticker);
    expect(list.items.map((o) => o.metadata.name)).toEqual(names);
    expect(took).toBeLessThan(10_000);
    expect(longest).toBeLessThan(500);
  }, 120_000);
});
