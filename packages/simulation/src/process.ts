import type { LeaderElector, Manager, ShardMember } from '@converge/runtime';
import type { VirtualClock } from '@converge/runtime/testing';
import { ProcessClock } from './process-clock.ts';
import type { Random } from './random.ts';

/** A watch of a process, as the fault layer tracks it. */
export interface WatchState {
  /** Set when an outage cut the connection: the watch ends with a 503. */
  cut: boolean;
  wake(): void;
  /** Events received and not yet delivered (delayed or held back by a lagging replica). */
  pending(): number;
  /** Faults stopped: deliver what is held back now, and close no more. */
  release(): void;
}

/** Something the simulator observes of a controller: its name and queue. */
export interface ObservedController {
  readonly name: string;
  inspect(
    limit?: number,
  ): readonly { readonly id: string; readonly state: string; readonly lastError?: Error }[];
}

/**
 * One incarnation of an operator process: replica `replica`'s `incarnation`-th start. It owns its
 * clock (paused or dead with it), its manager and what the fault layer tracks of it.
 */
export class SimProcess {
  readonly id: string;
  readonly replica: number;
  readonly incarnation: number;
  readonly clock: ProcessClock;
  readonly watches = new Map<AbortController, WatchState>();
  readonly controllers: ObservedController[] = [];
  /** Served by a lagging replica at `revision` until `until`. */
  stale: { readonly revision: number; readonly until: number } | undefined;
  manager: Manager | undefined;
  /** Its leader elector, when the replicas elect a leader (not sharded). */
  elector: LeaderElector | undefined;
  /** Its shard membership, when the replicas shard. */
  member: ShardMember | undefined;
  /** How many times it has been paused (the overlap oracle tells a frozen run from a live one). */
  pauses = 0;
  readonly stop = new AbortController();
  #waiters: (() => void)[] = [];

  constructor(replica: number, incarnation: number, clock: ProcessClock) {
    this.replica = replica;
    this.incarnation = incarnation;
    this.id = `replica-${replica}#${incarnation}`;
    this.clock = clock;
  }

  static create(replica: number, incarnation: number, world: VirtualClock, random: Random): SimProcess {
    return new SimProcess(replica, incarnation, new ProcessClock(world, random));
  }

  get dead(): boolean {
    return this.clock.dead;
  }

  get paused(): boolean {
    return this.clock.paused;
  }

  /** Resolves at once while running, on resume while paused, never once dead. */
  gate(): Promise<void> {
    if (this.clock.dead) return new Promise(() => {});
    if (!this.clock.paused) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  pause(): void {
    this.pauses++;
    this.clock.pause();
  }

  resume(): void {
    if (!this.clock.paused || this.clock.dead) return;
    this.clock.resume();
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** The process dies: no timer, call or watch of it goes on. */
  kill(): void {
    this.clock.kill();
    this.#waiters = [];
    for (const [inner, state] of this.watches) {
      inner.abort();
      state.wake();
    }
    this.watches.clear();
  }

  /** Events its watches hold back. */
  pendingEvents(): number {
    let n = 0;
    for (const state of this.watches.values()) n += state.pending();
    return n;
  }

  /** Faults stopped: the lagging replica has caught up and held events are delivered. */
  release(): void {
    this.stale = undefined;
    for (const state of this.watches.values()) state.release();
  }

  /** An outage cuts every open watch. */
  cutWatches(): void {
    for (const state of this.watches.values()) {
      state.cut = true;
      state.wake();
    }
  }
}
