import { describe, expect, it } from 'vitest';
import { isNotFound } from '../backend/index.ts';
import { ControllerBuilder } from '../builder/index.ts';
import { Controller } from '../controller/index.ts';
import { DynamicController } from '../dynamic/index.ts';
import { InformerRegistry } from '../informer/index.ts';
import { Manager } from '../manager/index.ts';
import { keyToString, type ObjectKey } from '../object/index.ts';
import { done, type ReconcileContext, requeueAfter } from '../reconcile/index.ts';
import type { Runnable } from '../runnable/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { ShardKeyMovedError } from './errors.ts';
import { MemoryMembership } from './memory-membership.ts';
import { type ShardListener, ShardMember } from './shard-member.ts';

const configMapType = suiteTypes.configMap;
const TIMING = {
  leaseDurationMs: 3_000,
  renewDeadlineMs: 2_000,
  retryPeriodMs: 500,
  releaseTimeoutMs: 1_000,
};

/** Who is reconciling which key right now, and every time two replicas did at once. */
class Ledger {
  readonly running = new Map<string, string>();
  readonly overlaps: string[] = [];
  readonly runs = new Map<string, Set<string>>();

  enter(replica: string, key: string, at: number): void {
    const other = this.running.get(key);
    if (other !== undefined && other !== replica)
      this.overlaps.push(`${at}: ${key} on ${other} and ${replica}`);
    this.running.set(key, replica);
    const keys = this.runs.get(replica) ?? new Set<string>();
    keys.add(key);
    this.runs.set(replica, keys);
  }

  leave(replica: string, key: string): void {
    if (this.running.get(key) === replica) this.running.delete(key);
  }
}

describe('a sharded controller', () => {
  it('two replicas on one backend split the keys, hand them over when one joins and when one leaves, and never reconcile one key at once', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const backend = new ReferenceBackend({ types: [configMapType], clock });
    const membership = new MemoryMembership({ group: 'configmaps' });
    const names = Array.from({ length: 40 }, (_, i) => `cm-${i}`);
    for (const name of names)
      await backend.create(configMapType, { metadata: { namespace: 'default', name } });
    const ledger = new Ledger();
    const aborted: unknown[] = [];

    const replica = (identity: string) => {
      const manager = new Manager({ clock, backend });
      const member = new ShardMember({ membership: membership.member(identity), identity, clock, ...TIMING });
      manager.add(member);
      manager
        .controller(configMapType)
        .withOptions({ sharding: { member }, maxConcurrentReconciles: 4 })
        .complete(async (key: ObjectKey, { signal }: ReconcileContext) => {
          const k = keyToString(key);
          ledger.enter(identity, k, clock.now());
          try {
            await clock.sleep(300, signal); // an external call
          } catch (error) {
            aborted.push(signal.reason);
            throw error;
          } finally {
            ledger.leave(identity, k);
          }
          return requeueAfter(700);
        });
      const stop = new AbortController();
      const run = manager.start(stop.signal);
      return { member, stop, run };
    };

    const a = replica('a');
    await clock.advance(8_000);
    expect(ledger.runs.get('a')?.size).toBe(names.length);

    const b = replica('b');
    await clock.advance(8_000);
    expect(b.member.view.members).toEqual(['a', 'b']);
    const before = ledger.runs.get('b')?.size ?? 0;
    expect(before).toBeGreaterThan(names.length / 5);
    // After the hand-over, a reconciles only its own half.
    ledger.runs.set('a', new Set());
    await clock.advance(3_000);
    const ofA = ledger.runs.get('a') ?? new Set<string>();
    expect(ofA.size).toBeGreaterThan(0);
    expect([...ofA].every((k) => a.member.mayRun(k))).toBe(true);
    expect(aborted.some((reason) => reason instanceof ShardKeyMovedError)).toBe(true);
    // Events reach both replicas; each reconciles only the keys it owns.
    for (const name of names) {
      await backend.update(configMapType, {
        ...(await backend.get(configMapType, { namespace: 'default', name })),
        data: { touched: 'yes' },
      });
    }
    ledger.runs.set('a', new Set());
    ledger.runs.set('b', new Set());
    await clock.advance(3_000);
    const ranA = ledger.runs.get('a') ?? new Set<string>();
    const ranB = ledger.runs.get('b') ?? new Set<string>();
    expect([...ranA].filter((k) => ranB.has(k))).toEqual([]);
    expect(ranA.size + ranB.size).toBe(names.length);
    expect(ledger.overlaps).toEqual([]);

    b.stop.abort();
    await b.run;
    ledger.runs.set('a', new Set());
    await clock.advance(4_000);
    expect(a.member.view.members).toEqual(['a']);
    expect(ledger.runs.get('a')?.size).toBe(names.length);
    expect(ledger.overlaps).toEqual([]);
    a.stop.abort();
    await clock.advance(5_000);
    await a.run;
  });

  it('sharded by uid, each replica caches and reconciles only its share, and the shares follow the members', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const backend = new ReferenceBackend({ types: [configMapType], clock });
    const membership = new MemoryMembership({ group: 'by-uid' });
    const names = Array.from({ length: 60 }, (_, i) => `cm-${i}`);
    for (const name of names)
      await backend.create(configMapType, { metadata: { namespace: 'default', name } });
    const ledger = new Ledger();
    const replica = (identity: string) => {
      const member = new ShardMember({
        membership: membership.member(identity),
        identity,
        clock,
        by: 'uid',
        ...TIMING,
      });
      const manager = new Manager({ clock, backend, sharding: member });
      manager
        .controller(configMapType)
        .withOptions({ maxConcurrentReconciles: 4 })
        .complete(async (key: ObjectKey, { signal }: ReconcileContext) => {
          const k = keyToString(key);
          ledger.enter(identity, k, clock.now());
          try {
            // A cached read finds the replica's own objects; a deleted one is reconciled by its owner.
            const object = await manager.client.get(configMapType, key).catch((error: unknown) => {
              if (isNotFound(error)) return undefined;
              throw error;
            });
            if (object === undefined) return done();
            await clock.sleep(50, signal); // an external call
          } finally {
            ledger.leave(identity, k);
          }
          return requeueAfter(700);
        });
      const stop = new AbortController();
      const run = manager.start(stop.signal);
      // What the controller's informer holds (the registry shares it: the same spec and scope).
      const { informer } = manager.informers.acquire({
        backend,
        type: configMapType,
        shardScope: member.cacheScope,
      });
      const cached = async () => informer.cache.list().map((o) => o.metadata.name ?? '');
      return { member, manager, stop, run, cached };
    };
    const a = replica('a');
    await clock.advance(8_000);
    expect(ledger.runs.get('a')?.size).toBe(names.length);
    expect((await a.cached()).length).toBe(names.length);

    const b = replica('b');
    await clock.advance(10_000);
    expect(b.member.view.members).toEqual(['a', 'b']);
    const [ofA, ofB] = [await a.cached(), await b.cached()];
    // 32 slots each: each caches about half, the two halves are disjoint and cover everything.
    expect(ofA.length).toBeGreaterThan(names.length / 5);
    expect(ofB.length).toBeGreaterThan(names.length / 5);
    expect(ofA.filter((n) => ofB.includes(n))).toEqual([]);
    expect([...ofA, ...ofB].sort()).toEqual([...names].sort());
    // The client reads the whole kind still: a list from the server, a miss outside the share too.
    expect((await a.manager.client.list(configMapType, { namespace: 'default' })).length).toBe(names.length);
    const foreign = ofB[0] as string;
    expect(
      (await a.manager.client.get(configMapType, { namespace: 'default', name: foreign })).metadata.name,
    ).toBe(foreign);
    ledger.runs.clear();
    await clock.advance(3_000);
    expect([...(ledger.runs.get('a') ?? [])].sort()).toEqual(ofA.map((n) => `default/${n}`).sort());
    expect([...(ledger.runs.get('b') ?? [])].sort()).toEqual(ofB.map((n) => `default/${n}`).sort());
    expect(ledger.overlaps).toEqual([]);

    // A new object goes to one replica only, and a deleted one is reconciled once more, by its owner.
    await backend.create(configMapType, { metadata: { namespace: 'default', name: 'late' } });
    await backend.delete(configMapType, { namespace: 'default', name: 'cm-0' });
    ledger.runs.clear();
    await clock.advance(1_000);
    const ran = [...(ledger.runs.get('a') ?? []), ...(ledger.runs.get('b') ?? [])];
    expect(ran.filter((k) => k === 'default/late')).toHaveLength(1);
    const ranDeleted = ['a', 'b'].filter((r) => ledger.runs.get(r)?.has('default/cm-0'));
    expect(ranDeleted).toEqual([ofA.includes('cm-0') ? 'a' : 'b']);

    b.stop.abort();
    await clock.advance(6_000);
    await b.run;
    expect(a.member.view.members).toEqual(['a']);
    expect((await a.cached()).length).toBe(names.length); // 59 of them left, and 'late'
    ledger.runs.clear();
    await clock.advance(2_000);
    expect(ledger.runs.get('a')?.size).toBe(names.length);
    expect(ledger.overlaps).toEqual([]);
    a.stop.abort();
    await clock.advance(5_000);
    await a.run;
  });

  it('a sharded DynamicController splits the objects of a served kind with another replica', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const backend = new ReferenceBackend({ types: [configMapType], clock });
    const membership = new MemoryMembership({ group: 'dynamic' });
    const names = Array.from({ length: 30 }, (_, i) => `cm-${i}`);
    for (const name of names)
      await backend.create(configMapType, { metadata: { namespace: 'default', name } });
    const ledger = new Ledger();
    const stop = new AbortController();
    const runs: Promise<void>[] = [];
    const replica = (identity: string) => {
      const member = new ShardMember({ membership: membership.member(identity), identity, clock, ...TIMING });
      const controller = new DynamicController({ backend, clock, workers: 2, sharding: { member } });
      runs.push(member.start(stop.signal), controller.start(stop.signal));
      return { member, controller };
    };
    const replicas = [replica('a'), replica('b')];
    await Promise.all(
      replicas.map(({ controller }, i) =>
        controller.serve(configMapType, async (request, { signal }) => {
          const key = `${request.namespace}/${request.name}`;
          ledger.enter(i === 0 ? 'a' : 'b', key, clock.now());
          try {
            await clock.sleep(200, signal);
          } finally {
            ledger.leave(i === 0 ? 'a' : 'b', key);
          }
          return requeueAfter(500);
        }),
      ),
    );
    await clock.advance(8_000);
    const ranA = ledger.runs.get('a') ?? new Set<string>();
    const ranB = ledger.runs.get('b') ?? new Set<string>();
    expect(replicas[0]?.member.view.members).toEqual(['a', 'b']);
    expect(ranA.size).toBeGreaterThan(0);
    expect(ranB.size).toBeGreaterThan(0);
    ledger.runs.clear();
    await clock.advance(2_000);
    const nowA = ledger.runs.get('a') ?? new Set<string>();
    const nowB = ledger.runs.get('b') ?? new Set<string>();
    expect([...nowA].filter((k) => nowB.has(k))).toEqual([]);
    expect(nowA.size + nowB.size).toBe(names.length);
    expect(ledger.overlaps).toEqual([]);
    stop.abort();
    await clock.advance(5_000);
    await Promise.all(runs);
  });

  it('a builder host with a shard member shards its controllers, and enqueues cached primaries it gains', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const backend = new ReferenceBackend({ types: [configMapType], clock });
    for (const name of ['x-0', 'x-1', 'y-0', 'y-1']) {
      await backend.create(configMapType, { metadata: { namespace: 'default', name } });
    }
    let owned = 'x-';
    const listeners: ShardListener[] = [];
    const gate = {
      mayRun: (key: string) => key.startsWith(`default/${owned}`),
      onChange: (listener: ShardListener) => {
        listeners.push(listener);
        return () => undefined;
      },
    };
    const informers = new InformerRegistry({ clock });
    const added: Runnable[] = [];
    const reconciled: string[] = [];
    new ControllerBuilder({ informers, backend, clock, add: (r) => added.push(r), sharding: gate })
      .for(configMapType)
      .complete(async (key) => {
        reconciled.push(key.name);
        return done();
      });
    const stop = new AbortController();
    const runs = [informers.start(stop.signal), ...added.map((r) => r.start(stop.signal))];
    await clock.advance(1_000);
    expect(reconciled.sort()).toEqual(['x-0', 'x-1']);
    owned = 'y-';
    const change = { phase: 'member', view: { version: 2, members: ['a'] }, members: ['a'] } as const;
    for (const listener of listeners) await listener(change);
    await clock.advance(1_000);
    expect(reconciled.sort()).toEqual(['x-0', 'x-1', 'y-0', 'y-1']);
    stop.abort();
    await Promise.all(runs);
  });

  it('does not need leadership when sharded, unless told', () => {
    const member = { mayRun: () => true, onChange: () => () => undefined };
    const reconciler = () => undefined;
    expect(new Controller<string>({ name: 'x', reconciler, sharding: { member } }).needLeaderElection).toBe(
      false,
    );
    expect(new Controller<string>({ name: 'x', reconciler }).needLeaderElection).toBe(true);
    expect(
      new Controller<string>({ name: 'x', reconciler, sharding: { member }, needLeaderElection: true })
        .needLeaderElection,
    ).toBe(true);
    // `sharded` says so either way (what metrics and /debug/keys read)
    expect(new Controller<string>({ name: 'x', reconciler, sharding: { member } }).sharded).toBe(true);
    expect(new Controller<string>({ name: 'x', reconciler, needLeaderElection: false }).sharded).toBe(false);
  });

  it("a sharded manager shards the controllers it makes: the builder's and its dynamic controller", () => {
    const clock = new VirtualClock();
    const backend = new ReferenceBackend({ types: [configMapType], clock });
    const membership = new MemoryMembership({ group: 'configmaps' });
    const member = new ShardMember({ membership: membership.member('a'), identity: 'a', clock, ...TIMING });
    const manager = new Manager({ clock, backend, sharding: member });
    const built = manager.controller(configMapType).complete(() => undefined);
    const dynamic = manager.dynamicController();
    // The simulator (`--sharded`) found the dynamic controller unsharded: every replica ran every key.
    for (const controller of [built, dynamic]) {
      expect(controller.sharded).toBe(true);
      expect(controller.needLeaderElection).toBe(false);
    }
    // a manager without sharding leaves both leader-gated
    const plain = new Manager({ clock, backend });
    expect(plain.dynamicController().sharded).toBe(false);
    expect(plain.dynamicController().needLeaderElection).toBe(true);
  });

  it('rejects a sharding option without a member', () => {
    expect(
      () =>
        new Controller<string>({
          name: 'x',
          reconciler: () => undefined,
          sharding: { member: undefined as never },
        }),
    ).toThrow(/sharding.member/);
  });
});
