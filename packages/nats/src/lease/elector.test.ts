import { LeaderElector, type LeaderElectorOptions, type LeaderLock } from '@converge/runtime';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '../test-harness.ts';
import { KvLeaseLock } from './kv-lease-lock.ts';
import {
  connectTo,
  createTestBucket,
  firstDoubleLeader,
  type LeadershipEvent,
  type RunningElector,
  runLogged,
  sampleLeaders,
  type TestBucket,
  timerLateness,
  waitFor,
} from './test-harness.ts';

// Real time, short durations: lease 1 s, renew deadline 0.6 s, retry 0.1 s (jittered up to 0.22 s).
const TIMINGS = { leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 100 } as const;

/** Each elector talks to NATS over its own connection, as separate processes would. */
let connections: NatsConnection[] = [];
let bucket: TestBucket;
let running: RunningElector[] = [];

beforeAll(async () => {
  const url = await sharedNatsUrl();
  connections = await Promise.all([connectTo(url), connectTo(url), connectTo(url)]);
});
beforeEach(async () => {
  bucket = await createTestBucket(connections[0] as NatsConnection);
});
afterEach(async () => {
  for (const r of running) r.stop.abort();
  await Promise.all(running.map((r) => r.done));
  running = [];
  await bucket.destroy();
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
});

async function electors(
  identities: readonly string[],
  options: Partial<LeaderElectorOptions> = {},
): Promise<LeaderElector[]> {
  return await Promise.all(
    identities.map(async (identity, i) => {
      const connection = connections[i % connections.length] as NatsConnection;
      const lock = await KvLeaseLock.open({ connection, bucket: bucket.name, key: 'operator', identity });
      return new LeaderElector({ lock, ...TIMINGS, ...options });
    }),
  );
}

function start(elector: LeaderElector, log: LeadershipEvent[]): RunningElector {
  const r = runLogged(elector, log);
  running.push(r);
  return r;
}

const leaders = (list: readonly LeaderElector[]): string[] =>
  list.filter((e) => e.isLeader).map((e) => e.identity);

const startOf = (log: readonly LeadershipEvent[], identity: string): number | undefined =>
  log.find((e) => e.identity === identity && e.type === 'start')?.at;

describe('LeaderElector over a KvLeaseLock on NATS (real time, lease 1 s)', () => {
  it('elects exactly one of three electors started together, and keeps it leading past several leases', async () => {
    // A leader keeps leading only while every renewal lands within its renew deadline. With the
    // file's 0.6 s, a renewal held up longer by a loaded machine (a second suite beside this one:
    // load ~20 on 2 cores) rightly cost the leader its lease; this test is about a healthy leader,
    // so it gives renewals 2 s, more than any stall seen under that load, and waits 2.2 leases.
    const stable = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 100 } as const;
    const list = await electors(['a', 'b', 'c'], stable);
    const log: LeadershipEvent[] = [];
    const sampler = sampleLeaders(list);
    for (const e of list) start(e, log);
    await waitFor('a leader', () => leaders(list).length === 1, 30_000);
    const [leader] = leaders(list);
    await new Promise((resolve) => setTimeout(resolve, 2.2 * stable.leaseDurationMs));
    sampler.stop();
    expect(leaders(list)).toEqual([leader]);
    expect(log).toEqual([expect.objectContaining({ identity: leader, type: 'start' })]);
    expect(list.map((e) => e.leader)).toEqual([leader, leader, leader]);
    expect(sampler.samples()).toBeGreaterThan(100);
    expect(sampler.doubles()).toBe(0);
    const entry = await bucket.kv.get('operator');
    expect(entry?.json()).toMatchObject({
      spec: { holderIdentity: leader, leaseDurationMs: stable.leaseDurationMs, leaseTransitions: 0 },
    });
  });

  it('hands over within about one retry period when the leader stops and releases, and the fencing token rises', async () => {
    const [a, b] = (await electors(['a', 'b'])) as [LeaderElector, LeaderElector];
    const log: LeadershipEvent[] = [];
    const sampler = sampleLeaders([a, b]);
    const lateness = timerLateness();
    const ra = start(a, log);
    await waitFor('a to lead', () => a.isLeader, 30_000);
    const rb = start(b, log);
    await waitFor('b to see a leading', () => b.leader === 'a', 30_000);
    const token = a.fencingToken as number;
    ra.stop.abort();
    expect(await ra.done).toBeUndefined();
    const released = Date.now();
    expect((await bucket.kv.get('operator'))?.json()).toMatchObject({
      spec: { holderIdentity: '', leaseDurationMs: 1_000, leaseTransitions: token },
    });
    const waited = await waitFor('b to lead', () => b.isLeader, 30_000);
    sampler.stop();
    // The standby retries every 100–220 ms: far sooner than the 1 s lease (its retry timer late
    // by no more than any timer of this process was meanwhile).
    expect(waited).toBeLessThan(500 + lateness.maxMs());
    expect((startOf(log, 'b') as number) - released).toBeLessThan(500 + lateness.maxMs());
    lateness.stop();
    expect(b.fencingToken).toBe(token + 1);
    expect(firstDoubleLeader(log)).toBeUndefined();
    expect(sampler.doubles()).toBe(0);
    rb.stop.abort();
  });

  it('takes over only after the lease expires when the leader stops renewing without releasing', async () => {
    const [a, b] = (await electors(['a', 'b'], { releaseOnCancel: false })) as [LeaderElector, LeaderElector];
    const log: LeadershipEvent[] = [];
    const sampler = sampleLeaders([a, b]);
    const lateness = timerLateness();
    const ra = start(a, log);
    await waitFor('a to lead', () => a.isLeader, 30_000);
    start(b, log);
    await waitFor('b to see a leading', () => b.leader === 'a', 30_000);
    const token = a.fencingToken as number;
    ra.stop.abort();
    const silent = Date.now();
    await ra.done;
    expect((await bucket.kv.get('operator'))?.json()).toMatchObject({ spec: { holderIdentity: 'a' } });
    await waitFor('b to lead', () => b.isLeader, 30_000);
    sampler.stop();
    const gap = (startOf(log, 'b') as number) - silent;
    // a's last renewal was at most one retry period (0.1 s) before it fell silent, and b waits a
    // full lease (1 s) from when it saw that renewal: at least ~0.9 s, at most ~1.5 s.
    expect(gap).toBeGreaterThanOrEqual(850);
    expect(gap).toBeLessThan(2_000 + lateness.maxMs());
    lateness.stop();
    expect(b.fencingToken).toBe(token + 1);
    expect((await bucket.kv.get('operator'))?.json()).toMatchObject({
      spec: { holderIdentity: 'b', leaseTransitions: token + 1 },
    });
    expect(firstDoubleLeader(log)).toBeUndefined();
    expect(sampler.doubles()).toBe(0);
  });

  it('never has two leaders at once across repeated handovers, released and not', async () => {
    // Two electors per replica, one that releases on stop and one that falls silent: a stopped
    // replica comes back as the other kind once its peer has taken over.
    const silent = await electors(['a', 'b'], { releaseOnCancel: false });
    const releasing = await electors(['a', 'b']);
    const log: LeadershipEvent[] = [];
    const sampler = sampleLeaders([...silent, ...releasing]);
    let current = silent.map((e) => start(e, log));
    await waitFor('one leader', () => current.some((r) => r.elector.isLeader), 30_000);
    for (let round = 0; round < 4; round++) {
      const leader = current.find((r) => r.elector.isLeader) as RunningElector;
      const other = current.find((r) => r !== leader) as RunningElector;
      leader.stop.abort();
      await leader.done;
      await waitFor('the standby to take over', () => other.elector.isLeader, 30_000);
      const kind = silent.includes(leader.elector) ? releasing : silent;
      const next = kind.find((e) => e.identity === leader.elector.identity) as LeaderElector;
      current = [other, start(next, log)];
    }
    sampler.stop();
    expect(log.filter((e) => e.type === 'start')).toHaveLength(5);
    expect(firstDoubleLeader(log)).toBeUndefined();
    expect(sampler.doubles()).toBe(0);
    const transitions = (await bucket.kv.get('operator'))?.json<{ spec: { leaseTransitions: number } }>();
    expect(transitions?.spec.leaseTransitions).toBe(4);
  });

  it('never overwrites an entry that is not a lease document, and acquires once it is deleted', async () => {
    const garbage = await bucket.kv.put('operator', '{"holder": "someone else\'s tool"}');
    const lock = await KvLeaseLock.open({
      connection: connections[0] as NatsConnection,
      bucket: bucket.name,
      key: 'operator',
      identity: 'a',
    });
    const errors: unknown[] = [];
    const counting: LeaderLock = {
      identity: lock.identity,
      describe: () => lock.describe(),
      get: async (signal) => {
        try {
          return await lock.get(signal);
        } catch (error) {
          errors.push(error);
          throw error;
        }
      },
      create: (record, signal) => lock.create(record, signal),
      update: (record, version, signal) => lock.update(record, version, signal),
    };
    const a = new LeaderElector({ lock: counting, ...TIMINGS });
    const log: LeadershipEvent[] = [];
    start(a, log);
    await waitFor('several failed attempts', () => errors.length >= 5, 30_000);
    expect(a.isLeader).toBe(false);
    expect(errors[0]).toMatchObject({ code: 'CONVERGE_ERR_LEADER_RECORD_INVALID', revision: garbage });
    expect((await bucket.kv.get('operator'))?.revision).toBe(garbage);
    await bucket.kv.delete('operator');
    await waitFor('a to lead', () => a.isLeader, 30_000);
    expect(a.fencingToken).toBe(0);
    expect(log).toEqual([expect.objectContaining({ identity: 'a', type: 'start' })]);
  });
});
