import {
  type ClientInterceptor,
  type Fence,
  isFenced,
  type ShardGate,
  type ShardPhase,
} from '@converge/runtime';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { InstrumentableController } from './controller-metrics.ts';
import { Names } from './names.ts';

/**
 * What the metrics and `/debug/keys` read of a manager's shard member (a `ShardMember`): who it
 * is, its phase and epoch, the fence its writes carry, the members it counts live, and whether it
 * may run a key.
 */
export interface ShardSource extends ShardGate {
  readonly identity: string;
  /** The shard group. Default: read from the fence's name, `<group>/<identity>`. */
  readonly group?: string;
  readonly phase: ShardPhase;
  readonly epoch: number;
  readonly fence: Fence;
  readonly members: readonly string[];
  /** Sharded by uid: the hash slots it caches (owns over its claim or its view). */
  readonly slots?: readonly number[];
}

/** Every phase, each one a series of `converge_shard_phase` (1 for the current one). */
const PHASES = Object.keys({
  joining: 0,
  member: 0,
  releasing: 0,
  lapsed: 0,
  resetting: 0,
  stopping: 0,
  stopped: 0,
} satisfies Record<ShardPhase, 0>) as readonly ShardPhase[];

/**
 * The keys `converge_shard_key_space_share` asks `mayRun` about on each scrape: rendezvous hashing
 * spreads keys evenly, so the fraction this member may run estimates its share of every
 * controller's keys (±3 percentage points at 95 %), at 1 024 hashes per member per scrape.
 */
const SAMPLE: readonly string[] = Array.from({ length: 1_024 }, (_, i) => `sample/key-${i}`);

/** Keys of a controller's queue `converge_shard_queue_keys` reads at most. */
const QUEUE_LIMIT = 10_000;

/** The shard group of a member: its `group`, or its fence's name without `/<identity>`. */
export function shardGroupOf(member: ShardSource): string {
  if (typeof member.group === 'string') return member.group;
  const name = member.fence.name;
  const suffix = `/${member.identity}`;
  return name.endsWith(suffix) ? name.slice(0, -suffix.length) : name;
}

/**
 * The shard gate a controller's keys are checked against: the manager's member for a controller
 * that runs without leader election (a sharded controller's default) in a manager that shards;
 * none for a leader-gated controller, or when the manager does not shard.
 */
export function shardGateOf(
  controller: InstrumentableController,
  member: ShardSource | undefined,
): ShardGate | undefined {
  if (member === undefined) return undefined;
  // Controllers say whether they shard; for one that does not say, running without leader
  // election in a sharded manager (a sharded controller's default) is taken to mean it.
  const sharded = controller.sharded ?? controller.needLeaderElection === false;
  return sharded ? member : undefined;
}

/** Checks that `value` has what {@link ShardSource} needs (a `ShardMember`). */
export function isShardSource(value: unknown): value is ShardSource {
  const v = value as Partial<ShardSource> | null | undefined;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.identity === 'string' &&
    typeof v.mayRun === 'function' &&
    typeof v.onChange === 'function' &&
    typeof v.fence === 'object'
  );
}

/**
 * The sharding metrics of one registry: membership, phase, epoch, ownership changes and share of
 * each shard member added, the queued keys of its sharded controllers, and writes refused for a
 * stale fence by the clients observed.
 */
export class ShardCollectors {
  readonly #members: ShardSource[] = [];
  readonly #changes: Counter<'group'>;
  readonly #fenced: Counter<'fence'>;

  constructor(registry: Registry, controllers: () => readonly InstrumentableController[]) {
    const registers = [registry];
    const members = (): readonly ShardSource[] => this.#members;
    new Gauge({
      name: Names.shardMembers,
      help: 'Members of the shard group this replica counts live (itself included once it claims keys), per group',
      labelNames: ['group'],
      registers,
      collect() {
        for (const m of members()) this.labels(shardGroupOf(m)).set(m.members.length);
      },
    });
    new Gauge({
      name: Names.shardEpoch,
      help: "This replica's epoch in the shard group: it rises each time the member gives keys away or takes a new claim; its writes carry it in their fence",
      labelNames: ['group'],
      registers,
      collect() {
        for (const m of members()) this.labels(shardGroupOf(m)).set(m.epoch);
      },
    });
    new Gauge({
      name: Names.shardPhase,
      help: "This replica's shard member phase: 1 for the current one (joining, member, releasing, lapsed, resetting, stopping, stopped), 0 for the others",
      labelNames: ['group', 'phase'],
      registers,
      collect() {
        for (const m of members()) {
          const group = shardGroupOf(m);
          for (const phase of PHASES) this.labels(group, phase).set(m.phase === phase ? 1 : 0);
        }
      },
    });
    this.#changes = new Counter({
      name: Names.shardChanges,
      help: 'Changes of what this shard member may run (a member joined or left, a hand-over began or ended, a lapse), per group',
      labelNames: ['group'],
      registers,
    });
    new Gauge({
      name: Names.shardKeySpaceShare,
      help: 'Fraction of a fixed sample of 1024 keys this shard member may run now: its share of the keys of every sharded controller (about 1/members; 0 while joining or lapsed), per group',
      labelNames: ['group'],
      registers,
      collect() {
        for (const m of members()) {
          let owned = 0;
          for (const key of SAMPLE) if (m.mayRun(key)) owned++;
          this.labels(shardGroupOf(m)).set(owned / SAMPLE.length);
        }
      },
    });
    new Gauge({
      name: Names.shardQueueKeys,
      help: 'Keys in a sharded controller\'s queue (queued, waiting or running; at most the first 10000), by whether this shard member may run them now: owned="false" ones are dropped when they come out of the queue',
      labelNames: ['controller', 'owned'],
      registers,
      collect() {
        this.reset();
        const member = members()[0];
        for (const c of controllers()) {
          const gate = shardGateOf(c, member);
          if (gate === undefined) continue;
          let owned = 0;
          const keys = c.inspect(QUEUE_LIMIT);
          for (const k of keys) if (k.owned ?? gate.mayRun(k.id)) owned++;
          this.labels(c.name, 'true').set(owned);
          this.labels(c.name, 'false').set(keys.length - owned);
        }
      },
    });
    this.#fenced = new Counter({
      name: Names.fencedWrites,
      help: 'Client requests the backend refused for a stale fence (FencedError, CONVERGE_ERR_BACKEND_FENCED): the ownership they were made for had moved, by fence name',
      labelNames: ['fence'],
      registers,
    });
  }

  /** The shard members observed, in the order they were added. */
  get members(): readonly ShardSource[] {
    return this.#members;
  }

  /** Starts observing a shard member: its changes are counted, its state read on scrape. */
  add(member: ShardSource): void {
    if (this.#members.includes(member)) return;
    this.#members.push(member);
    const changes = this.#changes.labels(shardGroupOf(member));
    changes.inc(0);
    member.onChange(() => changes.inc());
    this.#fenced.labels(member.fence.name).inc(0);
  }

  /**
   * A client interceptor counting requests refused with a FencedError, by the name of the fence
   * the request carried (when the error does not say: `fence()`'s, else `unknown`). It only
   * observes: the caller gets the request's result or error.
   */
  interceptor(fence: () => Fence | undefined = () => undefined): ClientInterceptor {
    const counter = this.#fenced;
    return {
      aroundRequest(_info, run) {
        const sent = run();
        sent.catch((error: unknown) => {
          if (!isFenced(error)) return;
          counter.labels(error.fence?.name ?? fence()?.name ?? 'unknown').inc();
        });
        return sent;
      },
    };
  }
}
