import type { Clock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import type { Logger } from '../log/index.ts';
import { fraction, func, nonEmptyString, positiveDurationMs } from '../options.ts';
import { booleanOption, clockOption, loggerOption } from './option-checks.ts';

export interface PollerOptions<T> {
  /**
   * Fetches the full current set of items. `signal` aborts when the poller stops or the call runs
   * past `timeoutMs`. A throw, a rejection or a non-array result is a failed poll.
   */
  readonly list: (signal: AbortSignal) => Promise<readonly T[]>;
  /** The identity of an item. Two items of one result with the same key fail the poll. */
  readonly keyOf: (item: T) => string;
  /**
   * The version of an item: an update is emitted when it changes. Default: the item's JSON with
   * object keys sorted (deep equality; `undefined` properties are ignored, like JSON does).
   */
  readonly versionOf?: (item: T) => string;
  /** Time between the starts of two polls. Default 30 000 ms. */
  readonly intervalMs?: number;
  /** Each wait is lengthened by a random 0…`jitterFactor` of itself. 0 to 1, default 0.1. */
  readonly jitterFactor?: number;
  /** A list call that has not settled after this long fails and its signal aborts. Default `intervalMs`. */
  readonly timeoutMs?: number;
  /** Wait after the first failed poll in a row; doubles with each further failure. Default 1000 ms. */
  readonly errorBackoffMs?: number;
  /** Cap of the error backoff. Default 60 000 ms; must be >= `errorBackoffMs`. */
  readonly maxErrorBackoffMs?: number;
  /**
   * Emit an `update` with `isResync: true` for every item that did not change, on every poll
   * (openclarity's poller enqueues every item it lists). Default false: unchanged items emit nothing.
   */
  readonly resync?: boolean;
  /** Time, timers and jitter. Default the real clock. */
  readonly clock?: Clock;
  /** Where failed polls and listener failures are logged. Default no logging. */
  readonly logger?: Logger;
  /** Name for logs and errors. Default 'poller'. */
  readonly name?: string;
}

/** Validated options with defaults applied. */
export interface ResolvedPollerOptions<T> {
  readonly list: (signal: AbortSignal) => Promise<readonly T[]>;
  readonly keyOf: (item: T) => string;
  readonly versionOf: ((item: T) => string) | undefined;
  readonly intervalMs: number;
  readonly jitterFactor: number;
  readonly timeoutMs: number;
  readonly errorBackoffMs: number;
  readonly maxErrorBackoffMs: number;
  readonly resync: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly name: string;
}

/** Validates poller options; throws an {@link OptionsError} naming the first bad field. */
export function resolvePollerOptions<T>(options: PollerOptions<T>): ResolvedPollerOptions<T> {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', options, 'an options object with list and keyOf');
  }
  if (typeof options.list !== 'function') throw new OptionsError('list', options.list, 'a function');
  if (typeof options.keyOf !== 'function') throw new OptionsError('keyOf', options.keyOf, 'a function');
  const intervalMs = positiveDurationMs('intervalMs', options.intervalMs, 30_000);
  const errorBackoffMs = positiveDurationMs('errorBackoffMs', options.errorBackoffMs, 1000);
  const maxErrorBackoffMs = positiveDurationMs('maxErrorBackoffMs', options.maxErrorBackoffMs, 60_000);
  if (maxErrorBackoffMs < errorBackoffMs) {
    throw new OptionsError(
      'maxErrorBackoffMs',
      maxErrorBackoffMs,
      `a duration >= errorBackoffMs (${errorBackoffMs})`,
    );
  }
  return {
    list: options.list,
    keyOf: options.keyOf,
    versionOf: func('versionOf', options.versionOf, undefined),
    intervalMs,
    jitterFactor: fraction('jitterFactor', options.jitterFactor, 0.1),
    timeoutMs: positiveDurationMs('timeoutMs', options.timeoutMs, intervalMs),
    errorBackoffMs,
    maxErrorBackoffMs,
    resync: booleanOption('resync', options.resync, false),
    clock: clockOption('clock', options.clock),
    logger: loggerOption('logger', options.logger),
    name: nonEmptyString('name', options.name, 'poller'),
  };
}
