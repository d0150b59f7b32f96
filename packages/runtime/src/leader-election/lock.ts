import type { LeaderRecord, VersionedRecord } from './record.ts';

/**
 * Where electors keep the leader record (client-go's `resourcelock.Interface`): one record, read
 * and written with optimistic concurrency. Each elector has its own lock object naming its own
 * identity; all of them point at the same record.
 *
 * Implementations: {@link MemoryLock} lockers (tests), {@link LeaseLock} (a
 * `coordination.k8s.io/v1` Lease on any Backend), and the NATS KV lock. Every call honours its
 * signal: an aborted call rejects promptly.
 *
 * @example
 * const lock: LeaderLock = new LeaseLock({ backend, namespace: 'default', name: 'my-operator', identity: hostname() });
 * const current = await lock.get(signal);
 * if (current === undefined) await lock.create(record, signal);
 * else await lock.update(record, current.version, signal); // ConflictError if someone wrote in between
 */
export interface LeaderLock {
  /** Who this lock writes as (unique per replica: a pod name, a hostname plus a random suffix). */
  readonly identity: string;
  /** The record and its version; undefined if there is none yet. */
  get(signal: AbortSignal): Promise<VersionedRecord | undefined>;
  /** Creates the record; rejects with an AlreadyExistsError if one exists. Resolves to its version. */
  create(record: LeaderRecord, signal: AbortSignal): Promise<string>;
  /**
   * Replaces the record if its version is still `version`; a stale version rejects with a
   * ConflictError. Resolves to the new version.
   */
  update(record: LeaderRecord, version: string, signal: AbortSignal): Promise<string>;
  /** Names the lock for logs (`default/my-operator`). */
  describe(): string;
}
