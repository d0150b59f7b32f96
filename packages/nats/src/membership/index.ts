/**
 * Shard-group membership in NATS JetStream KV: {@link KvMembership}, a `Membership` for
 * `ShardMember` with one key per member (`<group>.<identity>`) in a bucket (default
 * {@link DEFAULT_MEMBERSHIP_BUCKET}). It passes the same conformance suite as the Lease
 * membership, so the same events show the same members on Kubernetes and on NATS.
 *
 * @example
 * import { ShardMember } from '@converge/runtime';
 * import { KvMembership } from '@converge/nats';
 *
 * const membership = await KvMembership.open({ connection, group: 'widgets' });
 * const member = new ShardMember({ membership, identity: process.env.POD_NAME ?? hostname() });
 *
 * @module
 */
export {
  DEFAULT_MEMBERSHIP_BUCKET,
  KV_MEMBER_API_VERSION,
  KV_MEMBER_KIND,
  KvMembership,
  type KvMembershipOpenOptions,
  type KvMembershipOptions,
} from './kv-membership.ts';
