/**
 * Elastic sharding: the replicas of a controller split its keys between them, and hand keys over
 * without two replicas ever running one key at once.
 *
 * - {@link shardOwner} — rendezvous hashing of a key over member identities (pure); under uid
 *   sharding ({@link ShardBy}) {@link slotTable} — 64 uid hash slots balanced over the members,
 *   each member caching only its slots ({@link slotsSelector}).
 * - {@link Membership} — one record per member ({@link MemberRecord}: epoch, claim, revocations),
 *   on Leases over any Backend ({@link LeaseMembership}), in memory with fault hooks
 *   ({@link MemoryMembership}), or in NATS KV (`@converge/nats`).
 * - {@link ShardCoordinator} — the hand-over state machine of one member ({@link ShardPhase}),
 *   pure and driven by time and reads, so it is tested on the virtual clock.
 * - {@link ShardMember} — the Runnable that renews, reads and answers `mayRun(key)`, with
 *   `onChange` listeners, `epoch` and `fence`.
 *
 * The hand-over rule: a member runs a key only if it owns it over its own published claim and its
 * current view and no other member's claim gives that member the key; it drops a key from its
 * claim only after it stopped the key and raised its own fence to a new epoch. A member whose
 * record stays unchanged for its lease is revoked (its fence raised) before its keys are taken.
 * See docs/guide/sharding.md.
 *
 * @module
 */
export {
  type PlannedWrite,
  type Purge,
  type Revocation,
  ShardCoordinator,
  type ShardPhase,
  type ShardTiming,
  type ShardView,
} from './coordinator.ts';
export { ShardingErrorCodes, ShardKeyMovedError, ShardRecordInvalidError } from './errors.ts';
export {
  LEASE_MEMBERSHIP_VERBS,
  LeaseMembership,
  type LeaseMembershipOptions,
  memberLeaseName,
  SHARD_GROUP_LABEL,
} from './lease-membership.ts';
export type { Membership } from './membership.ts';
export {
  type MembershipFault,
  type MembershipInjectOptions,
  type MembershipOperation,
  MemoryMembership,
} from './memory-membership.ts';
export {
  checkMemberRecord,
  fenceName,
  type MemberRecord,
  type VersionedMemberRecord,
} from './record.ts';
export { rendezvousWeight, shardOwner } from './rendezvous.ts';
export {
  type ShardBy,
  type ShardChange,
  type ShardGate,
  type ShardListener,
  ShardMember,
  type ShardMemberOptions,
} from './shard-member.ts';
export {
  EMPTY_SHARD_SELECTOR,
  keyOwner,
  SHARD_SLOTS,
  slotOfKey,
  slotsOf,
  slotsSelector,
  slotTable,
  UNOWNED_SHARD_KEY,
  uidShardKey,
  uidSlot,
} from './slots.ts';
export { UidShardKeys } from './uid-keys.ts';
