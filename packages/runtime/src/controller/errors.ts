import { ConvergeError, type ConvergeErrorOptions, ErrorCodes } from '../errors.ts';

/** Graceful shutdown did not finish in time; `running` lists what was still running. */
export class ShutdownTimeoutError extends ConvergeError {
  readonly running: readonly string[];
  readonly timeoutMs: number;

  constructor(component: string, timeoutMs: number, running: readonly string[]) {
    super(
      ErrorCodes.LIFECYCLE_SHUTDOWN_TIMEOUT,
      `${component}: ${running.length} reconcile(s) still running after the shutdown timeout of ${timeoutMs}ms: ${running.join(', ')}`,
    );
    this.running = running;
    this.timeoutMs = timeoutMs;
  }
}

/** A source failed or did not sync in time before the workers started. */
export class SourceSyncError extends ConvergeError {
  readonly source: string;

  constructor(component: string, source: string, reason: string, options?: ConvergeErrorOptions) {
    super(ErrorCodes.SOURCE_SYNC_FAILED, `${component}: source ${source} ${reason}`, options);
    this.source = source;
  }
}

/** A source's `start` rejected while the controller was running; the controller stops. */
export class SourceFailedError extends ConvergeError {
  readonly source: string;

  constructor(component: string, source: string, options?: ConvergeErrorOptions) {
    super(ErrorCodes.SOURCE_FAILED, `${component}: source ${source} failed`, options);
    this.source = source;
  }
}
