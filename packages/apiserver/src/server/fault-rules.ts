import { invalidRule } from './fault-errors.ts';
import { compileGlob } from './fault-glob.ts';

/** The HTTP statuses a `failRatio` rule answers with. */
export type FaultStatus = 409 | 410 | 429 | 500 | 503;

/** Every {@link FaultStatus}, in order. */
export const FAULT_STATUSES: readonly FaultStatus[] = [409, 410, 429, 500, 503];

/**
 * The requests a rule applies to, by HTTP method. `WATCH` is a `GET` with `?watch=1|true`: a watch
 * request matches `WATCH` only, never `GET` (which matches gets and lists).
 */
export type FaultMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'WATCH';

const METHODS: ReadonlySet<string> = new Set<FaultMethod>([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'WATCH',
]);

/**
 * Which request paths a rule applies to: a `RegExp` tested against the path (unanchored, as
 * `RegExp.test` does; in-process only, as the test's own code), or a glob of at most 256
 * characters matched against the whole path in linear time (fault-glob.ts), where `*` is any run of characters
 * without `/`, `?` one such character, `**` anything including `/`, and a trailing `/**` also
 * matches the path before it (`/api/**` matches `/api` and `/api/v1/pods`). Globs start with `/`
 * or `*`. The path is the request's URL path without the query.
 */
export type PathPattern = RegExp | string;

/** What every request rule may filter on. */
export interface FaultRequestMatch {
  /** Paths the rule applies to. Default: every path (except the admin endpoint, never faulted). */
  readonly pathPattern?: PathPattern;
  /** Methods the rule applies to. Default: every method. */
  readonly methods?: readonly FaultMethod[];
}

/** Options of `faults.delay()`: hold matching requests for `ms` (on the server's clock) first. */
export interface DelayFault extends FaultRequestMatch {
  /** How long to hold each matching request, 0..3 600 000 ms. Delays of matching rules add up. */
  readonly ms: number;
  /** Remove the rule after it has delayed this many requests. Default: never. */
  readonly times?: number;
}

/** Options of `faults.failRatio()`: answer a fraction of matching requests with an error. */
export interface FailRatioFault extends FaultRequestMatch {
  /** Required here, so that failing everything (discovery included) is a deliberate `'/**'`. */
  readonly pathPattern: PathPattern;
  /** The fraction of matching requests that fail, 0..1, drawn with the server clock's `random()`. */
  readonly ratio: number;
  /**
   * 409 `Conflict`, 410 `Expired` (on a watch: a 200 whose only event is an ERROR carrying the
   * Status, as kube-apiserver answers a too-old resourceVersion), 429 `TooManyRequests` (with
   * `Retry-After`), 500 `InternalError`, 503 `ServiceUnavailable`.
   */
  readonly status: FaultStatus;
  /** `Retry-After` and `details.retryAfterSeconds`, 0..86 400; 429 and 503 only. Default 1 for 429. */
  readonly retryAfterSeconds?: number;
  /**
   * `before` (default): the request is not processed; a failed write is not applied. `after`: a
   * write (POST, PUT, PATCH, DELETE) is processed and applied, then its response is replaced by the
   * error — the lost response controllers must survive. If the write itself fails, its real error
   * is answered. Reads have nothing to apply and always fail before.
   */
  readonly phase?: 'before' | 'after';
  /** Remove the rule after it has failed this many requests. Default: never. */
  readonly times?: number;
}

/** Options of `faults.stallWatches()`. */
export interface StallWatchesFault {
  /** Paths of the watches to stall. Default: every watch. */
  readonly pathPattern?: PathPattern;
}

/** How a path pattern is described in {@link FaultRuleInfo}: a glob, or a RegExp's source. */
export type PathPatternInfo = { readonly pathPattern?: string } | { readonly pathRegExp: string };

/** One active rule, as `faults.list()` and `GET /converge/faults` report it. */
export type FaultRuleInfo = PathPatternInfo & {
  /** Stable id, used by `DELETE /converge/faults/{id}`. */
  readonly id: string;
  /** How many times the rule has injected its fault so far. */
  readonly injected: number;
} & (
    | {
        readonly type: 'delay';
        readonly methods?: readonly FaultMethod[];
        readonly ms: number;
        readonly times?: number;
      }
    | {
        readonly type: 'failRatio';
        readonly methods?: readonly FaultMethod[];
        readonly ratio: number;
        readonly status: FaultStatus;
        readonly retryAfterSeconds?: number;
        readonly phase: 'before' | 'after';
        readonly times?: number;
      }
    | { readonly type: 'stallWatches' }
  );

/** A compiled path pattern. */
export interface PathMatcher {
  test(path: string): boolean;
  readonly info: PathPatternInfo;
}

const MATCH_ALL: PathMatcher = { test: () => true, info: {} };

/** The longest glob a rule may have (matching costs at most path length × glob length steps). */
export const MAX_GLOB_LENGTH = 256;

/** Compiles a rule's path pattern (validating it); undefined matches every path. */
export function pathMatcher(pattern: PathPattern | undefined, field = 'pathPattern'): PathMatcher {
  if (pattern === undefined) return MATCH_ALL;
  if (pattern instanceof RegExp) {
    // In-process code only (the admin endpoint takes globs): the test author's own RegExp.
    // Without g/y, test() keeps no lastIndex state between requests.
    const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    return { test: (path) => re.test(path), info: { pathRegExp: re.source } };
  }
  if (typeof pattern !== 'string' || !/^[/*]/.test(pattern) || pattern.length > MAX_GLOB_LENGTH) {
    throw invalidRule(
      field,
      `must be a RegExp, or a glob of at most ${MAX_GLOB_LENGTH} characters starting with "/" or "*"`,
    );
  }
  const glob = compileGlob(pattern);
  return { test: (path) => glob.test(path), info: { pathPattern: pattern } };
}

/** Validates `methods` (a non-empty array of {@link FaultMethod}s); returns a copy. */
export function checkMethods(methods: unknown): readonly FaultMethod[] | undefined {
  if (methods === undefined) return undefined;
  if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => METHODS.has(m as string))) {
    throw invalidRule('methods', `must be a non-empty array of ${[...METHODS].join(', ')}`);
  }
  return [...new Set(methods as FaultMethod[])];
}

/** Validates an integer option in `min..max`. */
export function checkInteger(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidRule(field, `must be an integer in ${min}..${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** The longest delay a rule may inject: one hour. */
export const MAX_DELAY_MS = 3_600_000;
const MAX_RETRY_AFTER_SECONDS = 86_400;

/** Validates `times` (a positive integer) when set. */
function checkTimes(times: unknown): number | undefined {
  return times === undefined ? undefined : checkInteger('times', times, 1, Number.MAX_SAFE_INTEGER);
}

/** A validated delay rule. */
export interface DelaySpec {
  readonly path: PathMatcher;
  readonly methods: readonly FaultMethod[] | undefined;
  readonly ms: number;
  readonly times: number | undefined;
}

/** Validates the options of `delay()`. */
export function delaySpec(options: DelayFault): DelaySpec {
  if (typeof options !== 'object' || options === null) throw invalidRule('options', 'must be an object');
  return {
    path: pathMatcher(options.pathPattern),
    methods: checkMethods(options.methods),
    ms: checkInteger('ms', options.ms, 0, MAX_DELAY_MS),
    times: checkTimes(options.times),
  };
}

/** A validated failRatio rule. */
export interface FailRatioSpec {
  readonly path: PathMatcher;
  readonly methods: readonly FaultMethod[] | undefined;
  readonly ratio: number;
  readonly status: FaultStatus;
  readonly retryAfterSeconds: number | undefined;
  readonly phase: 'before' | 'after';
  readonly times: number | undefined;
}

/** Validates the options of `failRatio()`. */
export function failRatioSpec(options: FailRatioFault): FailRatioSpec {
  if (typeof options !== 'object' || options === null) throw invalidRule('options', 'must be an object');
  const { ratio, status, retryAfterSeconds, phase = 'before' } = options;
  if (options.pathPattern === undefined)
    throw invalidRule('pathPattern', "is required (use '/**' for every path)");
  if (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1)) {
    throw invalidRule('ratio', `must be a number in 0..1, got ${JSON.stringify(ratio)}`);
  }
  if (!FAULT_STATUSES.includes(status)) {
    throw invalidRule('status', `must be one of ${FAULT_STATUSES.join(', ')}, got ${JSON.stringify(status)}`);
  }
  if (retryAfterSeconds !== undefined && status !== 429 && status !== 503) {
    throw invalidRule('retryAfterSeconds', 'is only sent with status 429 or 503');
  }
  if (phase !== 'before' && phase !== 'after') {
    throw invalidRule('phase', `must be "before" or "after", got ${JSON.stringify(phase)}`);
  }
  return {
    path: pathMatcher(options.pathPattern),
    methods: checkMethods(options.methods),
    ratio,
    status,
    retryAfterSeconds:
      retryAfterSeconds === undefined
        ? status === 429
          ? 1
          : undefined
        : checkInteger('retryAfterSeconds', retryAfterSeconds, 0, MAX_RETRY_AFTER_SECONDS),
    phase,
    times: checkTimes(options.times),
  };
}

/** Validates the options of `stallWatches()`. */
export function stallSpec(options: StallWatchesFault): { readonly path: PathMatcher } {
  if (typeof options !== 'object' || options === null) throw invalidRule('options', 'must be an object');
  return { path: pathMatcher(options.pathPattern) };
}
