import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of leader-election errors. See docs/errors.md, "Leader election". */
export const LeaderElectionErrorCodes = {
  /** No renewal succeeded within `renewDeadlineMs`; leadership ended at the deadline. */
  LOST: 'CONVERGE_ERR_LEADER_LOST',
  /** The lock showed another holder with a valid lease while this elector thought it led. */
  SUPERSEDED: 'CONVERGE_ERR_LEADER_SUPERSEDED',
  /** The event loop (or the clock) stalled past the renew deadline; the elector stepped down. */
  STALLED: 'CONVERGE_ERR_LEADER_STALLED',
  /** The lock holds a record that cannot be read as a leader record. */
  RECORD_INVALID: 'CONVERGE_ERR_LEADER_RECORD_INVALID',
} as const;

/**
 * Leadership ended while the elector was running: the reason of the leading signal's abort, and
 * the rejection of `LeaderElector.run`. Subclasses say why; `instanceof LeaderLostError` matches
 * every loss.
 *
 * @example
 * signal.addEventListener('abort', () => {
 *   if (signal.reason instanceof LeaderLostError) logger.error({ err: signal.reason }, 'Lost the lease');
 * });
 */
export class LeaderLostError extends ConvergeError {
  /** The identity that lost leadership. */
  readonly identity: string;

  constructor(
    identity: string,
    message = `${identity} lost leadership: no renewal succeeded within the renew deadline`,
    options?: ConvergeErrorOptions,
    code: string = LeaderElectionErrorCodes.LOST,
  ) {
    super(code, message, options);
    this.identity = identity;
  }
}

/** The lock names another holder whose lease is still valid: someone else leads now. */
export class LeaderSupersededError extends LeaderLostError {
  /** The holder found in the lock. */
  readonly holder: string;

  constructor(identity: string, holder: string, options?: ConvergeErrorOptions) {
    super(
      identity,
      `${identity} lost leadership: the lock is held by ${JSON.stringify(holder)}`,
      options,
      LeaderElectionErrorCodes.SUPERSEDED,
    );
    this.holder = holder;
  }
}

/**
 * The watchdog found more time gone since the last successful renewal than `renewDeadlineMs`
 * (the event loop was blocked, the process was paused, or the clock jumped), or found the clock
 * going backwards. A stalled process cannot know whether its lease expired meanwhile, so it steps
 * down before acting.
 */
export class LeaderStalledError extends LeaderLostError {
  /** Milliseconds since the last successful renewal when the stall was noticed (negative: clock went back). */
  readonly elapsedMs: number;

  constructor(identity: string, elapsedMs: number, options?: ConvergeErrorOptions) {
    super(
      identity,
      elapsedMs < 0
        ? `${identity} stepped down: the clock went backwards by ${-elapsedMs}ms`
        : `${identity} stepped down: ${elapsedMs}ms passed since the last renewal, past the renew deadline`,
      options,
      LeaderElectionErrorCodes.STALLED,
    );
    this.elapsedMs = elapsedMs;
  }
}

/** The lock holds something that is not a valid leader record (a Lease with a malformed spec). */
export class LeaderRecordInvalidError extends ConvergeError {
  /** The lock, as its `describe()` puts it. */
  readonly lock: string;

  constructor(lock: string, problem: string, options?: ConvergeErrorOptions) {
    super(LeaderElectionErrorCodes.RECORD_INVALID, `invalid leader record in ${lock}: ${problem}`, options);
    this.lock = lock;
  }
}
