import { type Fence, isAlreadyExists, isConflict, isFenced, isNotFound } from '../backend/index.ts';
import { type Clock, realClock, settlesWithin, type Timer } from '../clock/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { InformerShardScope } from '../informer/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { durationMs, positiveDurationMs } from '../options.ts';
import type { Runnable } from '../runnable/index.ts';
import { ShardCoordinator, type ShardPhase, type ShardView } from './coordinator.ts';
import type { Membership } from './membership.ts';
import { slotsSelector } from './slots.ts';

/** What a {@link ShardMember} tells its listeners when what `mayRun` answers may have changed. */
export interface ShardChange {
  readonly phase: ShardPhase;
  /** The confirmed claim this member runs keys under. */
  readonly view: ShardView;
  /** The members it currently counts live. */
  readonly members: readonly string[];
}

/**
 * Called on every change. It must stop (abort or finish) every running key for which `mayRun` is
 * now false, and resolve once they stopped — the member acknowledges a hand-over only then (or
 * after `releaseTimeoutMs`). It should enqueue the keys for which `mayRun` became true.
 */
export type ShardListener = (change: ShardChange) => void | Promise<void>;

/**
 * What a controller needs of a shard member: whether it may run a key now, and word of changes.
 * {@link ShardMember} is one; a test can pass its own.
 */
export interface ShardGate {
  mayRun(key: string): boolean;
  /** Adds a listener; returns a function that removes it. */
  onChange(listener: ShardListener): () => void;
  /**
   * How controllers key their requests for this gate: `'key'` (default) by the request's key,
   * rendezvous-hashed; `'uid'` by the primary object's uid slot ({@link uidShardKey}), so that each
   * replica caches only its share through {@link cacheScope}.
   */
  readonly by?: ShardBy;
  /** With `by: 'uid'`: the share to cache, as a changing shard selector for informers. */
  readonly cacheScope?: InformerShardScope;
}

/** How a shard group splits keys; see {@link ShardMemberOptions.by}. */
export type ShardBy = 'key' | 'uid';

export interface ShardMemberOptions {
  /** Where the group's records live; its `group` is the shard group. */
  readonly membership: Membership;
  /** This member's identity, unique in the group (a pod name). */
  readonly identity: string;
  /** Default 15 000. Others consider this member gone after its record stayed unchanged this long. */
  readonly leaseDurationMs?: number;
  /** Default 10 000. The member runs nothing once its last successful renewal started this long ago. */
  readonly renewDeadlineMs?: number;
  /** Default 2 000. How often it renews and reads the group. */
  readonly retryPeriodMs?: number;
  /** Default `renewDeadlineMs`. How long a hand-over waits for the listeners to stop moved keys. */
  readonly releaseTimeoutMs?: number;
  /**
   * Raises the fence `fence.name` to `fence.epoch`: from then on writes carrying a lower epoch for
   * that name are refused. Called for a member gone past its lease (with this member as `holder`)
   * before its keys are taken, and for this member before it publishes a new epoch. Wire it to
   * the backend the controller writes to: `revoke: (fence, signal) => backend.announceFence?.(fence,
   * signal)`. A {@link FencedError} means the mark is already at least that high: for another
   * member that is as good; for this one it takes a higher epoch. Default: no fencing.
   */
  readonly revoke?: (fence: Fence, signal: AbortSignal) => unknown;
  /**
   * How the group's controllers split their keys; every member of a group must use the same.
   * - `'key'` (default): by each request's key (`namespace/name`), rendezvous-hashed over the
   *   members. Works for every request type; every replica caches every object and drops the
   *   events of keys it does not own.
   * - `'uid'`: by the primary object's uid, in 64 hash slots ({@link SHARD_SLOTS}) balanced over
   *   the members; each replica lists and watches only its slots (a KEP-5866 `shardSelector` the
   *   embedded API server, NATS and newer kube-apiservers filter on, others on the client), so
   *   its cache, its events and its CPU shrink with the number of replicas. The builder's
   *   controllers and the manager's cached reads of their primary kinds follow it.
   */
  readonly by?: ShardBy;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/**
 * One replica's membership in a shard group: a {@link Runnable} that announces the replica,
 * renews its record every `retryPeriodMs`, reads everyone's, and answers {@link mayRun} — whether
 * this replica may reconcile a key now — through a {@link ShardCoordinator}. Keys are assigned by
 * rendezvous hashing over the live members; a key changes hands only after its previous owner
 * stopped it and said so, or after that owner's lease expired and its fence was raised.
 *
 * On stop it tells its listeners to stop everything, raises its own fence and publishes that it
 * holds nothing, so the others take its keys at once.
 *
 * @example
 * const member = new ShardMember({ membership, identity: process.env.POD_NAME ?? hostname() });
 * member.onChange(() => queue.requeueOwned((key) => member.mayRun(key)));
 * void member.start(signal);
 * if (member.mayRun('default/web')) await reconcile('default/web');
 */
export class ShardMember implements Runnable, ShardGate {
  readonly needLeaderElection = false;
  readonly identity: string;
  readonly by: ShardBy;
  /**
   * This member's share as a shard selector that follows it (for informers' `shardScope`): the
   * uid slots it owns over its confirmed claim or its current view — what it may run now or once
   * a hand-over completes. Selects nothing while it owns no slot.
   */
  readonly cacheScope: InformerShardScope;
  readonly #membership: Membership;
  readonly #coordinator: ShardCoordinator;
  readonly #revoke: NonNullable<ShardMemberOptions['revoke']>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #listeners = new Set<ShardListener>();
  #started = false;
  #signature = '';
  #loggedPhase: ShardPhase | undefined;
  #dispatchedDrain: number | undefined;
  #notifying: Promise<void> = Promise.resolve();
  #lapseTimer: Timer | undefined;
  #stopped: Promise<void>;
  #resolveStopped: () => void = () => {};

  constructor(options: ShardMemberOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const membership = options.membership as Partial<Membership> | undefined;
    if (typeof membership !== 'object' || membership === null || typeof membership.list !== 'function') {
      throw new OptionsError('membership', membership, 'a Membership');
    }
    if (typeof options.identity !== 'string' || options.identity === '' || options.identity.includes(',')) {
      throw new OptionsError('identity', options.identity, 'a non-empty string without commas');
    }
    const leaseDurationMs = positiveDurationMs('leaseDurationMs', options.leaseDurationMs, 15_000);
    const renewDeadlineMs = positiveDurationMs('renewDeadlineMs', options.renewDeadlineMs, 10_000);
    const retryPeriodMs = positiveDurationMs('retryPeriodMs', options.retryPeriodMs, 2_000);
    const releaseTimeoutMs = durationMs('releaseTimeoutMs', options.releaseTimeoutMs, renewDeadlineMs);
    if (leaseDurationMs <= renewDeadlineMs) {
      throw new OptionsError(
        'leaseDurationMs',
        leaseDurationMs,
        `more than renewDeadlineMs (${renewDeadlineMs})`,
      );
    }
    if (renewDeadlineMs <= retryPeriodMs) {
      throw new OptionsError(
        'renewDeadlineMs',
        renewDeadlineMs,
        `more than retryPeriodMs (${retryPeriodMs})`,
      );
    }
    const by = options.by ?? 'key';
    if (by !== 'key' && by !== 'uid') throw new OptionsError('by', by, "'key' or 'uid'");
    this.identity = options.identity;
    this.by = by;
    this.#membership = membership as Membership;
    this.#revoke = options.revoke ?? (() => {});
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? noopLogger).child({
      shardGroup: membership.group,
      member: this.identity,
    });
    this.#coordinator = new ShardCoordinator({
      group: this.#membership.group,
      identity: this.identity,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
      releaseTimeoutMs,
    });
    this.#stopped = new Promise((resolve) => {
      this.#resolveStopped = resolve;
    });
    const coordinator = this.#coordinator;
    this.cacheScope = Object.freeze({
      selector: () => slotsSelector(coordinator.slots),
      onChange: (listener: () => void) => this.onChange(() => listener()),
    });
  }

  /** Whether this replica may reconcile `key` now. */
  mayRun(key: string): boolean {
    return this.#coordinator.mayRun(key, this.#clock.now());
  }

  get phase(): ShardPhase {
    return this.#coordinator.phase;
  }

  get epoch(): number {
    return this.#coordinator.epoch;
  }

  /** The fence writes for this member's keys carry. */
  get fence(): Fence {
    return this.#coordinator.fence;
  }

  /** The uid slots this member caches: those it owns over its confirmed claim or its view (see {@link cacheScope}). */
  get slots(): readonly number[] {
    return this.#coordinator.slots;
  }

  /** The members this replica counts live and participating. */
  get members(): readonly string[] {
    return this.#coordinator.members;
  }

  /** The shard group (its membership's). */
  get group(): string {
    return this.#membership.group;
  }

  get view(): ShardView {
    return this.#coordinator.view;
  }

  /** Adds a listener; returns a function that removes it. */
  onChange(listener: ShardListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once the member stopped after its signal aborted (its keys released, if it could). */
  stopped(): Promise<void> {
    return this.#stopped;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('ShardMember');
    this.#started = true;
    const retry = this.#coordinator.timing.retryPeriodMs;
    try {
      await this.#read();
      while (!signal.aborted) {
        await this.#cycle();
        await this.#clock.sleep(retry, signal).catch(() => undefined);
      }
      await this.#leave();
    } finally {
      this.#lapseTimer?.cancel();
      this.#resolveStopped();
    }
  }

  /** Graceful stop: release everything, bounded by the release timeout plus a few renewals. */
  async #leave(): Promise<void> {
    const coordinator = this.#coordinator;
    coordinator.stop(this.#clock.now());
    this.#notify();
    const { releaseTimeoutMs, renewDeadlineMs, retryPeriodMs } = coordinator.timing;
    const deadline = this.#clock.now() + releaseTimeoutMs + renewDeadlineMs;
    while (coordinator.phase !== 'stopped' && this.#clock.now() < deadline) {
      await this.#cycle();
      if ((coordinator.phase as ShardPhase) === 'stopped') break;
      // Wake for the drain or the next retry, whichever comes first.
      await Promise.race([this.#notifying, this.#clock.sleep(retryPeriodMs)]);
    }
    this.#logger.info({ phase: coordinator.phase, epoch: coordinator.epoch }, 'Left the shard group');
  }

  async #cycle(): Promise<void> {
    const coordinator = this.#coordinator;
    coordinator.tick(this.#clock.now());
    this.#notify();
    for (const revocation of coordinator.revocations()) {
      try {
        await this.#bounded((signal) => this.#revoke(revocation.fence, signal));
        coordinator.revoked(revocation.identity, revocation.fence.epoch);
        if (revocation.identity !== this.identity) {
          this.#logger.info(
            { revoked: revocation.identity, epoch: revocation.fence.epoch },
            'Revoked a member gone past its lease',
          );
        }
      } catch (error) {
        if (isFenced(error) && revocation.identity !== this.identity) {
          coordinator.revoked(revocation.identity, revocation.fence.epoch); // already fenced at least as high
        } else if (isFenced(error)) {
          coordinator.fencedAt(error.current?.epoch ?? revocation.fence.epoch);
        } else {
          this.#logger.warn(
            { err: error, fence: revocation.fence.name },
            'Could not raise a fence; retrying',
          );
        }
      }
    }
    const write = coordinator.nextWrite(this.#clock.now());
    if (write !== undefined) {
      const startedAt = this.#clock.now();
      try {
        const version = await this.#bounded((signal) =>
          write.version === undefined
            ? this.#membership.create(write.record, signal)
            : this.#membership.update(write.record, write.version, signal),
        );
        coordinator.wrote(write.record, version, startedAt);
        this.#armLapse(startedAt);
      } catch (error) {
        const kind =
          isConflict(error) || isAlreadyExists(error) ? 'conflict' : isNotFound(error) ? 'notFound' : 'other';
        coordinator.writeFailed(kind);
        this.#logger.warn({ err: error, kind }, 'Could not renew the membership record');
      }
    }
    await this.#read();
    for (const purge of coordinator.purges()) {
      try {
        await this.#bounded((signal) => this.#membership.delete(purge.identity, purge.version, signal));
      } catch {
        // Someone else purged it, or it came back: the next read tells.
      }
    }
    this.#notify();
  }

  async #read(): Promise<void> {
    try {
      const snapshot = await this.#bounded((signal) => this.#membership.list(signal));
      this.#coordinator.observe(snapshot, this.#clock.now());
    } catch (error) {
      this.#logger.warn({ err: error }, 'Could not read the shard group');
    }
  }

  /** Runs a membership call with a signal that aborts after the renew deadline. */
  async #bounded<T>(call: (signal: AbortSignal) => T | Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = this.#clock.setTimer(() => controller.abort(), this.#coordinator.timing.renewDeadlineMs);
    try {
      return await call(controller.signal);
    } finally {
      timer.cancel();
    }
  }

  /** Wakes at the renew deadline so listeners hear of a lapse even while a write hangs. */
  #armLapse(startedAt: number): void {
    this.#lapseTimer?.cancel();
    const delay = startedAt + this.#coordinator.timing.renewDeadlineMs - this.#clock.now();
    this.#lapseTimer = this.#clock.setTimer(() => {
      this.#coordinator.tick(this.#clock.now());
      this.#notify();
    }, delay);
  }

  /** Tells the listeners when what `mayRun` answers changed, one change at a time. */
  #notify(): void {
    const coordinator = this.#coordinator;
    const signature = coordinator.signature(this.#clock.now());
    const drain = coordinator.drainRequest;
    if (signature === this.#signature && (drain === undefined || drain === this.#dispatchedDrain)) return;
    this.#signature = signature;
    this.#dispatchedDrain = drain;
    const change: ShardChange = {
      phase: coordinator.phase,
      view: coordinator.view,
      members: coordinator.members,
    };
    const fields = { phase: change.phase, epoch: coordinator.epoch, members: change.members.join(',') };
    if (change.phase !== this.#loggedPhase) this.#logger.info(fields, 'Shard phase changed');
    else this.#logger.debug(fields, 'Shard ownership changed');
    this.#loggedPhase = change.phase;
    this.#notifying = this.#notifying.then(async () => {
      // A listener that never finishes holds up neither the hand-over nor later changes.
      const listened = Promise.allSettled([...this.#listeners].map(async (listener) => listener(change)));
      await settlesWithin(this.#clock, listened, coordinator.timing.releaseTimeoutMs);
      if (drain !== undefined) {
        coordinator.drained(drain);
        this.#notify();
      }
    });
  }
}
