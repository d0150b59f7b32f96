import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/**
 * Stable codes of event-recorder errors. See docs/errors.md, "Events". A recorder never throws
 * them at its caller: it logs them (field `err`) and counts them in `stats().dropped`.
 *
 * @example
 * const dropped = logger.records.filter((r) => (r.fields.err as { code?: string })?.code === EventsErrorCodes.WRITE_FAILED);
 */
export const EventsErrorCodes = {
  /** `event()` got something no API server would accept (bad type, empty reason, unnamed object). */
  INVALID: 'CONVERGE_ERR_EVENTS_INVALID',
  /** A write was given up: a non-retryable error, or every attempt failed. */
  WRITE_FAILED: 'CONVERGE_ERR_EVENTS_WRITE_FAILED',
  /** `close()` did not finish writing within its bound; the writes still pending were abandoned. */
  CLOSE_TIMEOUT: 'CONVERGE_ERR_EVENTS_CLOSE_TIMEOUT',
} as const;

/**
 * An event was dropped at `event()` because the API would reject it: a type other than `Normal` or
 * `Warning`, an empty reason or action, or a regarding object without `metadata.name`.
 *
 * @example
 * recorder.event(obj, 'Info' as 'Normal', 'Synced', 'Reconcile', 'ok'); // logged with this error, counted in stats().dropped.invalid
 */
export class EventInvalidError extends ConvergeError {
  constructor(problem: string) {
    super(EventsErrorCodes.INVALID, `event dropped: ${problem}`);
  }
}

/**
 * A write of an Event was given up, after `attempts` tries; `cause` holds the last backend error.
 *
 * @example
 * logger.warn({ err: new EventWriteError('default/web.17f3a', 5, { cause }) }, 'Event dropped');
 */
export class EventWriteError extends ConvergeError {
  /** `namespace/name` of the Event. */
  readonly event: string;
  readonly attempts: number;

  constructor(event: string, attempts: number, options?: ConvergeErrorOptions) {
    super(
      EventsErrorCodes.WRITE_FAILED,
      `writing event ${event} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}`,
      options,
    );
    this.event = event;
    this.attempts = attempts;
  }
}

/**
 * `close()` reached its timeout with writes still pending; they were abandoned.
 *
 * @example
 * const { flushed, abandoned } = await recorder.close({ timeoutMs: 1000 }); // logs this error when !flushed
 */
export class EventsCloseTimeoutError extends ConvergeError {
  readonly abandoned: number;

  constructor(timeoutMs: number, abandoned: number) {
    super(
      EventsErrorCodes.CLOSE_TIMEOUT,
      `event recorder did not flush within ${timeoutMs}ms; ${abandoned} pending write${abandoned === 1 ? '' : 's'} abandoned`,
    );
    this.abandoned = abandoned;
  }
}
