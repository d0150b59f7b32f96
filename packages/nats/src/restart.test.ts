import { Informer, type KubeObject, type WatchEvent } from '@converge/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { NatsBackend } from './nats-backend.ts';
import { type PrivateNats, startPrivateNats, uniqueSuffix } from './test-harness.ts';
import { CM, eventually, NS, retrying } from './test-support.ts';

function configMap(name: string, v: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS },
    data: { v },
  } as KubeObject;
}

describe('a NATS server restart', () => {
  let server: PrivateNats | undefined;
  let backend: NatsBackend | undefined;
  afterEach(async () => {
    await backend?.close();
    await server?.dispose();
    backend = undefined;
    server = undefined;
  });

  async function start(): Promise<NatsBackend> {
    server = await startPrivateNats();
    backend = await NatsBackend.connect({
      servers: server.url,
      types: [CM],
      bucketPrefix: `r${uniqueSuffix()}_`,
    });
    return backend;
  }

  for (const moment of ['idle', 'reading'] as const) {
    it(`a watch ${moment === 'idle' ? 'waiting for events' : 'in the middle of a stream'} resumes after the restart from the last delivered revision, without gaps or duplicates`, async () => {
      const b = await start();
      const nats = server as PrivateNats;
      const list = await b.list(CM);
      const abort = new AbortController();
      const received: WatchEvent[] = [];
      const iterator = b
        .watch(CM, { resourceVersion: list.resourceVersion, signal: abort.signal })
        [Symbol.asyncIterator]();
      const pump = (async () => {
        for (;;) {
          const next = await iterator.next();
          if (next.done === true) return;
          received.push(next.value);
        }
      })();
      const written: string[] = [];
      for (let i = 0; i < 20; i++)
        written.push((await b.create(CM, configMap(`before-${i}`, '1'))).metadata.resourceVersion ?? '');
      if (moment === 'idle')
        await eventually(10_000, 'the watch saw the first writes', () => received.length === 20);
      await nats.restart();
      for (let i = 0; i < 20; i++) {
        written.push(
          (await retrying(() => b.create(CM, configMap(`after-${i}`, '1')))).metadata.resourceVersion ?? '',
        );
      }
      await eventually(15_000, 'the watch saw every write', () => received.length >= written.length);
      abort.abort();
      await pump;
      const versions = received.map((e) =>
        e.type === 'BOOKMARK' ? e.resourceVersion : e.object.metadata.resourceVersion,
      );
      expect(versions).toEqual(written);
      expect(received.every((e) => e.type === 'ADDED')).toBe(true);
    });
  }

  it('an Informer ends with a correct cache after a restart in the middle of its watch', async () => {
    const b = await start();
    const nats = server as PrivateNats;
    for (let i = 0; i < 10; i++) await b.create(CM, configMap(`cm-${i}`, '0'));
    const informer = new Informer({ backend: b, type: CM, backoff: { initialMs: 50, maxMs: 500 } });
    const abort = new AbortController();
    const running = informer.start(abort.signal);
    try {
      await informer.waitForSync(abort.signal);
      expect(informer.cache.list()).toHaveLength(10);
      await nats.restart();
      // Changes after the restart: updates, deletes and creates.
      for (let i = 0; i < 5; i++) {
        const current = await retrying(() => b.get(CM, { namespace: NS, name: `cm-${i}` }));
        await retrying(() => b.update(CM, { ...current, data: { v: 'changed' } } as KubeObject));
      }
      for (let i = 5; i < 8; i++) await retrying(() => b.delete(CM, { namespace: NS, name: `cm-${i}` }));
      for (let i = 10; i < 13; i++) await retrying(() => b.create(CM, configMap(`cm-${i}`, 'new')));
      const truth = await b.list(CM);
      const summary = (objects: readonly KubeObject[]): string[] =>
        objects.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
      await eventually(
        60_000,
        'the informer cache equals a fresh list',
        () => JSON.stringify(summary(informer.cache.list())) === JSON.stringify(summary(truth.items)),
      );
      expect(informer.cache.get({ namespace: NS, name: 'cm-0' })).toMatchObject({ data: { v: 'changed' } });
      expect(informer.cache.get({ namespace: NS, name: 'cm-6' })).toBeUndefined();
    } finally {
      abort.abort();
      await running;
    }
  });
});
