/**
 * Leader election: one replica of a controller acts, the others wait warm, and a standby takes
 * over when the leader stops or dies. client-go's algorithm and defaults (lease 15 s, renew deadline
 * 10 s, retry 2 s, jitter 1.2, release on cancel) over a small lock interface.
 *
 * - {@link LeaderElector} — runs the election: `run(signal, callbacks)` with client-go's
 *   callbacks, or `acquire(signal)` for the Manager (`new Manager({ leaderElection: elector })`).
 * - {@link LeaderLock} — where the record lives: {@link LeaseLock} on a `coordination.k8s.io/v1`
 *   Lease over any Backend ({@link leaseType}), {@link MemoryLock} for tests (with fault hooks),
 *   and the NATS KV lock.
 * - {@link LeaderRecord} — holder, lease duration, acquire and renew times (`MicroTime` format),
 *   leader transitions (the fencing token).
 *
 * Safety, and its limits. A standby takes the lock only after the record stayed unchanged for its
 * lease duration on the standby's own clock; the leader's signal aborts at most `renewDeadlineMs`
 * after the start of its last successful renewal. With clocks running at the same rate, the
 * leader's work is told to stop `leaseDurationMs − renewDeadlineMs` before anyone else may take
 * over; clock *offsets* do not matter, clock *rates* may differ by up to about
 * `leaseDurationMs / renewDeadlineMs`. A stalled process (a blocked event loop, SIGSTOP) learns of
 * its stall only afterwards: the watchdog (`isLeader`, and a check before every renewal) then
 * steps down before acting. This is not fencing: writers that can should check
 * `elector.fencingToken`, and leader-gated work must honour its signal.
 *
 * Errors: {@link LeaderLostError} (`CONVERGE_ERR_LEADER_LOST`), {@link LeaderSupersededError}
 * (`CONVERGE_ERR_LEADER_SUPERSEDED`), {@link LeaderStalledError} (`CONVERGE_ERR_LEADER_STALLED`),
 * {@link LeaderRecordInvalidError} (`CONVERGE_ERR_LEADER_RECORD_INVALID`).
 *
 * @example
 * import { LeaderElector, LeaseLock, Manager } from '@converge/runtime';
 *
 * const lock = new LeaseLock({ backend, namespace: 'default', name: 'my-operator', identity: process.env.POD_NAME ?? hostname() });
 * const manager = new Manager({ backend, leaderElection: new LeaderElector({ lock }) });
 * await manager.start(signal); // rejects with LeadershipLostError if the lease is lost: exit non-zero
 *
 * @module
 */
export { type ElectorPhase, type LeaderCallbacks, LeaderElector } from './elector.ts';
export {
  LeaderElectionErrorCodes,
  LeaderLostError,
  LeaderRecordInvalidError,
  LeaderStalledError,
  LeaderSupersededError,
} from './errors.ts';
export {
  type Lease,
  LeaseLock,
  type LeaseLockOptions,
  type LeaseSpec,
  leaseType,
} from './lease-lock.ts';
export type { LeaderLock } from './lock.ts';
export {
  type InjectOptions,
  type LockFault,
  type LockOperation,
  MemoryLock,
  type MemoryLockOptions,
} from './memory-lock.ts';
export type { LeaderElectorOptions } from './options.ts';
export {
  formatMicroTime,
  type LeaderRecord,
  parseMicroTime,
  type VersionedRecord,
} from './record.ts';
