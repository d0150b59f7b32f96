/**
 * KV put, delete and purge as a watch, an informer and a reconcile see them: a purge marker is a
 * DELETED marked `purged`, which reaches a reconcile's causes, so a Kumori-style reconciler can tell
 * Put, Delete, Purge and Secondary apart with `operationOf`.
 */
import {
  Controller,
  enqueueForObject,
  fromEventSource,
  Informer,
  type KubeObject,
  type ObjectKey,
  operationOf,
  type PrimaryOperation,
  type WatchEvent,
} from '@converge/runtime';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from './keys.ts';
import { CM, eventually, NS, type TestBackend, testBackend } from './test-support.ts';

const configMap = (name: string, v: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { v } }) as KubeObject;

/** The first `count` object events of a watch, as type, name and purged flag. */
async function take(iterable: AsyncIterable<WatchEvent>, count: number): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of iterable) {
    if (event.type === 'BOOKMARK') continue;
    seen.push(`${event.type} ${event.object.metadata.name}${event.purged === true ? ' purged' : ''}`);
    if (seen.length >= count) break;
  }
  return seen;
}

let t: TestBackend | undefined;
afterEach(async () => {
  await t?.destroy();
  t = undefined;
});

describe('KV operations in watch events', () => {
  it('a delete marker is a DELETED, a purge marker (deleteMode purge or another client) a DELETED marked purged', async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    for (const name of ['deleted', 'kv-deleted', 'kv-purged']) await backend.create(CM, configMap(name, '1'));
    const start = (await backend.list(CM)).resourceVersion;
    const watch = backend.watch(CM, { resourceVersion: start });
    await backend.delete(CM, { namespace: NS, name: 'deleted' });
    const nc = await connect({ servers: url });
    const kv = await new Kvm(nc).open(backend.bucketName(CM));
    await kv.delete(encodeKey(NS, 'kv-deleted'));
    await kv.purge(encodeKey(NS, 'kv-purged'));
    await nc.close();
    expect(await take(watch, 3)).toEqual([
      'DELETED deleted',
      'DELETED kv-deleted',
      'DELETED kv-purged purged',
    ]);
  });

  it("with deleteMode 'purge' the backend's own deletes are purges", async () => {
    t = await testBackend([CM], { deleteMode: 'purge' });
    const { backend } = t;
    const a = await backend.create(CM, configMap('a', '1'));
    const watch = backend.watch(CM, { resourceVersion: a.metadata.resourceVersion as string });
    await backend.delete(CM, { namespace: NS, name: 'a' });
    expect(await take(watch, 1)).toEqual(['DELETED a purged']);
  });
});

describe('Kumori-style reconciles of a NATS KV primary', () => {
  it('operationOf tells put, delete and purge apart, through a real informer and controller', async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    const ops: [string, PrimaryOperation | undefined][] = [];
    const informer = new Informer({ backend, type: CM });
    const controller = new Controller<ObjectKey>({
      name: 'kumori',
      sources: [fromEventSource(informer, enqueueForObject())],
      reconciler: (key, { causes }) => {
        ops.push([key.name, operationOf(causes)]);
      },
    });
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    try {
      const nc = await connect({ servers: url });
      const kv = await new Kvm(nc).open(backend.bucketName(CM));
      const step = async (write: () => Promise<unknown>, count: number): Promise<void> => {
        await write();
        await eventually(10_000, `${count} reconciles`, () => ops.length >= count);
      };
      const a = await backend.create(CM, configMap('a', '1'));
      await eventually(10_000, 'the first reconcile', () => ops.length >= 1);
      await step(() => backend.update(CM, { ...a, data: { v: '2' } } as KubeObject), 2);
      await step(() => backend.delete(CM, { namespace: NS, name: 'a' }), 3);
      await step(() => backend.create(CM, configMap('b', '1')), 4);
      await step(() => kv.purge(encodeKey(NS, 'b')), 5);
      await nc.close();
      expect(ops).toEqual([
        ['a', 'put'],
        ['a', 'put'],
        ['a', 'delete'],
        ['b', 'put'],
        ['b', 'purge'],
      ]);
    } finally {
      stop.abort();
      await running;
    }
  });
});
