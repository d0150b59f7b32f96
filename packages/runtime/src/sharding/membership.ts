import type { MemberRecord, VersionedMemberRecord } from './record.ts';

/**
 * Where the members of one shard group keep their records: one record per member, read all at
 * once and written with optimistic concurrency (a stale version is a ConflictError). Reads must
 * be linearizable — a list that starts after a write completed shows that write or a later one —
 * since the hand-over relies on "write your claim, then read everyone's".
 *
 * Implementations: {@link LeaseMembership} (one `coordination.k8s.io/v1` Lease per member over any
 * Backend), {@link MemoryMembership} (tests, with fault hooks) and the NATS KV membership of
 * `@converge/nats`. All pass one conformance suite.
 */
export interface Membership {
  /** The shard group. */
  readonly group: string;
  /** Every member record of the group. Records that do not parse are skipped (and reported). */
  list(signal: AbortSignal): Promise<readonly VersionedMemberRecord[]>;
  /** Creates the record of `record.identity`; an AlreadyExistsError if there is one. Resolves to its version. */
  create(record: MemberRecord, signal: AbortSignal): Promise<string>;
  /**
   * Replaces the record of `record.identity` if its version is still `version`: a ConflictError
   * if it changed, a NotFoundError if it is gone. Resolves to the new version.
   */
  update(record: MemberRecord, version: string, signal: AbortSignal): Promise<string>;
  /**
   * Deletes the record of `identity` if its version is still `version` (a ConflictError if it
   * changed; resolves if it is already gone). Survivors purge the records of members gone for good.
   */
  delete(identity: string, version: string, signal: AbortSignal): Promise<void>;
  /** Names the membership for logs. */
  describe(): string;
}
