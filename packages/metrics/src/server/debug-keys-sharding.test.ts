import { done, type LeaderElection, Manager, MemoryMembership, ShardMember } from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../metrics.ts';
import { pushController, startServer } from '../test-harness.ts';
import { dashboardSnapshot } from './dashboard-snapshot.ts';
import type { DebugKeys } from './debug-keys.ts';

const TIMING = {
  leaseDurationMs: 3_000,
  renewDeadlineMs: 2_000,
  retryPeriodMs: 500,
  releaseTimeoutMs: 1_000,
};

/**
 * A manager whose member `pod-a` shares group `widgets` with `pod-b`, on a virtual clock: its
 * sharded controller `widgets` holds 20 keys (one running, held), and a leader-gated `gated` none.
 */
async function shardedManager(by: 'key' | 'uid' = 'key') {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 7, 3) });
  const membership = new MemoryMembership({ group: 'widgets' });
  const member = (identity: string): ShardMember =>
    new ShardMember({ membership: membership.member(identity), identity, clock, by, ...TIMING });
  const a = member('pod-a');
  const b = member('pod-b');
  const manager = new Manager({ clock, backend: new FakeBackend({ clock }), sharding: a });
  let release: () => void = () => {};
  const blocked = new Promise<void>((resolve) => (release = resolve));
  const { controller, push } = pushController(clock, {
    name: 'widgets',
    sharding: { member: a },
    reconciler: async () => {
      await blocked;
      return done();
    },
  });
  const gated = pushController(clock, { name: 'gated', reconciler: () => done() });
  manager.add(controller);
  const metrics = new Metrics({ clock, defaultMetrics: false })
    .instrument(manager)
    .instrument(controller)
    .instrument(gated.controller);
  const stop = new AbortController();
  const runs = [manager.start(stop.signal), b.start(stop.signal)];
  await clock.advance(8_000);
  const keys = Array.from({ length: 20 }, (_, i) => `default/w-${i}`);
  const first = keys.find((k) => a.mayRun(k)) as string;
  push(first);
  await settle();
  for (const key of keys) if (key !== first) push(key);
  await settle();
  return {
    clock,
    a,
    metrics,
    keys,
    first,
    stop: async () => {
      release();
      stop.abort();
      await clock.advance(5_000);
      await Promise.all(runs);
    },
  };
}

describe('/debug/keys of a sharded manager', () => {
  it('shows the shard member, whether it may run each key of a sharded controller, and filters by ?owned=', async () => {
    const { clock, a, metrics, keys, first, stop } = await shardedManager();
    const http = await startServer({ metrics, clock });

    const doc = (await (await http.get('/debug/keys')).json()) as DebugKeys;
    expect(doc.sharding).toEqual({
      group: 'widgets',
      identity: 'pod-a',
      phase: 'member',
      epoch: a.epoch,
      fence: { name: 'widgets/pod-a', holder: 'pod-a', epoch: a.epoch },
      members: ['pod-a', 'pod-b'],
      by: 'key',
    });
    expect(doc.fence).toBeUndefined(); // no leader election
    const [widgets, gatedDoc] = doc.controllers;
    const byKey = (x: [string, unknown], y: [string, unknown]): number => x[0].localeCompare(y[0]);
    expect(widgets?.keys.map((k): [string, unknown] => [k.key, k.owned]).sort(byKey)).toEqual(
      keys.map((k): [string, unknown] => [k, a.mayRun(k)]).sort(byKey),
    );
    expect(gatedDoc?.keys).toEqual([]);

    const owned = (await (await http.get('/debug/keys?owned=true&controller=widgets')).json()) as DebugKeys;
    expect(owned.controllers[0]?.keys.map((k) => k.key).sort()).toEqual(
      keys.filter((k) => a.mayRun(k)).sort(),
    );
    const foreign = (await (await http.get('/debug/keys?owned=false&state=queued')).json()) as DebugKeys;
    expect(foreign.controllers[0]?.keys.map((k) => k.key).sort()).toEqual(
      keys.filter((k) => !a.mayRun(k)).sort(),
    );
    const oneKey = (await (
      await http.get(`/debug/keys?key=${encodeURIComponent(first)}&owned=true`)
    ).json()) as DebugKeys;
    expect(oneKey.controllers[0]?.keys.map((k) => k.key)).toEqual([first]);
    for (const bad of ['owned=yes', 'owned=true&owned=false', 'owned=']) {
      const r = await http.get(`/debug/keys?${bad}`);
      expect([bad, r.status]).toEqual([bad, 400]);
    }
    const html = await (await http.get('/debug/keys', { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('Shard group widgets: pod-a is member at epoch');
    expect(html).toContain('members pod-a, pod-b');
    expect(html).toContain('(not owned)');

    await http.stop();
    await stop();
  });

  it('sharded by uid, shows the slots the member caches: half of the 64 with two members', async () => {
    const { clock, a, metrics, stop } = await shardedManager('uid');
    const http = await startServer({ metrics, clock });
    const doc = (await (await http.get('/debug/keys')).json()) as DebugKeys;
    expect(doc.sharding).toMatchObject({ by: 'uid', members: ['pod-a', 'pod-b'] });
    expect(doc.sharding?.slots).toEqual([...a.slots]);
    expect(doc.sharding?.slots).toHaveLength(32);
    await http.stop();
    await stop();
  });

  it('and in the dashboard: the snapshot names the group, the member, its phase, epoch and members; keys say owned', async () => {
    const { clock, a, metrics, keys, stop } = await shardedManager();
    const { snapshot } = await dashboardSnapshot(
      metrics,
      undefined,
      { controllers: [], states: [], limit: 50, offset: 0 },
      clock.now(),
      undefined,
    );
    expect(snapshot.sharding).toEqual({
      group: 'widgets',
      identity: 'pod-a',
      phase: 'member',
      epoch: a.epoch,
      members: ['pod-a', 'pod-b'],
    });
    const owned = snapshot.controllers[0]?.keys.filter((k) => k.owned).map((k) => k.key);
    expect(owned?.sort()).toEqual(keys.filter((k) => a.mayRun(k)).sort());
    const unsharded = await dashboardSnapshot(
      new Metrics({ defaultMetrics: false }),
      undefined,
      { controllers: [], states: [], limit: 50, offset: 0 },
      clock.now(),
      undefined,
    );
    expect(unsharded.snapshot.sharding).toBeUndefined();
    await stop();
  });

  it("shows the leader fence while the manager leads, and no sharding when it doesn't shard", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 7, 3) });
    const fence = { name: 'default/my-operator', holder: 'pod-a', epoch: 7 };
    let lose: () => void = () => {};
    const election: LeaderElection = {
      acquire: () => {
        const lost = new AbortController();
        lose = () => lost.abort();
        return Promise.resolve(lost.signal);
      },
      fence: () => fence,
    };
    const manager = new Manager({ clock, backend: new FakeBackend({ clock }), leaderElection: election });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(manager);
    const http = await startServer({ metrics, clock });
    const before = (await (await http.get('/debug/keys')).json()) as DebugKeys;
    expect(before.fence).toBeUndefined();
    expect(before.sharding).toBeUndefined();
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await clock.advance(100);
    expect(manager.leading).toBe(true);
    const leading = (await (await http.get('/debug/keys')).json()) as DebugKeys;
    expect(leading.fence).toEqual(fence);
    expect(leading.sharding).toBeUndefined();
    const html = await (await http.get('/debug/keys', { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('Leading: fence default/my-operator at epoch 7 (pod-a)');
    await http.stop();
    lose();
    stop.abort();
    await run.catch(() => undefined);
  });
});
