/**
 * Leader election on NATS alone: {@link KvLeaseLock}, a `LeaderLock` on one key of a JetStream KV
 * bucket, for `LeaderElector` (and so for the Manager's `leaderElection`). It works on servers
 * without per-key TTL (nats-server 2.9): the entry is a {@link KvLeaseDocument} shaped like a
 * Kubernetes Lease (holder, lease duration, acquire and renew times, transitions), updated only
 * with a revision check, and electors judge expiry by watching it not change — the same algorithm,
 * guarantees and conformance suite as the Lease lock.
 *
 * - {@link KvLeaseLock} — `new KvLeaseLock({ kv, key, identity })` over a KV handle, or
 *   `await KvLeaseLock.open({ connection, key, identity })`, which opens or creates the bucket
 *   (default {@link DEFAULT_LEASE_BUCKET}, keeping {@link DEFAULT_LEASE_HISTORY} revisions per key).
 * - {@link KvLeaseDocument} — the JSON under the key (`apiVersion: converge.dev/v1`,
 *   `kind: KvLease`), with {@link encodeKvLease} / {@link decodeKvLease}.
 * - {@link KvLeaseInvalidError} — the entry is not a lease document
 *   (`CONVERGE_ERR_LEADER_RECORD_INVALID`); delete it with `nats kv del <bucket> <key>`.
 *
 * Give the connection unlimited reconnects (`maxReconnectAttempts: -1`): a leader that cannot
 * reach the server steps down by its renew deadline, and the election resumes when the server
 * is back.
 *
 * @example
 * import { connect } from '@nats-io/transport-node';
 * import { LeaderElector, Manager } from '@converge/runtime';
 * import { KvLeaseLock } from '@converge/nats';
 *
 * const connection = await connect({ servers: process.env.NATS_URL, maxReconnectAttempts: -1 });
 * const lock = await KvLeaseLock.open({ connection, key: 'my-operator', identity: process.env.POD_NAME ?? hostname() });
 * const manager = new Manager({ backend, leaderElection: new LeaderElector({ lock }) });
 * await manager.start(signal);
 *
 * @module
 */

export { isValidLeaseKey } from '../lease-key/index.ts';
export {
  decodeKvLease,
  encodeKvLease,
  KV_LEASE_API_VERSION,
  KV_LEASE_KIND,
  type KvLeaseDocument,
  type KvLeaseSpec,
} from './document.ts';
export { KvLeaseInvalidError, type KvLeaseLocation } from './errors.ts';
export { KvLeaseLock } from './kv-lease-lock.ts';
export {
  DEFAULT_LEASE_BUCKET,
  DEFAULT_LEASE_HISTORY,
  type KvLeaseLockConnectionOptions,
  type KvLeaseLockKvOptions,
  type KvLeaseLockOptions,
  type KvLeaseName,
} from './options.ts';
