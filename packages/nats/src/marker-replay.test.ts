/**
 * The opt-in start mode that replays KV delete and purge markers: primaries deleted or purged
 * while no controller ran get a `delete` or `purge` run when one starts with `replayMarkers`, and
 * no run without it (a list shows live objects only).
 */
import {
  type KubeObject,
  Manager,
  MemoryLogger,
  operationOf,
  type PrimaryOperation,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from './keys.ts';
import { NatsBackend } from './nats-backend.ts';
import { CM, eventually, NS, type TestBackend, testBackend } from './test-support.ts';

const configMap = (name: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS },
    data: { v: '1' },
  }) as KubeObject;

let t: TestBackend | undefined;
afterEach(async () => {
  await t?.destroy();
  t = undefined;
});

/**
 * Primaries written while no controller runs: `live` stays; `deleted` is deleted by the backend
 * (a DEL marker with its last state), `kv-deleted` by a bare `kv.delete`, `kv-purged` by `kv.purge`
 * and `purged` by a backend with deleteMode 'purge'.
 */
async function whileDown(backend: NatsBackend, url: string, prefix: string): Promise<void> {
  for (const name of ['live', 'deleted', 'kv-deleted', 'kv-purged', 'purged'])
    await backend.create(CM, configMap(name));
  await backend.delete(CM, { namespace: NS, name: 'deleted' });
  const nc = await connect({ servers: url });
  const kv = await new Kvm(nc).open(backend.bucketName(CM));
  await kv.delete(encodeKey(NS, 'kv-deleted'));
  await kv.purge(encodeKey(NS, 'kv-purged'));
  await nc.close();
  const purging = await NatsBackend.connect({
    servers: url,
    types: [CM],
    bucketPrefix: prefix,
    deleteMode: 'purge',
  });
  await purging.delete(CM, { namespace: NS, name: 'purged' });
  await purging.close();
}

/** Starts a controller of ConfigMaps (with or without the replay) and returns its runs after they settle. */
async function runs(
  backend: NatsBackend,
  replay: boolean,
): Promise<[string, PrimaryOperation | undefined][]> {
  const seen: [string, PrimaryOperation | undefined][] = [];
  const manager = new Manager({ backend, logger: new MemoryLogger() });
  const builder = manager.controller(CM);
  if (replay) builder.watchesSource(backend.replayMarkers(CM));
  builder.complete((key, { causes }) => {
    seen.push([key.name, operationOf(causes)]);
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await eventually(10_000, 'the run of the live primary', () => seen.some(([name]) => name === 'live'));
    if (replay) await eventually(10_000, 'five runs', () => seen.length >= 5);
    // Nothing more comes: give stray runs time to show.
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    stop.abort();
    await running;
  }
  return seen.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

describe('replayMarkers: deletes and purges while no controller ran', () => {
  it('with the replay each deleted or purged primary gets one run with the delete or purge operation', async () => {
    t = await testBackend([CM]);
    await whileDown(t.backend, t.url, t.prefix);
    expect(await runs(t.backend, true)).toEqual([
      ['deleted', 'delete'],
      ['kv-deleted', 'delete'],
      ['kv-purged', 'purge'],
      ['live', 'put'],
      ['purged', 'purge'],
    ]);
  });

  it('without it (the default) they get no run: only live primaries are reconciled', async () => {
    t = await testBackend([CM]);
    await whileDown(t.backend, t.url, t.prefix);
    expect(await runs(t.backend, false)).toEqual([['live', 'put']]);
  });

  it('replays only the namespace asked for, counts what it replayed, and starts once', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    await backend.create(CM, configMap('a'));
    await backend.create(CM, {
      ...configMap('b'),
      metadata: { name: 'b', namespace: 'other' },
    } as KubeObject);
    await backend.delete(CM, { namespace: NS, name: 'a' });
    await backend.delete(CM, { namespace: 'other', name: 'b' });
    const replay = backend.replayMarkers(CM, { namespace: 'other' });
    const added: unknown[] = [];
    const stop = new AbortController();
    const running = replay.start(stop.signal, {
      add: (key, options) => added.push([key, options?.cause]),
      addAfter: () => {},
    });
    await replay.waitForSync(stop.signal);
    expect(added).toEqual([
      [
        { namespace: 'other', name: 'b' },
        expect.objectContaining({ type: 'deleted', source: 'markers:configmaps' }),
      ],
    ]);
    expect(replay.stats()).toEqual({ deleted: 1, purged: 0, failedReads: 0 });
    await expect(replay.start(stop.signal, { add: () => {}, addAfter: () => {} })).rejects.toMatchObject({
      code: 'CONVERGE_ERR_LIFECYCLE_ALREADY_STARTED',
    });
    stop.abort();
    await running;
  });

  it('a failed read is logged, counted and retried after a backoff on the backend clock; the source syncs once a read succeeds', async () => {
    const clock = new VirtualClock();
    const logger = new MemoryLogger();
    t = await testBackend([CM], { clock, logger });
    const { backend, url } = t;
    const bucket = backend.bucketName(CM);
    const nc = await connect({ servers: url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`KV_${bucket}`); // the bucket is gone: reads fail
    const replay = backend.replayMarkers(CM);
    const added: string[] = [];
    const stop = new AbortController();
    const running = replay.start(stop.signal, { add: (key) => added.push(key.name), addAfter: () => {} });
    let synced = false;
    void replay.waitForSync(stop.signal).then(() => {
      synced = true;
    });
    await eventually(10_000, 'the failed read', () => replay.stats().failedReads === 1);
    expect(logger.records.some((r) => r.message === 'Reading the delete markers failed; retrying')).toBe(
      true,
    );
    const kv = await new Kvm(nc).create(bucket);
    await kv.put(encodeKey(NS, 'a'), JSON.stringify(configMap('a')));
    await kv.delete(encodeKey(NS, 'a'));
    expect(synced).toBe(false);
    await clock.advance(1000);
    await eventually(10_000, 'the replay after the retry', () => synced);
    expect(added).toEqual(['a']);
    expect(replay.stats()).toEqual({ deleted: 1, purged: 0, failedReads: 1 });
    stop.abort();
    await running;
    await nc.close();
  });
});
