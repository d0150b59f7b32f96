import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import { type Backend, UnavailableError } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import { LeaderLostError, LeaderRecordInvalidError } from './errors.ts';
import { type Lease, LeaseLock, leaseType } from './lease-lock.ts';
import { runLeaderLockSuite } from './lock-suite.ts';
import type { LeaderRecord } from './record.ts';
import { firstOverlap, type Replica, runReplica } from './test-harness.ts';

const store = (clock = new VirtualClock()): Store => new Store({ clock, types: [leaseType] });
const lockOn = (
  backend: Backend,
  identity: string,
  extra: Partial<ConstructorParameters<typeof LeaseLock>[0]> = {},
) => new LeaseLock({ backend, namespace: 'default', name: 'operator', identity, ...extra });
const live = (): AbortSignal => new AbortController().signal;
const key = { namespace: 'default', name: 'operator' };
const record: LeaderRecord = {
  holderIdentity: 'a',
  leaseDurationMs: 15_000,
  acquireTime: '2024-05-06T07:08:09.123000Z',
  renewTime: '2024-05-06T07:08:10.456000Z',
  leaderTransitions: 7,
};

runLeaderLockSuite('LeaseLock on the store', () => {
  const backend = store();
  return [lockOn(backend, 'a'), lockOn(backend, 'b')];
});

describe('LeaseLock', () => {
  it('serves coordination.k8s.io/v1 leases, namespaced, without generation', () => {
    expect(leaseType).toMatchObject({
      group: 'coordination.k8s.io',
      version: 'v1',
      kind: 'Lease',
      plural: 'leases',
      namespaced: true,
      generation: false,
    });
  });

  it('writes the record as a Lease spec that Kubernetes tools read', async () => {
    const backend = store();
    await lockOn(backend, 'a', { labels: { app: 'operator' } }).create(record, live());
    const lease = await backend.get<Lease>(leaseType, key);
    expect(lease.apiVersion).toBe('coordination.k8s.io/v1');
    expect(lease.metadata.labels).toEqual({ app: 'operator' });
    expect(lease.spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2024-05-06T07:08:09.123000Z',
      renewTime: '2024-05-06T07:08:10.456000Z',
      leaseTransitions: 7,
    });
  });

  it('rounds a lease duration that is not whole seconds up, so others never wait less', async () => {
    const backend = store();
    await lockOn(backend, 'a').create({ ...record, leaseDurationMs: 1_500 }, live());
    expect((await backend.get<Lease>(leaseType, key)).spec?.leaseDurationSeconds).toBe(2);
  });

  it('keeps labels, annotations and spec fields it does not know when it updates', async () => {
    const backend = store();
    await backend.create<Lease>(leaseType, {
      metadata: { ...key, labels: { team: 'x' }, annotations: { note: 'keep' } },
      spec: { holderIdentity: 'old', leaseDurationSeconds: 10, strategy: 'OldestEmulationVersion' },
    });
    const lock = lockOn(backend, 'a');
    const current = await lock.get(live());
    await lock.update(record, current?.version ?? '', live());
    const lease = await backend.get<Lease>(leaseType, key);
    expect(lease.metadata.labels).toEqual({ team: 'x' });
    expect(lease.metadata.annotations).toEqual({ note: 'keep' });
    expect(lease.spec?.strategy).toBe('OldestEmulationVersion');
    expect(lease.spec?.holderIdentity).toBe('a');
  });

  it('reads a Lease without holder or times, written by another tool, as a free record', async () => {
    const backend = store();
    await backend.create<Lease>(leaseType, { metadata: key, spec: {} });
    expect((await lockOn(backend, 'a').get(live()))?.record).toEqual({
      holderIdentity: '',
      leaseDurationMs: 0,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 0,
    });
  });

  it('reports a Lease with a malformed spec as LeaderRecordInvalidError naming the field', async () => {
    const backend = store();
    await backend.create<Lease>(leaseType, {
      metadata: key,
      spec: { leaseDurationSeconds: 'ten' as unknown as number },
    });
    const error: unknown = await lockOn(backend, 'a')
      .get(live())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaderRecordInvalidError);
    expect((error as Error).message).toContain('spec.leaseDurationSeconds');
    expect((error as LeaderRecordInvalidError).code).toBe('CONVERGE_ERR_LEADER_RECORD_INVALID');
  });

  it('rejects options without backend, namespace, name or identity with OptionsError', () => {
    const backend = store();
    expect(
      () =>
        new LeaseLock({ backend: undefined as unknown as Backend, namespace: 'a', name: 'b', identity: 'c' }),
    ).toThrow(OptionsError);
    expect(() => lockOn(backend, 'a', { namespace: '' })).toThrow(OptionsError);
    expect(() => lockOn(backend, 'a', { name: '' })).toThrow(OptionsError);
    expect(() => lockOn(backend, '')).toThrow(OptionsError);
  });
});

describe('LeaderElector over a Lease on the store', () => {
  it('elects one of three replicas, hands over at once on a released stop, and never overlaps', async () => {
    const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
    const backend = store(clock);
    const replicas = ['a', 'b', 'c'].map((id) =>
      runReplica(new LeaderElector({ lock: lockOn(backend, id), clock }), clock),
    ) as [Replica, Replica, Replica];
    await clock.advance(20_000);
    expect(replicas.filter((r) => r.elector.isLeader).map((r) => r.elector.identity)).toEqual(['a']);
    replicas[0].stop.abort();
    await replicas[0].done;
    const released = await backend.get<Lease>(leaseType, key);
    expect(released.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    await clock.advance(4_400);
    const next = replicas.filter((r) => r.elector.isLeader);
    expect(next).toHaveLength(1);
    expect(next[0]?.elector.fencingToken).toBe(1);
    expect((await backend.get<Lease>(leaseType, key)).spec?.holderIdentity).toBe(next[0]?.elector.identity);
    expect(firstOverlap(replicas.flatMap((r) => r.intervals))).toBeUndefined();
    for (const r of replicas) r.stop.abort();
    await Promise.all(replicas.map((r) => r.done));
  });

  it('loses leadership by the renew deadline when the backend stops answering, and a standby takes over after the lease duration', async () => {
    const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
    const backend = store(clock);
    let down = false;
    const flaky = new Proxy(backend, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (down && (prop === 'update' || prop === 'get'))
          return () => Promise.reject(new UnavailableError('down'));
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const a = runReplica(new LeaderElector({ lock: lockOn(flaky, 'a'), clock }), clock);
    await clock.advance(0);
    const b = runReplica(new LeaderElector({ lock: lockOn(backend, 'b'), clock }), clock);
    await clock.advance(5_000);
    down = true;
    const lastRenewal = clock.now() - 1_000;
    await clock.advance(25_000);
    expect(a.intervals[0]?.end).toBe(lastRenewal + 10_000);
    expect(a.outcome).toBeInstanceOf(LeaderLostError);
    expect(b.elector.isLeader).toBe(true);
    expect(b.intervals[0]?.start).toBeGreaterThanOrEqual(lastRenewal + 15_000);
    b.stop.abort();
    await b.done;
  });
});
