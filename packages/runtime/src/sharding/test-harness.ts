/**
 * Helpers for the sharding tests: a group of ShardMembers over one MemoryMembership on a virtual
 * clock, members whose clocks jump or freeze, and a ledger that checks no key is ever allowed on
 * two members at once. Not exported from the module.
 *
 * @internal
 */

import type { Fence } from '../backend/index.ts';
import { PausableClock, VirtualClock } from '../testing/index.ts';
import type { Membership } from './membership.ts';
import { MemoryMembership } from './memory-membership.ts';
import { ShardMember, type ShardMemberOptions } from './shard-member.ts';

/** Timing the scenario tests use: lease 3 s, renew deadline 2 s, retry 0.5 s, release timeout 1 s. */
export const TIMING = {
  leaseDurationMs: 3_000,
  renewDeadlineMs: 2_000,
  retryPeriodMs: 500,
  releaseTimeoutMs: 1_000,
} as const;

/** A running member of a {@link TestGroup}. */
export interface RunningMember {
  readonly identity: string;
  readonly member: ShardMember;
  readonly clock: PausableClock;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  /** The fences this member raised, in order. */
  readonly revoked: Fence[];
}

/** Keys the ledger checks. */
export const KEYS: readonly string[] = Array.from({ length: 300 }, (_, i) => `ns-${i % 7}/object-${i}`);

/**
 * Members of one group on one virtual clock. `step(ms)` advances time in 50 ms slices and, after
 * each, checks the ledger: no key may be allowed on two members at once (dead, paused and stopped
 * members included: they answer `mayRun` on their own clocks).
 */
export class TestGroup {
  readonly clock = new VirtualClock({ startMs: 1_000_000 });
  readonly membership = new MemoryMembership({ group: 'shards' });
  readonly members = new Map<string, RunningMember>();
  /** Every fence raised by any member, in order. */
  readonly fences: Fence[] = [];
  violations: string[] = [];

  add(
    identity: string,
    options: Partial<ShardMemberOptions> & { readonly membership?: Membership } = {},
  ): RunningMember {
    const clock = new PausableClock(this.clock);
    const revoked: Fence[] = [];
    const member = new ShardMember({
      membership: this.membership.member(identity),
      identity,
      clock,
      ...TIMING,
      revoke: (fence) => {
        revoked.push(fence);
        this.fences.push(fence);
      },
      ...options,
    });
    const stop = new AbortController();
    const done = member.start(stop.signal);
    const running = { identity, member, clock, stop, done, revoked };
    this.members.set(identity, running);
    return running;
  }

  get(identity: string): RunningMember {
    const running = this.members.get(identity);
    if (running === undefined) throw new Error(`no member ${identity}`);
    return running;
  }

  /** Advances the shared clock by `ms` in slices, checking the ledger after each. */
  async step(ms: number, sliceMs = 50): Promise<void> {
    for (let t = 0; t < ms; t += sliceMs) {
      await this.clock.advance(Math.min(sliceMs, ms - t));
      this.check();
    }
  }

  /** Keys a simulated controller of each member is running (see {@link worker}). */
  readonly running = new Map<string, Set<string>>();

  /**
   * Simulates the controller of `identity`: it starts every key `mayRun` allows at each step, and
   * when told of a change stops the keys it may no longer run only `drainMs` later.
   */
  worker(identity: string, drainMs: number): void {
    const running = new Set<string>();
    this.running.set(identity, running);
    const { member } = this.get(identity);
    member.onChange(async () => {
      const lost = [...running].filter((k) => !member.mayRun(k));
      await this.clock.sleep(drainMs);
      for (const key of lost) if (!member.mayRun(key)) running.delete(key);
    });
  }

  /** Records every key allowed on, or running on, more than one member now. */
  check(): void {
    for (const [identity, running] of this.running) {
      for (const key of KEYS) if (this.get(identity).member.mayRun(key)) running.add(key);
    }
    for (const key of KEYS) {
      const allowed = new Set(
        [...this.members.values()].filter((m) => m.member.mayRun(key)).map((m) => m.identity),
      );
      for (const [identity, running] of this.running) if (running.has(key)) allowed.add(identity);
      if (allowed.size > 1) this.violations.push(`${this.clock.now()}: ${key} on ${[...allowed].join(', ')}`);
    }
  }

  /** For each key, the members allowed to run it (only `alive` members count). */
  owners(alive: readonly string[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const key of KEYS) {
      out.set(
        key,
        alive.filter((id) => this.get(id).member.mayRun(key)),
      );
    }
    return out;
  }

  /** Whether every member of `alive` runs under a view of exactly `alive`, and every key is allowed on exactly one. */
  settled(alive: readonly string[]): boolean {
    const expected = [...alive].sort().join(',');
    if (!alive.every((id) => this.get(id).member.view.members.join(',') === expected)) return false;
    return [...this.owners(alive).values()].every((o) => o.length === 1);
  }

  /** Steps until `settled(alive)` or `maxMs` passed; returns the time it took. */
  async settle(alive: readonly string[], maxMs = 30_000): Promise<number> {
    const start = this.clock.now();
    while (!this.settled(alive)) {
      if (this.clock.now() - start > maxMs) {
        const stuck = [...this.owners(alive)].filter(([, o]) => o.length !== 1).slice(0, 3);
        const phases = alive.map(
          (id) => `${id}:${this.get(id).member.phase}[${this.get(id).member.view.members.join(',')}]`,
        );
        throw new Error(`not settled after ${maxMs} ms: ${JSON.stringify(stuck)} ${phases.join(' ')}`);
      }
      await this.step(50);
    }
    return this.clock.now() - start;
  }
}
