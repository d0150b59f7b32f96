import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import { isFenced, resourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { type Lease, leaseType } from '../leader-election/index.ts';
import { MemoryLogger, PausableClock, VirtualClock } from '../testing/index.ts';
import { LeaseMembership, SHARD_GROUP_LABEL } from './lease-membership.ts';
import { runMembershipSuite } from './membership-suite.ts';
import { ShardMember } from './shard-member.ts';

const store = (): Store => new Store({ clock: new VirtualClock(), types: [leaseType] });
const live = (): AbortSignal => new AbortController().signal;

runMembershipSuite('LeaseMembership on the store', () => {
  const backend = store();
  const on = (group: string) => new LeaseMembership({ backend, namespace: 'default', group });
  return { group: on('shards'), same: on('shards'), other: on('others') };
});

describe('LeaseMembership', () => {
  it('writes one Lease per member that kubectl lists by the group label', async () => {
    const backend = store();
    const membership = new LeaseMembership({ backend, namespace: 'ops', group: 'widgets' });
    await membership.create(
      {
        identity: 'pod-a',
        epoch: 7,
        claim: ['pod-a'],
        revoked: { 'pod-b': 3 },
        leaseDurationMs: 1_500,
        renewTime: '2026-12-07T01:02:03.456000Z',
      },
      live(),
    );
    const list = await backend.list<Lease>(leaseType, {
      namespace: 'ops',
      labelSelector: `${SHARD_GROUP_LABEL}=widgets`,
    });
    expect(list.items.map((l) => l.metadata.name)).toEqual(['widgets.pod-a']);
    const [lease] = list.items;
    expect(lease?.spec).toMatchObject({
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 2,
      renewTime: '2026-12-07T01:02:03.456000Z',
    });
    expect(lease?.metadata.annotations).toMatchObject({
      'converge.dev/shard-epoch': '7',
      'converge.dev/shard-claim': 'pod-a',
      'converge.dev/shard-revoked': '{"pod-b":3}',
    });
  });

  it('skips and logs a Lease of the group that is not a member record, and never overwrites it', async () => {
    const backend = store();
    const logger = new MemoryLogger();
    await backend.create<Lease>(leaseType, {
      metadata: {
        namespace: 'default',
        name: 'shards.x',
        labels: { [SHARD_GROUP_LABEL]: 'shards' },
        annotations: { 'converge.dev/shard-epoch': 'many' },
      },
      spec: { holderIdentity: 'x' },
    });
    const membership = new LeaseMembership({ backend, namespace: 'default', group: 'shards', logger });
    expect(await membership.list(live())).toEqual([]);
    expect(logger.records.some((r) => r.message === 'Skipped an invalid membership record')).toBe(true);
  });

  it('rejects a group that is not a DNS label and an identity that cannot name a Lease', async () => {
    const backend = store();
    expect(() => new LeaseMembership({ backend, namespace: 'default', group: 'a.b' })).toThrow(OptionsError);
    const membership = new LeaseMembership({ backend, namespace: 'default', group: 'shards' });
    await expect(
      membership.create(
        { identity: 'Pod_A', epoch: 1, claim: [], revoked: {}, leaseDurationMs: 1000, renewTime: '' },
        live(),
      ),
    ).rejects.toBeInstanceOf(OptionsError);
  });

  it('carries members that split the keys and hand them over on one store', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const backend = new Store({ clock, types: [leaseType] });
    const timing = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500, clock };
    const member = (identity: string) =>
      new ShardMember({
        membership: new LeaseMembership({ backend, namespace: 'default', group: 'shards' }),
        identity,
        ...timing,
      });
    const a = member('a');
    const b = member('b');
    const stopA = new AbortController();
    const stopB = new AbortController();
    const runs = [a.start(stopA.signal), b.start(stopB.signal)];
    const keys = Array.from({ length: 100 }, (_, i) => `default/k${i}`);
    const owners = () => keys.map((k) => [a, b].filter((m) => m.mayRun(k)).length);
    await clock.advance(4_000);
    expect(a.view.members).toEqual(['a', 'b']);
    expect(owners().every((n) => n === 1)).toBe(true);
    stopB.abort();
    await clock.advance(2_000);
    expect(a.view.members).toEqual(['a']);
    expect(keys.every((k) => a.mayRun(k))).toBe(true);
    stopA.abort();
    await clock.advance(2_000);
    await Promise.all(runs);
    const leases = await backend.list<Lease>(leaseType, { namespace: 'default' });
    expect(leases.items.every((l) => l.metadata.annotations?.['converge.dev/shard-claim'] === '')).toBe(true);
  });

  it('fences a paused member: once its keys moved, its writes with its old epoch are refused', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const configMaps = resourceType({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      namespaced: true,
    });
    const backend = new Store({ clock, types: [leaseType, configMaps] });
    const member = (identity: string, memberClock: PausableClock) =>
      new ShardMember({
        membership: new LeaseMembership({ backend, namespace: 'default', group: 'shards' }),
        identity,
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 500,
        clock: memberClock,
        revoke: (fence, signal) => backend.announceFence(fence, signal),
      });
    const pausedClock = new PausableClock(clock);
    const a = member('a', new PausableClock(clock));
    const b = member('b', pausedClock);
    const stop = new AbortController();
    const runs = [a.start(stop.signal), b.start(stop.signal)];
    await clock.advance(4_000);
    const key = Array.from({ length: 50 }, (_, i) => `default/k${i}`).find((k) => b.mayRun(k));
    expect(key).toBeDefined();
    const staleFence = b.fence;
    await backend.create(
      configMaps,
      { metadata: { namespace: 'default', name: 'cm' } },
      { fence: staleFence },
    );
    pausedClock.pause(); // SIGSTOP: b's write below is one it had in flight
    await clock.advance(5_000);
    expect(a.mayRun(key as string)).toBe(true);
    const late = await backend
      .update(
        configMaps,
        { metadata: { namespace: 'default', name: 'cm' }, data: { from: 'b' } },
        { fence: staleFence },
      )
      .catch((e: unknown) => e);
    expect(isFenced(late)).toBe(true);
    await pausedClock.resume();
    stop.abort();
    await clock.advance(5_000);
    await Promise.all(runs);
  });
});
