import { hostname } from 'node:os';
import type { Backend } from '../backend/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { durationMs, integer, positiveDurationMs, positiveNumber } from '../options.ts';
import { FIELD_LIMIT, truncateChars } from './format.ts';

/**
 * Options of {@link createEventRecorder}. Durations are milliseconds on the injected clock.
 *
 * @example
 * const recorder = createEventRecorder({ backend, component: 'website-controller', clock, burst: 25, qps: 1 / 300 });
 */
export interface EventRecorderOptions {
  /** Any backend serving `events.k8s.io/v1` Events, or core/v1 Events (the fallback). */
  readonly backend: Backend;
  /** The controller reporting the events (`reportingController`, `source.component`), e.g. `website-controller`. */
  readonly component: string;
  /** This replica (`reportingInstance`). Default `<component>-<hostname>`, as client-go; cut to 128 characters. */
  readonly instance?: string;
  /** Default the real clock. */
  readonly clock?: Clock;
  /** Default a logger that drops everything. */
  readonly logger?: Logger;
  /**
   * Token-bucket size of the spam filter, per regarding object (client-go's
   * `EventSourceObjectSpamFilter`). A new Event takes a token; repeats folded into a series do
   * not. Default 25.
   */
  readonly burst?: number;
  /** Tokens added per second to each object's bucket. Default 1/300 (one every 5 minutes). */
  readonly qps?: number;
  /** Writes waiting for the writer, at most. A full buffer drops the newest event. Default 1000. */
  readonly maxBuffer?: number;
  /** Repeats within this long of the previous occurrence join its series. Default 360 000 (6 min). */
  readonly seriesWindowMs?: number;
  /** A series is written at most once per this interval. Default 30 000. */
  readonly heartbeatMs?: number;
  /** Series remembered, and objects rate-limited, at most (least recently seen forgotten first). Default 4096. */
  readonly maxSeries?: number;
  /** Tries per write before it is dropped. Default 5. */
  readonly maxAttempts?: number;
  /** Wait before the first retry of a retryable error; doubled after each. Default 1000. */
  readonly retryDelayMs?: number;
  /** Cap on the wait between retries. Default 10 000. */
  readonly maxRetryDelayMs?: number;
  /** How long `close()` may take to write what is pending, unless it is given a timeout. Default 10 000. */
  readonly closeTimeoutMs?: number;
}

/** {@link EventRecorderOptions} with defaults applied. */
export interface ResolvedRecorderOptions {
  readonly backend: Backend;
  readonly component: string;
  readonly instance: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly burst: number;
  readonly qps: number;
  readonly maxBuffer: number;
  readonly seriesWindowMs: number;
  readonly heartbeatMs: number;
  readonly maxSeries: number;
  readonly maxAttempts: number;
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly closeTimeoutMs: number;
}

/** A qualified name, as Kubernetes requires of `reportingController`: `[prefix/]name`. */
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

function defaultInstance(component: string): string {
  let host = '';
  try {
    host = hostname();
  } catch {
    // No hostname: the component alone.
  }
  return host === '' ? component : `${component}-${host}`;
}

/** Validates the options (an {@link OptionsError} names the field) and applies the defaults. */
export function resolveRecorderOptions(options: EventRecorderOptions): ResolvedRecorderOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const { backend, component, instance, clock, logger } = options;
  if (typeof backend !== 'object' || backend === null || typeof backend.create !== 'function') {
    throw new OptionsError('backend', backend, 'a Backend');
  }
  if (typeof component !== 'string' || !QUALIFIED_NAME.test(component)) {
    throw new OptionsError('component', component, 'a qualified name such as website-controller');
  }
  if (instance !== undefined && (typeof instance !== 'string' || instance === '')) {
    throw new OptionsError('instance', instance, 'a non-empty string');
  }
  if (
    clock !== undefined &&
    (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')
  ) {
    throw new OptionsError('clock', clock, 'a Clock');
  }
  if (
    logger !== undefined &&
    (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function')
  ) {
    throw new OptionsError('logger', logger, 'a Logger');
  }
  const retryDelayMs = durationMs('retryDelayMs', options.retryDelayMs, 1000);
  const maxRetryDelayMs = durationMs('maxRetryDelayMs', options.maxRetryDelayMs, 10_000);
  if (maxRetryDelayMs < retryDelayMs) {
    throw new OptionsError(
      'maxRetryDelayMs',
      maxRetryDelayMs,
      `a duration >= retryDelayMs (${retryDelayMs})`,
    );
  }
  return {
    backend,
    component,
    instance: truncateChars(instance ?? defaultInstance(component), FIELD_LIMIT),
    clock: clock ?? realClock,
    logger: logger ?? noopLogger,
    burst: integer('burst', options.burst, 25, 1),
    qps: positiveNumber('qps', options.qps, 1 / 300),
    maxBuffer: integer('maxBuffer', options.maxBuffer, 1000, 1),
    seriesWindowMs: positiveDurationMs('seriesWindowMs', options.seriesWindowMs, 360_000),
    heartbeatMs: durationMs('heartbeatMs', options.heartbeatMs, 30_000),
    maxSeries: integer('maxSeries', options.maxSeries, 4096, 1),
    maxAttempts: integer('maxAttempts', options.maxAttempts, 5, 1),
    retryDelayMs,
    maxRetryDelayMs,
    closeTimeoutMs: durationMs('closeTimeoutMs', options.closeTimeoutMs, 10_000),
  };
}
