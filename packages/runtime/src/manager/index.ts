/**
 * Lifecycle: the {@link Runnable} interface every long-running part implements, and the
 * {@link Manager} that starts runnables in order (servers → caches → others → leader-gated) and
 * stops them in reverse on one signal.
 *
 * @module
 */

export type { LeaderElection, Runnable } from '../runnable/index.ts';
export {
  CacheSyncTimeoutError,
  LeadershipLostError,
  ManagerErrorCodes,
  ManagerShutdownTimeoutError,
  RunnableFailedError,
} from './errors.ts';
export { type Check, type CheckReport, Checks } from './health.ts';
export {
  type AddOptions as ManagerAddOptions,
  Manager,
  type ManagerOptions,
  type ManagerState,
  type RunnableGroupName,
  type SyncingRunnable,
} from './manager.ts';
