import { ConvergeError, type ConvergeErrorOptions, type ErrorDetails } from '@converge/runtime';

/**
 * Stable error codes of the API server's HTTP core (never reused). Errors that Kubernetes reports
 * with the same reason as a backend error (NotFound, Invalid, Conflict, BadRequest, …) use the
 * runtime's backend errors; these codes cover what only an HTTP server reports, and start-up.
 *
 * @example
 * if ((error as { code?: string }).code === ApiServerErrorCodes.TLS_FAILED) useInsecureForDebugging();
 */
export const ApiServerErrorCodes = {
  /** A request carried no bearer token, or a wrong one (401). */
  UNAUTHORIZED: 'CONVERGE_ERR_APISERVER_UNAUTHORIZED',
  /** The HTTP method is not served at that path (405). */
  METHOD_NOT_ALLOWED: 'CONVERGE_ERR_APISERVER_METHOD_NOT_ALLOWED',
  /** No media type in `Accept` can be produced (406). */
  NOT_ACCEPTABLE: 'CONVERGE_ERR_APISERVER_NOT_ACCEPTABLE',
  /** The request body's `Content-Type` is not one the endpoint decodes (415). */
  UNSUPPORTED_MEDIA_TYPE: 'CONVERGE_ERR_APISERVER_UNSUPPORTED_MEDIA_TYPE',
  /** The request body is larger than the 3 MiB limit (413). */
  REQUEST_ENTITY_TOO_LARGE: 'CONVERGE_ERR_APISERVER_REQUEST_ENTITY_TOO_LARGE',
  /** The CA or serving certificate could not be generated, read or written. */
  TLS_FAILED: 'CONVERGE_ERR_APISERVER_TLS_FAILED',
  /** The server could not bind its host and port. */
  LISTEN_FAILED: 'CONVERGE_ERR_APISERVER_LISTEN_FAILED',
  /** The kubeconfig file could not be written. */
  KUBECONFIG_FAILED: 'CONVERGE_ERR_APISERVER_KUBECONFIG_FAILED',
  /** `kubeconfig()` was called before `listen()` resolved. */
  NOT_LISTENING: 'CONVERGE_ERR_APISERVER_NOT_LISTENING',
  /** A CustomResourceDefinition's served types could not be registered in the store. */
  CRD_REGISTRATION_FAILED: 'CONVERGE_ERR_APISERVER_CRD_REGISTRATION_FAILED',
} as const;

/** Kubernetes `metav1.StatusReason` values only an HTTP server reports. */
export type HttpStatusReason =
  | 'Unauthorized'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge';

/**
 * An error answered with a `metav1.Status` whose reason is not a backend reason: 401, 405, 406,
 * 413, 415. `status` is the HTTP code.
 *
 * @example
 * throw new HttpStatusError(ApiServerErrorCodes.UNAUTHORIZED, 401, 'Unauthorized', 'Unauthorized');
 */
export class HttpStatusError extends ConvergeError {
  readonly status: number;
  readonly reason: HttpStatusReason;
  readonly details: ErrorDetails | undefined;

  constructor(
    code: string,
    status: number,
    reason: HttpStatusReason,
    message: string,
    details?: ErrorDetails,
  ) {
    super(code, message);
    this.status = status;
    this.reason = reason;
    this.details = details;
  }
}

/** 401 `Unauthorized`: a missing or wrong bearer token. */
export function unauthorized(): HttpStatusError {
  return new HttpStatusError(ApiServerErrorCodes.UNAUTHORIZED, 401, 'Unauthorized', 'Unauthorized');
}

/** 405 `<verb> is not supported on resources of kind "<resource>"`. */
export function methodNotSupported(group: string, resource: string, action: string): HttpStatusError {
  const qualified = group === '' ? resource : `${resource}.${group}`;
  return new HttpStatusError(
    ApiServerErrorCodes.METHOD_NOT_ALLOWED,
    405,
    'MethodNotAllowed',
    `${action} is not supported on resources of kind "${qualified}"`,
    { group, kind: resource },
  );
}

/** 405 `the server does not allow this method on the requested resource`. */
export function methodNotAllowed(): HttpStatusError {
  return new HttpStatusError(
    ApiServerErrorCodes.METHOD_NOT_ALLOWED,
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  );
}

/** 406 `only the following media types are accepted: …`. */
export function notAcceptable(accepted: readonly string[]): HttpStatusError {
  return new HttpStatusError(
    ApiServerErrorCodes.NOT_ACCEPTABLE,
    406,
    'NotAcceptable',
    `only the following media types are accepted: ${accepted.join(', ')}`,
  );
}

/** 415 `the body of the request was in an unknown format - accepted media types include: …`. */
export function unsupportedMediaType(accepted: readonly string[]): HttpStatusError {
  return new HttpStatusError(
    ApiServerErrorCodes.UNSUPPORTED_MEDIA_TYPE,
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** 413 `Request entity too large: limit is N`. */
export function entityTooLarge(limit: number): HttpStatusError {
  return new HttpStatusError(
    ApiServerErrorCodes.REQUEST_ENTITY_TOO_LARGE,
    413,
    'RequestEntityTooLarge',
    `Request entity too large: limit is ${limit}`,
  );
}

/**
 * Start-up failed: certificates (`CONVERGE_ERR_APISERVER_TLS_FAILED`), binding
 * (`CONVERGE_ERR_APISERVER_LISTEN_FAILED`) or the kubeconfig (`CONVERGE_ERR_APISERVER_KUBECONFIG_FAILED`).
 * `cause` holds the underlying error.
 *
 * @example
 * try { await server.listen(); } catch (e) { if (e instanceof ApiServerStartError) console.error(e.code, e.cause); }
 */
export class ApiServerStartError extends ConvergeError {
  constructor(code: string, message: string, options?: ConvergeErrorOptions) {
    super(code, message, options);
  }
}
