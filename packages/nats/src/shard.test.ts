/**
 * Shard selectors (KEP-5866) over what other KV clients write: a bare delete marker carries no uid,
 * so a shard watch judges it by the states it saw (as it does for label selectors).
 */
import { fnv1a64, type KubeObject, type WatchEvent } from '@converge/runtime';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from './keys.ts';
import { CM, NS, type TestBackend, testBackend } from './test-support.ts';

const configMap = (name: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: {} }) as KubeObject;
const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;
/** The shard of exactly this uid. */
const only = (uid: string): string =>
  `shardRange(object.metadata.uid, '${hex(fnv1a64(uid))}', '${hex(fnv1a64(uid) + 1n)}')`;

async function take(iterable: AsyncIterable<WatchEvent>, count: number): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of iterable) {
    if (event.type === 'BOOKMARK') continue;
    seen.push(`${event.type} ${event.object.metadata.name}`);
    if (seen.length >= count) break;
  }
  return seen;
}

let t: TestBackend | undefined;
afterEach(async () => {
  await t?.destroy();
  t = undefined;
});

describe('NatsBackend shard selectors', () => {
  it("a shard watch sees another client's bare delete marker only for the object it had", async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    const mine = await backend.create(CM, configMap('mine'));
    await backend.create(CM, configMap('theirs'));
    const watch = backend.watch(CM, { shardSelector: only(mine.metadata.uid as string) });
    const nc = await connect({ servers: url });
    const kv = await new Kvm(nc).open(backend.bucketName(CM));
    const iterator = watch[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'mine' } } });
    await kv.delete(encodeKey(NS, 'theirs'));
    await kv.delete(encodeKey(NS, 'mine'));
    await nc.close();
    expect(await take({ [Symbol.asyncIterator]: () => iterator }, 1)).toEqual(['DELETED mine']);
  });
});
