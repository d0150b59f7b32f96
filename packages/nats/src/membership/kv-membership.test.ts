import { AbortedError, type MemberRecord, type Membership, ShardMember } from '@converge/runtime';
import { runMembershipSuite } from '@converge/runtime/testing/membership-suite';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectTo, createTestBucket, type TestBucket, waitFor } from '../lease/test-harness.ts';
import { sharedNatsUrl } from '../test-harness.ts';
import { KvMembership } from './kv-membership.ts';

let connection: NatsConnection;
const buckets: TestBucket[] = [];
const live = (): AbortSignal => new AbortController().signal;

beforeAll(async () => {
  connection = await connectTo(await sharedNatsUrl());
});
afterEach(async () => {
  await Promise.all(buckets.splice(0).map((b) => b.destroy()));
});
afterAll(async () => {
  await connection.close();
});

async function bucket(): Promise<TestBucket> {
  const created = await createTestBucket(connection, 4);
  buckets.push(created);
  return created;
}

runMembershipSuite('KvMembership on NATS', async () => {
  const { kv } = await bucket();
  return {
    group: new KvMembership({ kv, group: 'shards' }),
    same: new KvMembership({ kv, group: 'shards' }),
    other: new KvMembership({ kv, group: 'others' }),
  };
});

const record: MemberRecord = {
  identity: 'pod.a_1',
  epoch: 3,
  claim: ['pod.a_1'],
  revoked: {},
  leaseDurationMs: 1_000,
  renewTime: '',
};

describe('KvMembership', () => {
  it('keeps one escaped key per member and purges it with its history on delete', async () => {
    const { kv } = await bucket();
    const membership = new KvMembership({ kv, group: 'shard.s' });
    const v1 = await membership.create(record, live());
    const v2 = await membership.update({ ...record, epoch: 4 }, v1, live());
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    expect(keys).toEqual(['shard_2es.pod_2ea_5f1']);
    await membership.delete('pod.a_1', v2, live());
    expect(await membership.list(live())).toEqual([]);
    const history: unknown[] = [];
    for await (const entry of await kv.history({ key: 'shard_2es.pod_2ea_5f1' }))
      history.push(entry.operation);
    expect(history).toEqual(['PURGE']);
  });

  it('skips an entry that is not a member document', async () => {
    const { kv } = await bucket();
    await kv.put('shards.x', 'not json');
    const membership = new KvMembership({ kv, group: 'shards' });
    await membership.create({ ...record, identity: 'y', claim: ['y'] }, live());
    expect((await membership.list(live())).map((r) => r.record.identity)).toEqual(['y']);
  });

  it('carries members that split the keys and hand them over, on the real server', async () => {
    const { kv } = await bucket();
    const timing = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 150 };
    const member = (identity: string) =>
      new ShardMember({ membership: new KvMembership({ kv, group: 'shards' }), identity, ...timing });
    const a = member('a');
    const b = member('b');
    const stopA = new AbortController();
    const stopB = new AbortController();
    const runs = [a.start(stopA.signal), b.start(stopB.signal)];
    const keys = Array.from({ length: 100 }, (_, i) => `default/k${i}`);
    let doubles = 0;
    const sampler = setInterval(() => {
      for (const k of keys) if (a.mayRun(k) && b.mayRun(k)) doubles++;
    }, 5);
    try {
      await waitFor(
        'both members to split the keys',
        () => a.view.members.join() === 'a,b' && b.view.members.join() === 'a,b',
        10_000,
      );
      await waitFor(
        'every key to have one owner',
        () => keys.every((k) => a.mayRun(k) !== b.mayRun(k)),
        5_000,
      );
      stopB.abort();
      await b.stopped();
      await waitFor('a to own every key', () => keys.every((k) => a.mayRun(k)), 5_000);
      expect(a.view.members).toEqual(['a']);
    } finally {
      clearInterval(sampler);
      stopA.abort();
      stopB.abort();
      await Promise.all(runs);
    }
    expect(doubles).toBe(0);
  });

  it('revokes and purges a member that stopped renewing, judged by its revision not changing', async () => {
    const { kv } = await bucket();
    const timing = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 150 };
    const revoked: string[] = [];
    let cut = false;
    const reachable = new KvMembership({ kv, group: 'shards' });
    // b's connection is cut: every call it makes hangs until its deadline.
    const partitioned: Membership = {
      group: 'shards',
      describe: () => reachable.describe(),
      list: (signal) => (cut ? hang(signal) : reachable.list(signal)),
      create: (record, signal) => (cut ? hang(signal) : reachable.create(record, signal)),
      update: (record, version, signal) => (cut ? hang(signal) : reachable.update(record, version, signal)),
      delete: (identity, version, signal) =>
        cut ? hang(signal) : reachable.delete(identity, version, signal),
    };
    const a = new ShardMember({
      membership: new KvMembership({ kv, group: 'shards' }),
      identity: 'a',
      ...timing,
      revoke: (fence) => {
        revoked.push(`${fence.name}@${fence.epoch}`);
      },
    });
    const b = new ShardMember({ membership: partitioned, identity: 'b', ...timing });
    const stop = new AbortController();
    const runs = [a.start(stop.signal), b.start(stop.signal)];
    try {
      await waitFor('both members to join', () => a.view.members.join() === 'a,b', 10_000);
      const epochAtCut = b.epoch;
      cut = true;
      await waitFor('a to own every key alone', () => a.view.members.join() === 'a', 10_000);
      // b's last published epoch, read once b can publish nothing more: when a saw both joined, b
      // could still be moving to an epoch of its own (a claim change raises it), and a write b sent
      // just before the cut lands after it. a's fence for b must be above that last epoch: one
      // below or equal would let b's writes through after a took its keys.
      const last = b.epoch;
      expect(last).toBeGreaterThanOrEqual(epochAtCut);
      expect(revoked, JSON.stringify({ epochAtCut, last, revoked })).toContain(`shards/b@${last + 1}`);
      await waitFor('b to be purged', async () => (await kv.get('shards.b'))?.operation === 'PURGE', 5_000);
      expect(b.mayRun('default/anything')).toBe(false);
    } finally {
      stop.abort();
      cut = false;
      await Promise.all(runs);
    }
  });
});

function hang(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    signal.addEventListener('abort', () => reject(new AbortedError('cut off')), { once: true });
  });
}
