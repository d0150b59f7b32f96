import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { positiveDurationMs } from '../options.ts';
import type { LeaderLock } from './lock.ts';

/** client-go's `JitterFactor`: acquire retries wait retryPeriod × [1, 2.2). */
export const JITTER_FACTOR = 1.2;

/**
 * Options of a {@link LeaderElector}. Durations are milliseconds on the injected clock; the
 * defaults are client-go's. They must satisfy
 * `leaseDurationMs > renewDeadlineMs > JITTER_FACTOR × retryPeriodMs > 0`.
 *
 * The gap `leaseDurationMs − renewDeadlineMs` is the only safety margin: it must cover the
 * difference in clock rates between replicas and the time leader-gated work needs to notice its
 * aborted signal.
 *
 * @example
 * const elector = new LeaderElector({ lock, leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 4_000 });
 */
export interface LeaderElectorOptions {
  /** The lock, carrying this replica's identity. */
  readonly lock: LeaderLock;
  /** How long standbys wait, after observing a change of the record, before taking the lock. Default 15 000. */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps leading without a successful renewal. Default 10 000. */
  readonly renewDeadlineMs?: number;
  /** How often the leader renews and standbys retry (jittered by {@link JITTER_FACTOR}). Default 2 000. */
  readonly retryPeriodMs?: number;
  /**
   * On stop, after leader-gated work returned, write a released record (holder '', 1 s) so a
   * standby takes over at once. Default true.
   */
  readonly releaseOnCancel?: boolean;
  /** Name for logs. Default: the lock's `describe()`. */
  readonly name?: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** {@link LeaderElectorOptions} with defaults applied. */
export interface ResolvedElectorOptions {
  readonly lock: LeaderLock;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly releaseOnCancel: boolean;
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Validates elector options (throws {@link OptionsError} naming the field) and applies defaults. */
export function resolveElectorOptions(options: LeaderElectorOptions): ResolvedElectorOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const lock = options.lock as Partial<LeaderLock> | undefined;
  if (
    typeof lock !== 'object' ||
    lock === null ||
    typeof lock.get !== 'function' ||
    typeof lock.create !== 'function' ||
    typeof lock.update !== 'function' ||
    typeof lock.describe !== 'function'
  ) {
    throw new OptionsError('lock', lock, 'a LeaderLock (get, create, update, describe)');
  }
  const identity = requiredString('lock.identity', lock.identity);
  const leaseDurationMs = positiveDurationMs('leaseDurationMs', options.leaseDurationMs, 15_000);
  const renewDeadlineMs = positiveDurationMs('renewDeadlineMs', options.renewDeadlineMs, 10_000);
  const retryPeriodMs = positiveDurationMs('retryPeriodMs', options.retryPeriodMs, 2_000);
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new OptionsError(
      'leaseDurationMs',
      leaseDurationMs,
      `more than renewDeadlineMs (${renewDeadlineMs})`,
    );
  }
  if (renewDeadlineMs <= JITTER_FACTOR * retryPeriodMs) {
    throw new OptionsError(
      'renewDeadlineMs',
      renewDeadlineMs,
      `more than ${JITTER_FACTOR} × retryPeriodMs (${JITTER_FACTOR * retryPeriodMs})`,
    );
  }
  const releaseOnCancel = options.releaseOnCancel ?? true;
  if (typeof releaseOnCancel !== 'boolean')
    throw new OptionsError('releaseOnCancel', releaseOnCancel, 'a boolean');
  const clock = options.clock ?? realClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.setTimer !== 'function') {
    throw new OptionsError('clock', clock, 'a Clock');
  }
  const logger = options.logger ?? noopLogger;
  if (typeof logger !== 'object' || logger === null || typeof logger.child !== 'function') {
    throw new OptionsError('logger', logger, 'a Logger');
  }
  const name =
    options.name === undefined ? (lock as LeaderLock).describe() : requiredString('name', options.name);
  return {
    lock: lock as LeaderLock,
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    releaseOnCancel,
    name,
    clock,
    logger,
  };
}

/** A non-empty string, or an {@link OptionsError} naming `field`. */
export function requiredString(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new OptionsError(field, value, 'a non-empty string');
  return value;
}
