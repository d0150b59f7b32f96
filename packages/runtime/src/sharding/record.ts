import { ShardRecordInvalidError } from './errors.ts';

/**
 * What one member of a shard group announces, renewed every retry period. Liveness is judged by
 * observers on their own clocks from the record *changing* (its version), never from `renewTime`.
 */
export interface MemberRecord {
  /** The member's identity, unique in the group (a pod name). */
  readonly identity: string;
  /**
   * The member's epoch: only grows, published before the member writes with it. Its fence is
   * `{ name: '<group>/<identity>', holder: identity, epoch }`.
   */
  readonly epoch: number;
  /**
   * The member set (sorted) this member runs keys under: it may run only keys it owns by
   * {@link shardOwner} over these members. Empty while it joins, after it stopped, and after it
   * released everything: such a member claims no key and is not part of anyone's view. Publishing
   * a claim that no longer gives it a key is its acknowledgement that it stopped that key.
   */
  readonly claim: readonly string[];
  /** Members this member revoked, with the epoch their fence was raised to. */
  readonly revoked: Readonly<Record<string, number>>;
  /** How long observers wait for a change before they consider the member gone. */
  readonly leaseDurationMs: number;
  /** RFC 3339 time of the write, for people; never used to judge liveness. */
  readonly renewTime: string;
}

/** A record with its version in the store (a Lease's resourceVersion, a KV revision). */
export interface VersionedMemberRecord {
  readonly record: MemberRecord;
  readonly version: string;
}

/** The fence name of a member: `<group>/<identity>`. */
export function fenceName(group: string, identity: string): string {
  return `${group}/${identity}`;
}

/**
 * Checks a decoded record (from a Lease's annotations, a KV document) and returns it frozen, or
 * throws a {@link ShardRecordInvalidError} naming `where`.
 */
export function checkMemberRecord(value: unknown, where: string): MemberRecord {
  const problem = (text: string): ShardRecordInvalidError => new ShardRecordInvalidError(where, text);
  if (typeof value !== 'object' || value === null) throw problem('not an object');
  const r = value as Record<string, unknown>;
  if (typeof r.identity !== 'string' || r.identity === '')
    throw problem('identity must be a non-empty string');
  if (!Number.isSafeInteger(r.epoch) || (r.epoch as number) < 0)
    throw problem('epoch must be an integer >= 0');
  if (!Array.isArray(r.claim) || !r.claim.every((m) => typeof m === 'string' && m !== '')) {
    throw problem('claim must be an array of identities');
  }
  const revoked = r.revoked ?? {};
  if (typeof revoked !== 'object' || revoked === null || Array.isArray(revoked)) {
    throw problem('revoked must be an object of epochs');
  }
  for (const epoch of Object.values(revoked)) {
    if (!Number.isSafeInteger(epoch) || (epoch as number) < 0) throw problem('revoked must map to epochs');
  }
  if (!Number.isFinite(r.leaseDurationMs) || (r.leaseDurationMs as number) <= 0) {
    throw problem('leaseDurationMs must be a positive number');
  }
  const renewTime = r.renewTime ?? '';
  if (typeof renewTime !== 'string') throw problem('renewTime must be a string');
  return Object.freeze({
    identity: r.identity,
    epoch: r.epoch as number,
    claim: Object.freeze([...new Set(r.claim as string[])].sort()),
    revoked: Object.freeze({ ...(revoked as Record<string, number>) }),
    leaseDurationMs: r.leaseDurationMs as number,
    renewTime,
  });
}
