import type { Fence } from '../backend/index.ts';
import { formatMicroTime } from '../leader-election/index.ts';
import { fenceName, type MemberRecord, type VersionedMemberRecord } from './record.ts';
import { keyOwner, slotsOf } from './slots.ts';

/**
 * Where a member stands:
 * - `joining` — its record claims nothing; it watches the group for `renewDeadlineMs` before it
 *   claims (so a member whose record was deleted by hand has noticed and stopped first);
 * - `member` — it claims its view and runs the keys it owns there that no other member claims;
 * - `releasing` — its view gained members: the keys they take are stopped at once; once the
 *   controller drained them (or `releaseTimeoutMs` passed) it raises its own fence to a new epoch
 *   and publishes the new claim — its acknowledgement;
 * - `lapsed` — its renewal is overdue (or its clock went backwards): it runs nothing until a
 *   renewal succeeds and a read after it shows nobody revoked it;
 * - `resetting` — it was revoked, or its record was deleted or changed by someone else: it stops
 *   everything, takes a new epoch and joins again;
 * - `stopping` — graceful stop: it stops everything, takes a new epoch and publishes an empty
 *   claim, then is `stopped`.
 */
export type ShardPhase = 'joining' | 'member' | 'releasing' | 'lapsed' | 'resetting' | 'stopping' | 'stopped';

/** Timing of a shard group; every member of a group should use the same values. */
export interface ShardTiming {
  /** How long others wait for a member's record to change before they consider it gone. */
  readonly leaseDurationMs: number;
  /** A member runs nothing once its last successful renewal started this long ago. */
  readonly renewDeadlineMs: number;
  /** How often a member renews and reads the group. */
  readonly retryPeriodMs: number;
  /** How long a member waits for its controller to stop moved keys before it releases them anyway. */
  readonly releaseTimeoutMs: number;
}

/** The write a member should do next. */
export interface PlannedWrite {
  readonly record: MemberRecord;
  /** Update this version; undefined: create. */
  readonly version: string | undefined;
}

/** A member whose fence must be raised to `epoch` (another member gone, or this one moving on). */
export interface Revocation {
  readonly identity: string;
  readonly fence: Fence;
}

/** A record to purge: a member gone for good, as observed. */
export interface Purge {
  readonly identity: string;
  readonly version: string;
}

/** A view: the live members this member computes from what it observes, and a local counter. */
export interface ShardView {
  /** Counts changes of the published claim on this member (not comparable across members). */
  readonly version: number;
  readonly members: readonly string[];
}

interface Observation {
  record: MemberRecord;
  version: string;
  /** Time the record was seen unchanged, counting each gap between reads at most `maxGapMs`. */
  unchangedMs: number;
  lastSeenAt: number;
  present: boolean;
}

type RevocationState = 'pending' | 'raised' | 'published' | 'confirmed';

interface RevocationProgress {
  readonly epoch: number;
  /** The version of the record that expired. */
  readonly version: string;
  state: RevocationState;
}

interface Drain {
  readonly id: number;
  readonly startedAt: number;
  /** The claim to publish once drained; [] for a reset or a stop. */
  readonly target: readonly string[];
  done: boolean;
}

/** A claim held by some members: `holders` are the members whose published claim it is. */
interface Claim {
  readonly members: readonly string[];
  readonly holders: ReadonlySet<string>;
}

const EMPTY: readonly string[] = Object.freeze([]);

/**
 * The hand-over state machine of one member of a shard group: pure, driven by the caller with the
 * time and with what it read and wrote, so it runs the same on a virtual clock. {@link ShardMember}
 * drives it; tests drive it directly.
 *
 * The rule it keeps: a member runs a key only if it owns the key by {@link keyOwner} over the
 * claim it published *and* over its current view, and no other member's published claim gives
 * that member the key — checked on a read made after its own last claim was written. A member
 * drops a key from its claim only after it stopped the key (and raised its own fence), so of two
 * members that both want a key, the second to write reads the first's claim. A member whose
 * record did not change for its lease duration (on the observer's clock, each gap between two
 * reads counting at most `maxGapMs` so that a clock jump or a stall cannot expire anyone at once)
 * is revoked — its fence raised above its epoch — the revocation published, and only then is its
 * claim ignored, if a read after that still shows it unchanged.
 *
 * @example
 * const coordinator = new ShardCoordinator({ group: 'shards', identity: 'a', ...timing });
 * coordinator.observe(await membership.list(signal), clock.now());
 * const write = coordinator.nextWrite(clock.now());
 */
export class ShardCoordinator {
  readonly group: string;
  readonly identity: string;
  readonly timing: ShardTiming;
  /** The most one gap between two reads counts towards another member's expiry. */
  readonly maxGapMs: number;
  #phase: ShardPhase = 'joining';
  #epoch = 0;
  #pendingEpoch: number | undefined;
  #selfFenceRaised = false;
  /** The claim in the record last written, and the one confirmed by a read after that write. */
  #written: readonly string[] = EMPTY;
  #confirmed: readonly string[] = EMPTY;
  #nextClaim: readonly string[] = EMPTY;
  #version: string | undefined;
  /** Own record seen in the last read when this member has none of its own (a takeover). */
  #ownSeen: VersionedMemberRecord | undefined;
  #lastRenewStart: number | undefined;
  #readSinceWrite = false;
  #joinObservedSince: number | undefined;
  #observed = new Map<string, Observation>();
  #revocations = new Map<string, RevocationProgress>();
  #revokedByMe = new Map<string, number>();
  /** The lowest epoch this member may take next: above its record's and above any revocation of it. */
  #floor = 1;
  #view: readonly string[] = EMPTY;
  #fence: Fence | undefined;
  #viewVersion = 0;
  #claims: readonly Claim[] = [];
  #drain: Drain | undefined;
  #drainIds = 0;
  #observedOnce = false;

  constructor(options: { readonly group: string; readonly identity: string } & ShardTiming) {
    this.group = options.group;
    this.identity = options.identity;
    this.timing = {
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      releaseTimeoutMs: options.releaseTimeoutMs,
    };
    this.maxGapMs = Math.min(
      2 * options.retryPeriodMs,
      (options.leaseDurationMs - options.renewDeadlineMs) / 2,
    );
  }

  get phase(): ShardPhase {
    return this.#phase;
  }

  /** The published epoch (0 before the first write). */
  get epoch(): number {
    return this.#epoch;
  }

  /** This member's fence: its name and published epoch. */
  /** The fence of the current epoch (one object per epoch: every client write of the member reads it). */
  get fence(): Fence {
    const cached = this.#fence;
    if (cached !== undefined && cached.epoch === this.#epoch) return cached;
    const fence = Object.freeze({
      name: fenceName(this.group, this.identity),
      holder: this.identity,
      epoch: this.#epoch,
    });
    this.#fence = fence;
    return fence;
  }

  /** The members this member counts live and participating (itself included once it claims). */
  get members(): readonly string[] {
    return this.#view;
  }

  /** The claim confirmed by a read after it was written, as a view. */
  get view(): ShardView {
    return { version: this.#viewVersion, members: this.#confirmed };
  }

  /** A release the controller must finish: stop every key `mayRun` now refuses, then call {@link drained}. */
  get drainRequest(): number | undefined {
    return this.#drain !== undefined && !this.#drain.done ? this.#drain.id : undefined;
  }

  /**
   * Whether this member may run `key` at `now`: it is a member whose renewal is within its
   * deadline, it owns the key over its confirmed claim and over its current view, and no other
   * member (not revoked) claims it.
   */
  mayRun(key: string, now: number): boolean {
    if (this.#phase !== 'member' && this.#phase !== 'releasing') return false;
    if (!this.#alive(now)) return false;
    if (keyOwner(key, this.#confirmed) !== this.identity) return false;
    if (keyOwner(key, this.#view) !== this.identity) return false;
    for (const claim of this.#claims) {
      const owner = keyOwner(key, claim.members);
      if (owner !== undefined && owner !== this.identity && claim.holders.has(owner)) return false;
    }
    return true;
  }

  /**
   * The uid slots this member may run now or soon: those it owns over its confirmed claim or over
   * its current view. What it should cache (a superset of what `mayRun` allows, for any time).
   */
  get slots(): readonly number[] {
    const out = new Set([...slotsOf(this.identity, this.#confirmed), ...slotsOf(this.identity, this.#view)]);
    return [...out].sort((a, b) => a - b);
  }

  /** A string that changes whenever what `mayRun` answers may have changed (apart from time). */
  signature(now: number): string {
    const alive = this.#alive(now);
    const claims = this.#claims.map((c) => `${c.members.join(',')}:${[...c.holders].join(',')}`).join(';');
    return `${this.#phase}|${alive}|${this.#confirmed.join(',')}|${this.#view.join(',')}|${claims}`;
  }

  /** Moves time: a renewal past its deadline (or a clock gone backwards) lapses; a slow drain times out. */
  tick(now: number): void {
    if ((this.#phase === 'member' || this.#phase === 'releasing') && !this.#alive(now)) {
      this.#phase = 'lapsed';
    }
    const drain = this.#drain;
    if (drain !== undefined && !drain.done && now - drain.startedAt >= this.timing.releaseTimeoutMs) {
      this.drained(drain.id);
    }
  }

  /** The controller stopped what drain request `id` asked for. */
  drained(id: number): void {
    const drain = this.#drain;
    if (drain === undefined || drain.id !== id || drain.done) return;
    drain.done = true;
    this.#pendingEpoch ??= Math.max(this.#epoch + 1, this.#floor);
    this.#selfFenceRaised = false;
    this.#nextClaim = drain.target;
  }

  /** Fences to raise before the next write: expired members, and this member's own new epoch. */
  revocations(): Revocation[] {
    const out: Revocation[] = [];
    if (this.#pendingEpoch !== undefined && !this.#selfFenceRaised) {
      out.push({
        identity: this.identity,
        fence: {
          name: fenceName(this.group, this.identity),
          holder: this.identity,
          epoch: this.#pendingEpoch,
        },
      });
    }
    for (const [identity, progress] of this.#revocations) {
      if (progress.state === 'pending') {
        out.push({
          identity,
          fence: { name: fenceName(this.group, identity), holder: this.identity, epoch: progress.epoch },
        });
      }
    }
    return out;
  }

  /** A fence from {@link revocations} was raised. */
  revoked(identity: string, epoch: number): void {
    if (identity === this.identity) {
      if (this.#pendingEpoch === epoch) this.#selfFenceRaised = true;
      return;
    }
    const progress = this.#revocations.get(identity);
    if (progress?.state === 'pending' && progress.epoch === epoch) {
      progress.state = 'raised';
      this.#revokedByMe.set(identity, Math.max(epoch, this.#revokedByMe.get(identity) ?? 0));
    }
  }

  /**
   * Raising this member's own fence was refused: the backend's mark for it is already `epoch`
   * (someone revoked it higher). Its next epoch goes above that.
   */
  fencedAt(epoch: number): void {
    this.#floor = Math.max(this.#floor, epoch + 1);
    if (this.#pendingEpoch !== undefined && this.#pendingEpoch < this.#floor) {
      this.#pendingEpoch = this.#floor;
      this.#selfFenceRaised = false;
    }
  }

  /** The record to write now (a renewal, a new claim, a new epoch), or undefined if none yet. */
  nextWrite(now: number): PlannedWrite | undefined {
    if (!this.#observedOnce || this.#phase === 'stopped') return undefined;
    // A new epoch is published only once this member's own fence was raised to it.
    const moving = this.#pendingEpoch !== undefined && this.#selfFenceRaised;
    // Without a record of its own (the first write, a takeover, after a reset): a new epoch first.
    if (this.#version === undefined && !moving) return undefined;
    const epoch = moving ? (this.#pendingEpoch as number) : this.#epoch;
    const publishView = moving || (this.#pendingEpoch === undefined && this.#phase === 'member');
    const claim = publishView ? this.#nextClaim : this.#written;
    const version = this.#version ?? this.#ownSeen?.version;
    return {
      version,
      record: Object.freeze({
        identity: this.identity,
        epoch,
        claim,
        revoked: Object.freeze(
          Object.fromEntries([...this.#revokedByMe].sort(([a], [b]) => (a < b ? -1 : 1))),
        ),
        leaseDurationMs: this.timing.leaseDurationMs,
        renewTime: formatMicroTime(now),
      }),
    };
  }

  /** A planned write succeeded; it started at `startedAt`. */
  wrote(record: MemberRecord, version: string, startedAt: number): void {
    this.#version = version;
    this.#ownSeen = undefined;
    this.#lastRenewStart = startedAt;
    this.#readSinceWrite = false;
    if (this.#pendingEpoch !== undefined && record.epoch === this.#pendingEpoch) {
      this.#epoch = record.epoch;
      this.#pendingEpoch = undefined;
      this.#selfFenceRaised = false;
      this.#drain = undefined;
      if (this.#phase === 'resetting') this.#rejoin();
      else if (this.#phase === 'stopping') this.#phase = 'stopped';
      else if (this.#phase === 'releasing') this.#phase = 'member';
    }
    if (record.claim.join(',') !== this.#written.join(',')) {
      this.#written = record.claim;
      // A claim that only gives keys away needs no read to be safe; one that gains keys does.
      if (this.#onlyLoses(this.#confirmed, record.claim)) this.#confirm(record.claim);
    }
    for (const [identity, progress] of this.#revocations) {
      if (progress.state === 'raised' && record.revoked[identity] === progress.epoch)
        progress.state = 'published';
    }
  }

  /** A planned write failed: a conflict or a missing record means someone else changed it. */
  writeFailed(kind: 'conflict' | 'notFound' | 'other'): void {
    if (kind === 'other') return;
    this.#version = undefined;
    this.#reset();
  }

  /** Stop gracefully: release everything, publish an empty claim with a new epoch. */
  stop(now: number): void {
    if (this.#phase === 'stopped' || this.#phase === 'stopping') return;
    if (this.#version === undefined) {
      this.#phase = 'stopped';
      return;
    }
    this.#phase = 'stopping';
    this.#startDrain(now, EMPTY, true);
  }

  /** Takes in a read of the whole group made at `now` (after this member's last write, if any). */
  observe(snapshot: readonly VersionedMemberRecord[], now: number): void {
    this.#observedOnce = true;
    const seen = new Set<string>();
    let own: VersionedMemberRecord | undefined;
    for (const entry of snapshot) {
      const id = entry.record.identity;
      if (id === this.identity) {
        own = entry;
        continue;
      }
      seen.add(id);
      const known = this.#observed.get(id);
      if (known === undefined || known.version !== entry.version) {
        this.#observed.set(id, {
          record: entry.record,
          version: entry.version,
          unchangedMs: 0,
          lastSeenAt: now,
          present: true,
        });
        const progress = this.#revocations.get(id);
        if (progress !== undefined && progress.state !== 'pending' && progress.state !== 'raised') {
          this.#revocations.delete(id); // it came back: honour it again; it will see the revocation
        }
      } else {
        this.#age(known, now);
        known.present = true;
      }
      const revokedMe = entry.record.revoked[this.identity];
      if (revokedMe !== undefined && revokedMe > this.#epoch) {
        this.#floor = Math.max(this.#floor, revokedMe + 1);
        if (this.#version !== undefined) this.#reset();
      }
    }
    for (const [id, known] of this.#observed) {
      if (seen.has(id)) continue;
      // Gone from the store: deleted by hand or purged. Keep honouring its claim until it expires here.
      this.#age(known, now);
      known.present = false;
      if (known.record.claim.length === 0 || this.#revocations.get(id)?.state === 'confirmed') {
        this.#observed.delete(id);
        this.#revocations.delete(id);
      }
    }
    this.#observeOwn(own, now);
    this.#trackExpiries();
    for (const [id, epoch] of this.#revokedByMe) {
      const known = this.#observed.get(id);
      if (known === undefined || !known.present || known.record.epoch >= epoch) this.#revokedByMe.delete(id);
    }
    this.#claims = this.#collectClaims();
    this.#updateView(now);
  }

  /** Records to purge now: members revoked for good, and stopped members gone quiet. */
  purges(): Purge[] {
    if (this.#phase !== 'member' || this.#view[0] !== this.identity) return [];
    const out: Purge[] = [];
    for (const [identity, known] of this.#observed) {
      if (!known.present) continue;
      const quietAndEmpty = known.record.claim.length === 0 && this.#expired(known);
      if (quietAndEmpty || this.#revocations.get(identity)?.state === 'confirmed') {
        out.push({ identity, version: known.version });
      }
    }
    return out;
  }

  #observeOwn(own: VersionedMemberRecord | undefined, now: number): void {
    if (own !== undefined) {
      this.#floor = Math.max(this.#floor, own.record.epoch + 1);
    }
    if (this.#version === undefined) {
      this.#ownSeen = own;
      const draining = this.#drain !== undefined && !this.#drain.done;
      if (this.#pendingEpoch === undefined && !draining && this.#phase !== 'stopped') {
        // First write of this incarnation (or after a reset): a fresh epoch above any before it.
        this.#pendingEpoch = Math.max(this.#epoch + 1, this.#floor, Math.floor(now));
        this.#selfFenceRaised = false;
        this.#nextClaim = EMPTY;
      }
      return;
    }
    if (own === undefined || own.version !== this.#version) {
      // Deleted or rewritten by someone else while this member held it.
      this.#version = undefined;
      this.#ownSeen = own;
      this.#reset();
      return;
    }
    if (!this.#readSinceWrite) {
      this.#readSinceWrite = true;
      if (this.#written.join(',') !== this.#confirmed.join(',')) this.#confirm(this.#written);
      for (const [identity, progress] of this.#revocations) {
        if (progress.state !== 'published') continue;
        const known = this.#observed.get(identity);
        if (known === undefined || !known.present || known.version === progress.version)
          progress.state = 'confirmed';
        else this.#revocations.delete(identity);
      }
      if (this.#phase === 'lapsed' && this.#alive(now)) this.#phase = 'member';
      if (this.#phase === 'joining' && this.#pendingEpoch === undefined) {
        this.#joinObservedSince ??= now;
        if (now - this.#joinObservedSince >= this.timing.renewDeadlineMs) this.#phase = 'member';
      }
    }
  }

  #trackExpiries(): void {
    for (const [identity, known] of this.#observed) {
      if (!this.#expired(known) || known.record.claim.length === 0) continue;
      const progress = this.#revocations.get(identity);
      if (progress !== undefined && progress.version === known.version) continue;
      this.#revocations.set(identity, {
        epoch: known.record.epoch + 1,
        version: known.version,
        state: 'pending',
      });
    }
  }

  #collectClaims(): Claim[] {
    const byClaim = new Map<string, { members: readonly string[]; holders: Set<string> }>();
    for (const [identity, known] of this.#observed) {
      if (this.#revocations.get(identity)?.state === 'confirmed') continue;
      const members = known.record.claim;
      if (!members.includes(identity)) continue;
      const key = members.join(',');
      const entry = byClaim.get(key) ?? { members, holders: new Set<string>() };
      entry.holders.add(identity);
      byClaim.set(key, entry);
    }
    return [...byClaim.values()];
  }

  #updateView(now: number): void {
    const members = new Set<string>();
    for (const [identity, known] of this.#observed) {
      if (!known.record.claim.includes(identity) || this.#expired(known)) continue;
      const revoked = this.#revokedByMe.get(identity);
      if (revoked !== undefined && known.record.epoch < revoked) continue;
      members.add(identity);
    }
    const participating = this.#phase === 'member' || this.#phase === 'releasing' || this.#phase === 'lapsed';
    if (participating) members.add(this.identity);
    this.#view = Object.freeze([...members].sort());
    if (this.#phase !== 'member' && this.#phase !== 'releasing' && this.#phase !== 'lapsed') return;
    const target = this.#view;
    const planned = this.#drain !== undefined ? this.#drain.target : this.#written;
    if (target.join(',') === planned.join(',')) return;
    const mayLose = this.#written.includes(this.identity) && target.some((m) => !this.#written.includes(m));
    if (!mayLose && this.#drain === undefined) {
      this.#nextClaim = target;
      return;
    }
    if (this.#phase === 'member') this.#phase = 'releasing';
    this.#startDrain(now, target, false);
  }

  #startDrain(now: number, target: readonly string[], restart: boolean): void {
    const previous = this.#drain;
    const startedAt = previous !== undefined && !previous.done && !restart ? previous.startedAt : now;
    this.#drain = { id: ++this.#drainIds, startedAt, target, done: false };
    this.#pendingEpoch = undefined;
    this.#selfFenceRaised = false;
  }

  #reset(): void {
    if (this.#phase === 'resetting' || this.#phase === 'stopping' || this.#phase === 'stopped') return;
    this.#phase = 'resetting';
    this.#confirm(EMPTY);
    this.#startDrain(this.#lastRenewStart ?? 0, EMPTY, true);
  }

  #rejoin(): void {
    this.#phase = 'joining';
    this.#joinObservedSince = undefined;
    this.#nextClaim = EMPTY;
  }

  /** Whether going from claim `from` to `to` can only take keys away from this member. */
  #onlyLoses(from: readonly string[], to: readonly string[]): boolean {
    if (to.length === 0) return true;
    return from.includes(this.identity) && to.includes(this.identity) && from.every((m) => to.includes(m));
  }

  #confirm(claim: readonly string[]): void {
    if (claim.join(',') === this.#confirmed.join(',')) return;
    this.#confirmed = claim;
    this.#viewVersion++;
  }

  #age(known: Observation, now: number): void {
    known.unchangedMs += Math.min(Math.max(0, now - known.lastSeenAt), this.maxGapMs);
    known.lastSeenAt = now;
  }

  #expired(known: Observation): boolean {
    return known.unchangedMs >= known.record.leaseDurationMs;
  }

  #alive(now: number): boolean {
    const last = this.#lastRenewStart;
    return last !== undefined && now >= last && now - last < this.timing.renewDeadlineMs;
  }
}
