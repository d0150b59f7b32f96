import {
  AlreadyExistsError,
  type BackendError,
  type BackendErrorOptions,
  BadRequestError,
  ConflictError,
  type ErrorDetails,
  ExpiredError,
  FENCED_MARKER,
  FencedError,
  ForbiddenError,
  InternalError,
  InvalidError,
  NotFoundError,
  type StatusCause,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
  UnsupportedError,
} from '@converge/runtime';
import { UnauthorizedError } from '../errors.ts';

/** A `metav1.Status` as the API server sends it (in error responses and watch ERROR events). */
export interface Status {
  readonly kind?: string;
  readonly apiVersion?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly {
      readonly reason?: string;
      readonly message?: string;
      readonly field?: string;
    }[];
    readonly retryAfterSeconds?: number;
  };
}

/**
 * True for an object that is a `metav1.Status`.
 *
 * @example
 * isStatus({ kind: 'Status', code: 404 }); // true
 */
export function isStatus(value: unknown): value is Status {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

type ErrorClass = new (message: string, options?: BackendErrorOptions) => BackendError;

const BY_REASON: Readonly<Record<string, ErrorClass>> = {
  NotFound: NotFoundError,
  AlreadyExists: AlreadyExistsError,
  Conflict: ConflictError,
  Invalid: InvalidError,
  BadRequest: BadRequestError,
  Expired: ExpiredError,
  Gone: ExpiredError,
  Forbidden: ForbiddenError,
  Unauthorized: UnauthorizedError,
  ServiceUnavailable: UnavailableError,
  Timeout: TimeoutError,
  ServerTimeout: TimeoutError,
  TooManyRequests: TooManyRequestsError,
  UnsupportedMediaType: UnsupportedError,
  MethodNotAllowed: UnsupportedError,
  NotAcceptable: UnsupportedError,
  RequestEntityTooLarge: BadRequestError,
  InternalError: InternalError,
};

function byCode(code: number): ErrorClass {
  switch (code) {
    case 400:
    case 413:
      return BadRequestError;
    case 401:
      return UnauthorizedError;
    case 403:
      return ForbiddenError;
    case 404:
      return NotFoundError;
    case 405:
    case 406:
    case 415:
      return UnsupportedError;
    case 409:
      return ConflictError;
    case 410:
      return ExpiredError;
    case 422:
      return InvalidError;
    case 429:
      return TooManyRequestsError;
    case 502:
    case 503:
      return UnavailableError;
    case 504:
      return TimeoutError;
    default:
      return code >= 500 ? InternalError : BadRequestError;
  }
}

function causesOf(status: Status): StatusCause[] | undefined {
  const causes = status.details?.causes;
  if (!Array.isArray(causes) || causes.length === 0) return undefined;
  return causes.map((c) => ({
    reason: typeof c?.reason === 'string' ? c.reason : '',
    message: typeof c?.message === 'string' ? c.message : '',
    field: typeof c?.field === 'string' ? c.field : '',
  }));
}

function detailsOf(status: Status, retryAfterSeconds: number | undefined): ErrorDetails {
  const d = status.details ?? {};
  const str = (value: unknown): value is string => typeof value === 'string' && value !== '';
  const causes = causesOf(status);
  const retry =
    typeof d.retryAfterSeconds === 'number' && d.retryAfterSeconds > 0
      ? d.retryAfterSeconds
      : retryAfterSeconds;
  return {
    ...(str(d.name) ? { name: d.name } : {}),
    ...(str(d.group) ? { group: d.group } : {}),
    ...(str(d.kind) ? { kind: d.kind } : {}),
    ...(str(d.uid) ? { uid: d.uid } : {}),
    ...(causes === undefined ? {} : { causes }),
    ...(retry === undefined ? {} : { retryAfterSeconds: retry }),
  };
}

/**
 * The typed backend error for a `metav1.Status` (client-go's `errors.FromObject`): by `reason`,
 * else by `code` (or the HTTP status), with `details` (name, group, resource, uid, causes,
 * retryAfterSeconds) carried over. A 504 whose cause is `ResourceVersionTooLarge` is an
 * `ExpiredError`: like client-go's reflector, callers must relist rather than retry that version.
 *
 * @example
 * const error = errorFromStatus({ kind: 'Status', reason: 'NotFound', code: 404, message: 'configmaps "x" not found' });
 * error instanceof NotFoundError; // true
 */
export function errorFromStatus(
  status: Status,
  httpStatus?: number,
  retryAfterSeconds?: number,
): BackendError {
  const code = typeof status.code === 'number' && status.code > 0 ? status.code : (httpStatus ?? 500);
  const reason = typeof status.reason === 'string' ? status.reason : '';
  const message =
    typeof status.message === 'string' && status.message !== ''
      ? status.message
      : `the server responded with ${code}${reason === '' ? '' : ` ${reason}`}`;
  const details = detailsOf(status, retryAfterSeconds);
  if (details.causes?.some((c) => c.reason === 'ResourceVersionTooLarge') === true) {
    return new ExpiredError(message, { details, cause: status });
  }
  // The embedded server's refusal of a stale fence, or an admission policy's worded the same way
  if ((code === 403 || code === 422) && message.includes(FENCED_MARKER))
    return new FencedError(message, { details });
  const ErrorType = BY_REASON[reason] ?? byCode(code);
  return new ErrorType(message, { details });
}

/**
 * The typed error of an HTTP error response: its body as a `metav1.Status` when it is one,
 * otherwise (a proxy's HTML page, say) mapped by HTTP status with the start of the body in the
 * message.
 *
 * @example
 * throw errorFromResponse(response.statusCode, await readErrorText(response.body));
 */
export function errorFromResponse(
  httpStatus: number,
  body: string,
  retryAfterSeconds?: number,
): BackendError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (isStatus(parsed)) return errorFromStatus(parsed, httpStatus, retryAfterSeconds);
  const snippet = body.trim().slice(0, 200);
  const ErrorType = byCode(httpStatus);
  return new ErrorType(
    `the server responded with HTTP ${httpStatus}${snippet === '' ? '' : `: ${snippet}`}`,
    retryAfterSeconds === undefined ? undefined : { details: { retryAfterSeconds } },
  );
}

/**
 * Seconds from a `Retry-After` header (delta-seconds or an HTTP date), or undefined.
 *
 * @example
 * retryAfterSeconds('5', Date.now()); // 5
 */
export function retryAfterSeconds(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - nowMs) / 1000));
}
