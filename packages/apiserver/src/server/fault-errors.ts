import { BackendError, type BackendErrorOptions, type StatusReason } from '@converge/runtime';

/**
 * Stable error codes of fault injection (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === FaultErrorCodes.INVALID_RULE) console.error(error.message);
 */
export const FaultErrorCodes = {
  /** A request was answered with an error by a `failRatio` rule (its status: 409, 410, 429, 500, 503). */
  INJECTED: 'CONVERGE_ERR_APISERVER_FAULT_INJECTED',
  /** A fault rule is invalid: a wrong type, an out-of-range value, an unknown field (400). */
  INVALID_RULE: 'CONVERGE_ERR_APISERVER_FAULT_INVALID_RULE',
  /** The admin endpoint got a body that is not a JSON object (400). */
  MALFORMED_BODY: 'CONVERGE_ERR_APISERVER_FAULT_MALFORMED_BODY',
  /** No active fault rule has the id in `DELETE /converge/faults/{id}` (404). */
  RULE_NOT_FOUND: 'CONVERGE_ERR_APISERVER_FAULT_RULE_NOT_FOUND',
  /** `restart()` could not close or bind the listener again, or the server is not listening. */
  RESTART_FAILED: 'CONVERGE_ERR_APISERVER_FAULT_RESTART_FAILED',
  /**
   * A value over the admin endpoint's bounds (`downMs` or a delay over 60 000 ms, more than 100
   * active rules) or a field it refuses (`pathRegExp`) (422 with the field named).
   */
  OVER_LIMIT: 'CONVERGE_ERR_APISERVER_FAULT_OVER_LIMIT',
  /** The admin endpoint was called with the API's bearer token, not the fault admin token (403). */
  ADMIN_FORBIDDEN: 'CONVERGE_ERR_APISERVER_FAULT_ADMIN_FORBIDDEN',
} as const;

/**
 * An error of fault injection, answered as a `metav1.Status` with its HTTP `status` and Kubernetes
 * `reason`: the injected failures themselves (`CONVERGE_ERR_APISERVER_FAULT_INJECTED`, Conflict,
 * Expired, TooManyRequests, InternalError or ServiceUnavailable) and the admin endpoint's and
 * in-process API's own errors (invalid rules, unknown ids, failed restarts).
 *
 * @example
 * try { server.faults.failRatio({ pathPattern: '/api/**', ratio: 2, status: 500 }); }
 * catch (e) { if (e instanceof FaultError) console.error(e.code, e.message); }
 */
export class FaultError extends BackendError {
  readonly status: number;
  readonly reason: StatusReason;

  constructor(
    code: string,
    status: number,
    reason: StatusReason,
    message: string,
    options?: BackendErrorOptions,
  ) {
    super(code, message, options);
    this.status = status;
    this.reason = reason;
  }

  /** Injected failures are transient by construction; the admin endpoint's errors are not. */
  override get retryable(): boolean {
    return this.code === FaultErrorCodes.INJECTED || this.code === FaultErrorCodes.RESTART_FAILED;
  }
}

/** 400 `BadRequest` for an invalid rule; `field` names the offending field. */
export function invalidRule(field: string, message: string): FaultError {
  return new FaultError(
    FaultErrorCodes.INVALID_RULE,
    400,
    'BadRequest',
    `invalid fault rule: ${field}: ${message}`,
    {
      details: { causes: [{ reason: 'FieldValueInvalid', message, field }] },
    },
  );
}

/** 422 `Invalid` for a value over the admin endpoint's bounds; `field` names the offending field. */
export function overLimit(field: string, message: string): FaultError {
  return new FaultError(
    FaultErrorCodes.OVER_LIMIT,
    422,
    'Invalid',
    `fault rule over the admin endpoint's limits: ${field}: ${message}`,
    { details: { causes: [{ reason: 'FieldValueInvalid', message, field }] } },
  );
}

/** 403 `Forbidden` for the API's own token at the admin endpoint, which takes only its own token. */
export function faultAdminForbidden(): FaultError {
  return new FaultError(
    FaultErrorCodes.ADMIN_FORBIDDEN,
    403,
    'Forbidden',
    'the fault admin endpoint takes the fault admin token, not the API token',
    { details: { kind: 'faults' } },
  );
}
