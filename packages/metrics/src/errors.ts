import { ConvergeError, type ConvergeErrorOptions } from '@converge/runtime';

/**
 * Stable error codes of the metrics package (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === MetricsErrorCodes.LISTEN_FAILED) process.exit(1);
 */
export const MetricsErrorCodes = {
  /** An operations server could not listen on its address (in use, not permitted, unknown host). */
  LISTEN_FAILED: 'CONVERGE_ERR_METRICS_LISTEN_FAILED',
  /** The event loop was (or is) stalled longer than the health check allows. */
  EVENT_LOOP_STALLED: 'CONVERGE_ERR_METRICS_EVENT_LOOP_STALLED',
} as const;

/**
 * The operations server could not listen on `address` (`EADDRINUSE`, `EACCES` for a port below
 * 1024, an unknown host); the system error is the `cause`. `start` rejects with it, which stops a
 * manager the server was added to.
 */
export class ListenFailedError extends ConvergeError {
  readonly address: string;

  constructor(address: string, options?: ConvergeErrorOptions) {
    const reason = (options?.cause as { code?: unknown } | undefined)?.code;
    super(
      MetricsErrorCodes.LISTEN_FAILED,
      `could not listen on ${address}${typeof reason === 'string' ? ` (${reason})` : ''}`,
      options,
    );
    this.address = address;
  }
}

/**
 * The `event-loop` health check failed: the heartbeat timer ran `delayMs` late (or is overdue by
 * that much), more than `thresholdMs`. The process was too busy (a long synchronous task, a huge
 * JSON parse, a GC storm) to run timers, renew leases or answer watches on time.
 */
export class EventLoopStalledError extends ConvergeError {
  readonly delayMs: number;
  readonly thresholdMs: number;

  constructor(delayMs: number, thresholdMs: number, now: boolean) {
    super(
      MetricsErrorCodes.EVENT_LOOP_STALLED,
      `event loop ${now ? 'stalled for' : 'was stalled for'} ${Math.round(delayMs)}ms (threshold ${thresholdMs}ms)`,
    );
    this.delayMs = delayMs;
    this.thresholdMs = thresholdMs;
  }
}
