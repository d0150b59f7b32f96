import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of manager errors. */
export const ManagerErrorCodes = {
  RUNNABLE_FAILED: 'CONVERGE_ERR_MANAGER_RUNNABLE_FAILED',
  CACHE_SYNC_TIMEOUT: 'CONVERGE_ERR_MANAGER_CACHE_SYNC_TIMEOUT',
  SHUTDOWN_TIMEOUT: 'CONVERGE_ERR_MANAGER_SHUTDOWN_TIMEOUT',
  LEADERSHIP_LOST: 'CONVERGE_ERR_MANAGER_LEADERSHIP_LOST',
} as const;

/** A runnable rejected; the manager stops everything. (One that returns before stop is only logged.) */
export class RunnableFailedError extends ConvergeError {
  readonly runnable: string;
  constructor(runnable: string, options?: ConvergeErrorOptions) {
    super(ManagerErrorCodes.RUNNABLE_FAILED, `runnable ${runnable} failed`, options);
    this.runnable = runnable;
  }
}

/** Caches did not sync within `cacheSyncTimeoutMs`. */
export class CacheSyncTimeoutError extends ConvergeError {
  constructor(timeoutMs: number, options?: ConvergeErrorOptions) {
    super(ManagerErrorCodes.CACHE_SYNC_TIMEOUT, `caches did not sync within ${timeoutMs}ms`, options);
  }
}

/** Runnables still running after `gracefulShutdownTimeoutMs`. */
export class ManagerShutdownTimeoutError extends ConvergeError {
  readonly running: readonly string[];
  constructor(timeoutMs: number, running: readonly string[]) {
    super(
      ManagerErrorCodes.SHUTDOWN_TIMEOUT,
      `failed waiting for all runnables to end within grace period of ${timeoutMs}ms: ${running.join(', ')}`,
    );
    this.running = running;
  }
}

/** Leadership was lost; leader-gated work was stopped and the manager exits with this error. */
export class LeadershipLostError extends ConvergeError {
  constructor(options?: ConvergeErrorOptions) {
    super(ManagerErrorCodes.LEADERSHIP_LOST, 'leader election lost', options);
  }
}
