import { ExpiredError, isExpired, type KubeObject, type ResourceType } from '@converge/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import { type Bucket, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { NatsBackend } from './nats-backend.ts';
import { CM, NS, type TestBackend, testBackend } from './test-support.ts';

const configMap = (name: string, v: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { v } }) as KubeObject;

/** The events of a watch from `resourceVersion` up to `count` of them, or the error that ended it. */
async function watchFrom(
  backend: NatsBackend,
  type: ResourceType,
  resourceVersion: string,
  count: number,
): Promise<{ names: string[]; error: unknown }> {
  const names: string[] = [];
  const abort = new AbortController();
  try {
    for await (const event of backend.watch(type, { resourceVersion, signal: abort.signal })) {
      if (event.type !== 'BOOKMARK') names.push(`${event.type} ${event.object.metadata.name}`);
      if (names.length >= count) break;
    }
    return { names, error: undefined };
  } catch (error) {
    return { names, error };
  } finally {
    abort.abort();
  }
}

/** Runs `body` on a raw connection to the test server. */
async function raw<T>(
  url: string,
  body: (nc: Awaited<ReturnType<typeof connect>>) => Promise<T>,
): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await body(nc);
  } finally {
    await nc.close();
  }
}

describe('expired revisions (410)', () => {
  let t: TestBackend | undefined;
  afterEach(async () => {
    await t?.destroy();
    t = undefined;
  });

  it('a watch from a revision after which a key changed more often than the history keeps expires, from the iteration, after the events it could still deliver', async () => {
    t = await testBackend([CM], { history: 2 });
    const { backend } = t;
    const start = (await backend.list(CM)).resourceVersion;
    await backend.create(CM, configMap('kept', '0'));
    let busy = await backend.create(CM, configMap('busy', '0'));
    for (let i = 1; i <= 3; i++)
      busy = await backend.update(CM, { ...busy, data: { v: String(i) } } as KubeObject);
    const iterable = backend.watch(CM, { resourceVersion: start });
    // The watch() call itself never throws: the error comes from the iteration.
    const { names, error } = await watchFrom(backend, CM, start, 10);
    expect(iterable).toBeDefined();
    expect(names).toEqual(['ADDED kept']);
    expect(error).toBeInstanceOf(ExpiredError);
    expect((error as ExpiredError).status).toBe(410);
    // From the list's current revision nothing is missing.
    const now = (await backend.list(CM)).resourceVersion;
    await backend.create(CM, configMap('later', '0'));
    expect(await watchFrom(backend, CM, now, 1)).toEqual({ names: ['ADDED later'], error: undefined });
  });

  it('a purge of the stream below a revision (by another client) expires watches from before it', async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    const start = (await backend.list(CM)).resourceVersion;
    for (const name of ['a', 'b', 'c']) await backend.create(CM, configMap(name, '0'));
    const c = await backend.get(CM, { namespace: NS, name: 'c' });
    const stream = `KV_${backend.bucketName(CM)}`;
    await raw(url, async (nc) =>
      (await jetstreamManager(nc)).streams.purge(stream, { seq: Number(c.metadata.resourceVersion) }),
    );
    const { names, error } = await watchFrom(backend, CM, start, 3);
    expect(names).toEqual([]);
    expect(isExpired(error)).toBe(true);
    // Current objects other than the purged ones are still listed; the purged keys are gone.
    expect((await backend.list(CM)).items.map((o) => o.metadata.name)).toEqual(['c']);
  });

  it("purging delete markers (the KV client's purgeDeletes) expires watches that would have reported those deletes", async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    await backend.create(CM, configMap('gone', '0'));
    const start = (await backend.list(CM)).resourceVersion;
    await backend.delete(CM, { namespace: NS, name: 'gone' });
    await backend.create(CM, configMap('after', '0'));
    expect((await watchFrom(backend, CM, start, 2)).names).toEqual(['DELETED gone', 'ADDED after']);
    await raw(url, async (nc) => {
      const kv = (await new Kvm(nc).open(backend.bucketName(CM))) as Bucket;
      await kv.purgeDeletes(0);
    });
    const { names, error } = await watchFrom(backend, CM, start, 2);
    expect(names).toEqual([]);
    expect(isExpired(error)).toBe(true);
  });

  it('compact() keeps current objects but expires older revisions and continue tokens', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    const start = (await backend.list(CM)).resourceVersion;
    let a = await backend.create(CM, configMap('a', '0'));
    a = await backend.update(CM, { ...a, data: { v: '1' } } as KubeObject);
    await backend.create(CM, configMap('b', '0'));
    await backend.create(CM, configMap('c', '0'));
    await backend.delete(CM, { namespace: NS, name: 'c' });
    const page = await backend.list(CM, { limit: 1 });
    expect(page.continue).toEqual(expect.any(String));
    const before = await backend.list(CM);
    const { purged } = await backend.compact();
    expect(purged).toBeGreaterThanOrEqual(3);
    expect((await backend.list(CM)).items).toEqual(before.items);
    expect(isExpired((await watchFrom(backend, CM, start, 1)).error)).toBe(true);
    await expect(backend.list(CM, { limit: 1, continue: page.continue as string })).rejects.toBeInstanceOf(
      ExpiredError,
    );
    // A deleted key whose marker was compacted away can be created again.
    expect((await backend.create(CM, configMap('c', '1'))).metadata.name).toBe('c');
  });

  it('a revision newer than the bucket has (the bucket was recreated) expires watches and lists', async () => {
    t = await testBackend([CM]);
    const { backend } = t;
    for (const name of ['a', 'b', 'c']) await backend.create(CM, configMap(name, '0'));
    const future = String(Number((await backend.list(CM)).resourceVersion) + 100);
    expect(isExpired((await watchFrom(backend, CM, future, 1)).error)).toBe(true);
    await expect(
      backend.list(CM, { resourceVersion: future, resourceVersionMatch: 'NotOlderThan' }),
    ).rejects.toBeInstanceOf(ExpiredError);
  });
});
