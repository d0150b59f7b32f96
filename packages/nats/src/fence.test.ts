/**
 * Fencing on the NATS backend (issue 30): marks kept in each bucket's stream, writes conditional on
 * the stream not moving between reading the mark and committing (see fence.ts). Against the shared
 * test server, each test on buckets of its own.
 */
import {
  type ConfigMap,
  type Fence,
  FencedError,
  type KubeObject,
  LeaderElector,
  LeadershipLostError,
  Manager,
  MemoryLock,
  type ResourceType,
  resourceType,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { FENCE_KEY_PREFIX, fenceKey } from './fence.ts';
import type { NatsBackend } from './nats-backend.ts';
import { CM, eventually, NS, type TestBackend, testBackend } from './test-support.ts';

const WIDGET: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

const cm = (name: string, data: Record<string, string> = { name }): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS },
  data,
});

const widget = (name: string): KubeObject =>
  ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: NS } }) as KubeObject;

async function refusal(write: Promise<unknown>): Promise<FencedError> {
  const error = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FencedError);
  return error as FencedError;
}

describe('NATS backend fencing', () => {
  const made: TestBackend[] = [];
  const connections: NatsConnection[] = [];
  afterEach(async () => {
    for (const t of made.splice(0)) await t.destroy();
    for (const nc of connections.splice(0)) await nc.close();
  });

  async function backend(types: readonly ResourceType[] = [CM, WIDGET]): Promise<TestBackend> {
    const t = await testBackend(types);
    made.push(t);
    return t;
  }

  /** A second backend (another process, say) on the same buckets. */
  async function peer(t: TestBackend, types: readonly ResourceType[] = [CM, WIDGET]): Promise<NatsBackend> {
    const { NatsBackend: Backend } = await import('./nats-backend.ts');
    const other = await Backend.connect({ servers: t.url, types, bucketPrefix: t.prefix });
    made.push({ backend: other, url: t.url, prefix: t.prefix, destroy: () => other.close() });
    return other;
  }

  async function admin(url: string): Promise<NatsConnection> {
    const nc = await connect({ servers: url });
    connections.push(nc);
    return nc;
  }

  it('an announcement raises the mark in every bucket; a lower epoch, or the same epoch from another holder, is refused there', async () => {
    const t = await backend();
    const b = t.backend;
    const a1: Fence = { name: 'default/op', holder: 'a', epoch: 1 };
    const b2: Fence = { name: 'default/op', holder: 'b', epoch: 2 };
    await b.create(CM, cm('by-a'), { fence: a1 });
    expect(await b.announceFence(b2)).toEqual(b2);
    for (const write of [
      () => b.create(CM, cm('late'), { fence: a1 }),
      () => b.create(WIDGET, widget('late'), { fence: a1 }),
      () =>
        b.patch(
          CM,
          { namespace: NS, name: 'by-a' },
          { type: 'merge', patch: { data: { x: '1' } } },
          { fence: a1 },
        ),
      () => b.delete(CM, { namespace: NS, name: 'by-a' }, { fence: a1 }),
      () => b.create(CM, cm('impostor'), { fence: { ...b2, holder: 'c' } }),
    ]) {
      const error = await refusal(write());
      expect(error.current).toEqual(b2);
      expect(error.status).toBe(403);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('stale fencing epoch');
    }
    // nothing of the refused writes landed; the holder's writes do
    expect((await b.get<ConfigMap>(CM, { namespace: NS, name: 'by-a' })).data).toEqual({ name: 'by-a' });
    await b.create(CM, cm('by-b'), { fence: b2 });
    await b.create(WIDGET, widget('by-b'), { fence: b2 });
    // an announcement of a lower epoch is refused too, and changes nothing
    expect((await refusal(b.announceFence(a1))).current).toEqual(b2);
  });

  it('a write with a higher epoch raises the mark itself; dry runs are checked and raise nothing', async () => {
    const t = await backend();
    const b = t.backend;
    const a1: Fence = { name: 'n', holder: 'a', epoch: 1 };
    const b2: Fence = { name: 'n', holder: 'b', epoch: 2 };
    const c3: Fence = { name: 'n', holder: 'c', epoch: 3 };
    await b.create(CM, cm('x'), { fence: a1 });
    await b.create(CM, cm('dry'), { fence: c3, dryRun: true });
    await b.create(CM, cm('y'), { fence: b2 });
    await refusal(b.create(CM, cm('z'), { fence: a1 }));
    await refusal(b.create(CM, cm('z'), { fence: a1, dryRun: true }));
    await refusal(b.update(CM, { ...cm('y'), data: { v: '1' } }, { fence: a1, dryRun: true }));
    await refusal(b.delete(CM, { namespace: NS, name: 'y' }, { fence: a1, dryRun: true }));
    // the dry run with epoch 3 did not raise the mark: b still writes
    await b.update(CM, { ...cm('y'), data: { v: '2' } }, { fence: b2 });
    // marks are per name
    await b.create(CM, cm('other'), { fence: { name: 'other', holder: 'a', epoch: 0 } });
  });

  it('lists and watches never show the marks', async () => {
    const t = await backend();
    const b = t.backend;
    const before = await b.list(CM);
    const abort = new AbortController();
    const events: string[] = [];
    const watching = (async () => {
      for await (const event of b.watch(CM, {
        resourceVersion: before.resourceVersion,
        signal: abort.signal,
      }))
        if (event.type !== 'BOOKMARK') events.push(`${event.type} ${event.object.metadata.name}`);
    })().catch(() => undefined);
    await b.announceFence({ name: 'default/op', holder: 'a', epoch: 1 });
    await b.create(CM, cm('one'), { fence: { name: 'default/op', holder: 'a', epoch: 1 } });
    await b.announceFence({ name: 'default/op', holder: 'b', epoch: 2 });
    await b.create(CM, cm('two'), { fence: { name: 'default/op', holder: 'b', epoch: 2 } });
    await eventually(5_000, 'the watch saw both creates', () => events.length >= 2);
    abort.abort();
    await watching;
    expect(events).toEqual(['ADDED one', 'ADDED two']);
    const list = await b.list(CM);
    expect(list.items.map((o) => o.metadata.name)).toEqual(['one', 'two']);
    // the marks are there, in the stream, under keys no object has
    const kv = await new Kvm(await admin(t.url)).open(b.bucketName(CM));
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    expect(keys.filter((k) => k.startsWith(FENCE_KEY_PREFIX))).toEqual([fenceKey('default/op')]);
  });

  it('a kind served after an announcement holds the mark before it serves', async () => {
    const t = await backend([CM]);
    const b = t.backend;
    const b2: Fence = { name: 'default/op', holder: 'b', epoch: 2 };
    await b.announceFence(b2);
    await b.registerType(WIDGET);
    // another process that never heard of the announcement, writing with its old term's fence
    const stale = await peer(t);
    expect(
      (await refusal(stale.create(WIDGET, widget('late'), { fence: { ...b2, holder: 'a', epoch: 1 } })))
        .current,
    ).toEqual(b2);
  });

  it('a mark that is not a fence refuses the writes made for its name', async () => {
    const t = await backend([CM]);
    const kv = await new Kvm(await admin(t.url)).open(t.backend.bucketName(CM));
    await kv.put(fenceKey('default/op'), new TextEncoder().encode('{"not":"a fence"}'));
    const error = await refusal(
      t.backend.create(CM, cm('x'), { fence: { name: 'default/op', holder: 'a', epoch: 1 } }),
    );
    expect(error.message).toContain('is not a fence');
    // other names are not affected
    await t.backend.create(CM, cm('y'), { fence: { name: 'other', holder: 'a', epoch: 1 } });
  });

  it('a holder writing alone reads the mark once: later fenced writes cost what plain ones do', async () => {
    const t = await backend([CM]);
    const b = t.backend;
    const fence: Fence = { name: 'default/op', holder: 'a', epoch: 1 };
    await b.announceFence(fence);
    const nc = await admin(t.url);
    const requests: string[] = [];
    const sub = nc.subscribe('$JS.API.>', {
      callback: (_error, message) => {
        requests.push(message.subject);
      },
    });
    await nc.flush();
    for (let i = 0; i < 10; i++) await b.create(CM, cm(`c-${i}`), { fence });
    await nc.flush();
    sub.unsubscribe();
    const stream = `KV_${b.bucketName(CM)}`;
    // the first write reads the stream's state and the mark; the other nine only publish
    expect(requests.filter((s) => s === `$JS.API.STREAM.INFO.${stream}`)).toHaveLength(1);
    expect(requests.filter((s) => s === `$JS.API.STREAM.MSG.GET.${stream}`)).toHaveLength(1);
    // another writer moves the stream: the next fenced write reads again, and lands
    await b.create(CM, cm('plain'));
    await b.create(CM, cm('after'), { fence });
    expect((await b.list(CM)).items).toHaveLength(12);
  });

  it('concurrent writes of one holder, and other writers meanwhile, all land', async () => {
    const t = await backend([CM]);
    const b = t.backend;
    const other = await peer(t, [CM]);
    const fence: Fence = { name: 'default/op', holder: 'a', epoch: 1 };
    await b.announceFence(fence);
    await Promise.all([
      ...Array.from({ length: 16 }, (_, i) => b.create(CM, cm(`fenced-${i}`), { fence })),
      ...Array.from({ length: 16 }, (_, i) => other.create(CM, cm(`plain-${i}`))),
    ]);
    expect((await b.list(CM)).items).toHaveLength(32);
  });

  it('writers racing a hand-over: no write of the old holder lands after the new mark, in five rounds', async () => {
    for (let round = 0; round < 5; round++) {
      const t = await backend([CM]);
      const oldHolder = t.backend;
      const newHolder = await peer(t, [CM]);
      const a: Fence = { name: 'default/op', holder: 'a', epoch: 1 };
      const b: Fence = { name: 'default/op', holder: 'b', epoch: 2 };
      await oldHolder.announceFence(a);
      const accepted: number[] = [];
      let stop = false;
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          try {
            const created = await oldHolder.create(CM, cm(`a-${w}-${i}`), { fence: a });
            accepted.push(Number(created.metadata.resourceVersion));
          } catch (error) {
            if (error instanceof FencedError) return 'fenced';
            throw error;
          }
        }
        return 'stopped';
      });
      await eventually(5_000, 'the old holder wrote', () => accepted.length >= 8 * (round + 1));
      await newHolder.announceFence(b);
      const kv = await new Kvm(await admin(t.url)).open(newHolder.bucketName(CM));
      const mark = await kv.get(fenceKey('default/op'));
      const markRevision = mark?.revision ?? 0;
      expect(JSON.parse(mark?.string() ?? '{}')).toEqual(b);
      const outcomes = await Promise.race([
        Promise.all(writers),
        new Promise<string[]>((resolve) =>
          setTimeout(() => {
            stop = true;
            resolve(['timed out']);
          }, 10_000),
        ),
      ]);
      expect(outcomes).toEqual(Array.from({ length: 8 }, () => 'fenced'));
      expect(accepted.every((revision) => revision < markRevision)).toBe(true);
      // and in the stream itself: nothing of a's after the mark
      const jsm = await jetstreamManager(await admin(t.url));
      const stream = `KV_${newHolder.bucketName(CM)}`;
      const { last_seq: last } = (await jsm.streams.info(stream)).state;
      for (let seq = markRevision + 1; seq <= last; seq++) {
        const message = await jsm.streams.getMessage(stream, { seq });
        expect(message?.subject ?? '').not.toMatch(/\.a-\d+-\d+$/);
      }
      for (const t2 of made.splice(0)) await t2.destroy();
    }
  });

  it('marks only rise, and a write is accepted exactly when its epoch is above the mark or equal with the same holder', async () => {
    const t = await backend([CM]);
    const b = t.backend;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            announce: fc.boolean(),
            holder: fc.constantFrom('a', 'b', 'c'),
            epoch: fc.integer({ min: 0, max: 5 }),
          }),
          { maxLength: 12 },
        ),
        async (ops) => {
          const name = `p${run++}`;
          let mark: { holder: string; epoch: number } | undefined;
          let i = 0;
          for (const { announce, holder, epoch } of ops) {
            const fence = { name, holder, epoch };
            const expected =
              mark === undefined || epoch > mark.epoch || (epoch === mark.epoch && holder === mark.holder);
            const write = announce ? b.announceFence(fence) : b.create(CM, cm(`${name}-${i++}`), { fence });
            const outcome = await write.then(
              () => true,
              (error: unknown) => {
                if (error instanceof FencedError) return false;
                throw error;
              },
            );
            expect(outcome).toBe(expected);
            if (expected && (mark === undefined || epoch > mark.epoch)) mark = { holder, epoch };
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('a leader term over NATS objects fences the writes made for it', () => {
  const made: TestBackend[] = [];
  afterEach(async () => {
    for (const t of made.splice(0)) await t.destroy();
  });

  it('the manager announces its term; a former leader’s writes after the hand-over are refused', async () => {
    const t = await testBackend([CM]);
    made.push(t);
    const clock = new VirtualClock();
    const lock = new MemoryLock({ name: 'default/op' });
    const replica = (identity: string) => {
      const manager = new Manager({
        clock,
        backend: t.backend,
        leaderElection: new LeaderElector({ lock: lock.locker(identity), clock }),
      });
      manager.add(
        (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
        {
          name: 'gated',
        },
      );
      const stop = new AbortController();
      const done = manager.start(stop.signal).then(
        () => undefined,
        (error: unknown) => error,
      );
      return { manager, stop, done };
    };
    const a = replica('a');
    await clock.advance(0);
    const b = replica('b');
    await clock.advance(3_000);
    await eventually(5_000, 'a leads, its term announced', () => a.manager.leading);
    await a.manager.client.create(CM, cm('by-a'));

    lock.inject({ type: 'hang' }, { identity: 'a', count: 1_000 });
    await clock.advance(30_000);
    expect(await a.done).toBeInstanceOf(LeadershipLostError);
    await eventually(5_000, 'b leads, its term announced', () => b.manager.leading);
    expect(b.manager.fence).toEqual({ name: 'default/op', holder: 'b', epoch: 1 });

    for (const write of [
      () => a.manager.client.create(CM, cm('late')),
      () =>
        a.manager.client.patch(
          CM,
          { namespace: NS, name: 'by-a' },
          { type: 'merge', patch: { data: { x: '1' } } },
        ),
      () => a.manager.client.delete(CM, { namespace: NS, name: 'by-a' }),
    ]) {
      expect((await refusal(write())).current).toEqual({ name: 'default/op', holder: 'b', epoch: 1 });
    }
    expect((await t.backend.get<ConfigMap>(CM, { namespace: NS, name: 'by-a' })).data).toEqual({
      name: 'by-a',
    });
    await b.manager.client.create(CM, cm('by-b'));
    b.stop.abort();
    expect(await b.done).toBeUndefined();
  });
});
