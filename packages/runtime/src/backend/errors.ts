import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of backend errors (one per Kubernetes `metav1.Status` reason we map). */
export const BackendErrorCodes = {
  NOT_FOUND: 'CONVERGE_ERR_BACKEND_NOT_FOUND',
  ALREADY_EXISTS: 'CONVERGE_ERR_BACKEND_ALREADY_EXISTS',
  CONFLICT: 'CONVERGE_ERR_BACKEND_CONFLICT',
  INVALID: 'CONVERGE_ERR_BACKEND_INVALID',
  BAD_REQUEST: 'CONVERGE_ERR_BACKEND_BAD_REQUEST',
  EXPIRED: 'CONVERGE_ERR_BACKEND_EXPIRED',
  FORBIDDEN: 'CONVERGE_ERR_BACKEND_FORBIDDEN',
  FENCED: 'CONVERGE_ERR_BACKEND_FENCED',
  UNAVAILABLE: 'CONVERGE_ERR_BACKEND_UNAVAILABLE',
  TIMEOUT: 'CONVERGE_ERR_BACKEND_TIMEOUT',
  TOO_MANY_REQUESTS: 'CONVERGE_ERR_BACKEND_TOO_MANY_REQUESTS',
  UNSUPPORTED: 'CONVERGE_ERR_BACKEND_UNSUPPORTED',
  INTERNAL: 'CONVERGE_ERR_BACKEND_INTERNAL',
} as const;

/** The Kubernetes Status reasons backends report. */
export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Expired'
  | 'Gone'
  | 'Unauthorized'
  | 'Forbidden'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'TooManyRequests'
  | 'UnsupportedMediaType'
  | 'MethodNotAllowed'
  | 'InternalError';

/** One field-level cause of an Invalid (422) error, as in `metav1.StatusCause`. */
export interface StatusCause {
  /** `FieldValueRequired`, `FieldValueInvalid`, `FieldValueNotSupported`, `FieldValueDuplicate`, … */
  readonly reason: string;
  readonly message: string;
  /** The field path, e.g. `metadata.name` or `spec.replicas`. */
  readonly field: string;
}

/** Identifies the object an error is about. */
export interface ErrorDetails {
  readonly name?: string;
  readonly group?: string;
  /** The resource (plural), as Kubernetes puts it in `details.kind`. */
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface BackendErrorOptions extends ConvergeErrorOptions {
  readonly details?: ErrorDetails;
}

/** Base of every error a backend reports; carries the HTTP status code and Kubernetes reason. */
export abstract class BackendError extends ConvergeError {
  abstract readonly status: number;
  abstract readonly reason: StatusReason;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, options?: BackendErrorOptions) {
    super(code, message, options);
    this.details = options?.details ?? {};
  }

  /** Whether retrying the same request later may succeed. */
  get retryable(): boolean {
    return false;
  }
}

export class NotFoundError extends BackendError {
  readonly status = 404;
  readonly reason = 'NotFound' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.NOT_FOUND, message, options);
  }
}

export class AlreadyExistsError extends BackendError {
  readonly status = 409;
  readonly reason = 'AlreadyExists' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.ALREADY_EXISTS, message, options);
  }
}

/** Optimistic concurrency failed: the object changed since it was read. Retry after re-reading. */
export class ConflictError extends BackendError {
  readonly status = 409;
  readonly reason = 'Conflict' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.CONFLICT, message, options);
  }
  override get retryable(): boolean {
    return true;
  }
}

/** The object failed validation; `details.causes` lists each field. */
export class InvalidError extends BackendError {
  readonly status = 422;
  readonly reason = 'Invalid' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.INVALID, message, options);
  }
  get causes(): readonly StatusCause[] {
    return this.details.causes ?? [];
  }
}

/** The request itself was malformed (a bad selector, an invalid continue token). */
export class BadRequestError extends BackendError {
  readonly status = 400;
  readonly reason = 'BadRequest' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.BAD_REQUEST, message, options);
  }
}

/** A resourceVersion or continue token is older than the retained history (410). Relist. */
export class ExpiredError extends BackendError {
  readonly status = 410;
  readonly reason = 'Expired' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.EXPIRED, message, options);
  }
}

export class ForbiddenError extends BackendError {
  readonly status = 403;
  readonly reason = 'Forbidden' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.FORBIDDEN, message, options);
  }
}

/** The backend cannot be reached or is not ready. Retryable. */
export class UnavailableError extends BackendError {
  readonly status = 503;
  readonly reason = 'ServiceUnavailable' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.UNAVAILABLE, message, options);
  }
  override get retryable(): boolean {
    return true;
  }
}

/** The backend did not answer in time. Retryable. */
export class TimeoutError extends BackendError {
  readonly status = 504;
  readonly reason = 'Timeout' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.TIMEOUT, message, options);
  }
  override get retryable(): boolean {
    return true;
  }
}

/** Throttled (429); `details.retryAfterSeconds` says when to come back. Retryable. */
export class TooManyRequestsError extends BackendError {
  readonly status = 429;
  readonly reason = 'TooManyRequests' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.TOO_MANY_REQUESTS, message, options);
  }
  override get retryable(): boolean {
    return true;
  }
}

/** The backend does not support the operation (for example strategic merge patch on a custom resource). */
export class UnsupportedError extends BackendError {
  readonly status = 415;
  readonly reason = 'UnsupportedMediaType' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.UNSUPPORTED, message, options);
  }
}

/** Anything else that went wrong inside the backend. */
export class InternalError extends BackendError {
  readonly status = 500;
  readonly reason = 'InternalError' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(BackendErrorCodes.INTERNAL, message, options);
  }
  override get retryable(): boolean {
    return true;
  }
}

/** True for a NotFound backend error (also from another copy of the package). */
export function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === BackendErrorCodes.NOT_FOUND;
}

/** True for a Conflict backend error. */
export function isConflict(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === BackendErrorCodes.CONFLICT;
}

/** True for an AlreadyExists backend error. */
export function isAlreadyExists(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === BackendErrorCodes.ALREADY_EXISTS;
}

/** True for an Expired (410) backend error. */
export function isExpired(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === BackendErrorCodes.EXPIRED;
}
