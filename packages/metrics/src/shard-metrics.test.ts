import {
  Client,
  done,
  FencedError,
  type KubeObject,
  Manager,
  MemoryMembership,
  resourceType,
  ShardMember,
} from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { parseExposition, sampleValue } from './exposition-test-support.ts';
import { Metrics } from './metrics.ts';
import { Names } from './names.ts';
import { pushController } from './test-harness.ts';

const TIMING = {
  leaseDurationMs: 3_000,
  renewDeadlineMs: 2_000,
  retryPeriodMs: 500,
  releaseTimeoutMs: 1_000,
};

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

function widget(name: string): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'default', name } };
}

/** Two members of group `shards` on one virtual clock: `a` in a manager (metrics on it), `b` alone. */
function shardedPair(backend?: FakeBackend) {
  const clock = new VirtualClock({ startMs: 1_000_000 });
  const membership = new MemoryMembership({ group: 'shards' });
  const member = (identity: string): ShardMember =>
    new ShardMember({ membership: membership.member(identity), identity, clock, ...TIMING });
  const a = member('a');
  const b = member('b');
  const manager = new Manager({ clock, backend: backend ?? new FakeBackend({ clock }), sharding: a });
  const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(manager);
  const stopA = new AbortController();
  const stopB = new AbortController();
  return {
    clock,
    a,
    b,
    manager,
    metrics,
    start: () => ({ a: manager.start(stopA.signal), b: b.start(stopB.signal) }),
    stopA,
    stopB,
  };
}

describe('the metrics of a sharded manager', () => {
  it('report members, phase, epoch, ownership changes and the share of keys as members join and leave', async () => {
    const { clock, a, metrics, start, stopA, stopB } = shardedPair();
    let families = parseExposition(await metrics.scrape());
    const g = { group: 'shards' };
    expect(sampleValue(families, Names.shardPhase, { ...g, phase: 'joining' })).toBe(1);
    expect(sampleValue(families, Names.shardPhase, { ...g, phase: 'member' })).toBe(0);
    expect(sampleValue(families, Names.shardMembers, g)).toBe(0);
    expect(sampleValue(families, Names.shardKeySpaceShare, g)).toBe(0);
    expect(sampleValue(families, Names.shardChanges, g)).toBe(0);
    expect(sampleValue(families, Names.fencedWrites, { fence: 'shards/a' })).toBe(0);
    expect(families.get(Names.shardPhase)?.type).toBe('gauge');
    expect(families.get(Names.shardChanges)?.type).toBe('counter');

    const runs = start();
    await clock.advance(8_000);
    expect(a.members).toEqual(['a', 'b']);
    families = parseExposition(await metrics.scrape());
    expect(sampleValue(families, Names.shardPhase, { ...g, phase: 'member' })).toBe(1);
    expect(sampleValue(families, Names.shardPhase, { ...g, phase: 'joining' })).toBe(0);
    expect(sampleValue(families, Names.shardMembers, g)).toBe(2);
    expect(sampleValue(families, Names.shardEpoch, g)).toBe(a.epoch);
    expect(a.epoch).toBeGreaterThan(0);
    const half = sampleValue(families, Names.shardKeySpaceShare, g);
    expect(half).toBeGreaterThan(0.4);
    expect(half).toBeLessThan(0.6);
    const changes = sampleValue(families, Names.shardChanges, g);
    expect(changes).toBeGreaterThan(0);

    // b leaves: a takes every key.
    stopB.abort();
    await runs.b;
    await clock.advance(4_000);
    families = parseExposition(await metrics.scrape());
    expect(sampleValue(families, Names.shardMembers, g)).toBe(1);
    expect(sampleValue(families, Names.shardKeySpaceShare, g)).toBe(1);
    expect(sampleValue(families, Names.shardChanges, g)).toBeGreaterThan(changes);
    expect(sampleValue(families, Names.shardEpoch, g)).toBe(a.epoch);

    stopA.abort();
    await clock.advance(5_000);
    await runs.a;
    families = parseExposition(await metrics.scrape());
    expect(sampleValue(families, Names.shardPhase, { ...g, phase: 'stopped' })).toBe(1);
    expect(sampleValue(families, Names.shardKeySpaceShare, g)).toBe(0);
  });

  it("split a sharded controller's queued keys by whether this member may run them; a leader-gated one is left out", async () => {
    const { clock, a, manager, metrics, start, stopA, stopB } = shardedPair();
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
    metrics.instrument(controller).instrument(gated.controller);
    const runs = start();
    await clock.advance(8_000);
    expect(a.members).toEqual(['a', 'b']);
    const keys = Array.from({ length: 40 }, (_, i) => `default/w-${i}`);
    const first = keys.find((k) => a.mayRun(k)) as string;
    push(first); // runs, and holds the worker
    await settle();
    for (const key of keys) if (key !== first) push(key);
    await settle();
    const owned = keys.filter((k) => a.mayRun(k)).length;
    expect(owned).toBeGreaterThan(5);
    expect(owned).toBeLessThan(35);
    const families = parseExposition(await metrics.scrape());
    const c = { controller: 'widgets' };
    expect(sampleValue(families, Names.shardQueueKeys, { ...c, owned: 'true' })).toBe(owned);
    expect(sampleValue(families, Names.shardQueueKeys, { ...c, owned: 'false' })).toBe(keys.length - owned);
    expect(() => sampleValue(families, Names.shardQueueKeys, { controller: 'gated', owned: 'true' })).toThrow(
      /0 samples/,
    );
    release();
    stopB.abort();
    stopA.abort();
    await clock.advance(5_000);
    await Promise.all([runs.a, runs.b]);
  });
});

describe('a shard member run by hand', () => {
  it('is instrumented as a sharded manager is', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const member = new ShardMember({
      membership: new MemoryMembership({ group: 'solo' }).member('only'),
      identity: 'only',
      clock,
      ...TIMING,
    });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(member).instrument(member);
    expect(metrics.shardMember()).toBe(member);
    const stop = new AbortController();
    const run = member.start(stop.signal);
    await clock.advance(4_000);
    const families = parseExposition(await metrics.scrape());
    const g = { group: 'solo' };
    expect(sampleValue(families, Names.shardPhase, { ...g, phase: 'member' })).toBe(1);
    expect(sampleValue(families, Names.shardMembers, g)).toBe(1);
    expect(sampleValue(families, Names.shardKeySpaceShare, g)).toBe(1);
    expect(sampleValue(families, Names.fencedWrites, { fence: 'solo/only' })).toBe(0);
    stop.abort();
    await clock.advance(5_000);
    await run;
  });
});

describe('writes refused for a stale fence', () => {
  it("are counted by the fence's name, from the manager's client and from a client built by hand", async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const fake = new FakeBackend({ clock });
    const stale = { name: 'shards/a', holder: 'a', epoch: 1 };
    let refusal: FencedError = FencedError.stale(stale, { ...stale, epoch: 2 });
    const backend = new Proxy(fake, {
      get(target, property) {
        if (property === 'create') return () => Promise.reject(refusal);
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { manager, metrics } = shardedPair(backend);
    await expect(manager.client.create(widgets, widget('x'))).rejects.toBe(refusal);
    refusal = new FencedError('stale fencing epoch'); // a refusal that does not name the fence
    await expect(manager.client.create(widgets, widget('y'))).rejects.toBe(refusal);
    const own = new Client({ backend });
    metrics.instrument(own).instrument(own);
    await expect(own.create(widgets, widget('z'))).rejects.toBe(refusal);
    const families = parseExposition(await metrics.scrape());
    expect(sampleValue(families, Names.fencedWrites, { fence: 'shards/a' })).toBe(2);
    expect(sampleValue(families, Names.fencedWrites, { fence: 'unknown' })).toBe(1);
    expect(families.get(Names.fencedWrites)?.type).toBe('counter');
  });
});
