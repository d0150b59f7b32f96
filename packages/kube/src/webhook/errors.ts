import { ConvergeError, type ConvergeErrorOptions } from '@converge/runtime';
import { KubeErrorCodes } from '../errors.ts';

/**
 * The webhook server's certificate or key could not be used: a file is missing or unreadable, not
 * PEM, the key does not belong to the certificate, or generating a development certificate failed.
 * Thrown by `start()` for the first load; a failed reload is logged with this code and the server
 * keeps serving the previous certificate.
 *
 * @example
 * await server.start(signal).catch((error) => {
 *   if (error instanceof WebhookTlsError) console.error(`fix ${error.file ?? 'the certificate'}`);
 * });
 */
export class WebhookTlsError extends ConvergeError {
  /** The file at fault, when one is. */
  readonly file: string | undefined;
  constructor(message: string, options?: ConvergeErrorOptions & { readonly file?: string }) {
    super(KubeErrorCodes.WEBHOOK_TLS_INVALID, message, options);
    this.file = options?.file;
  }
}

/**
 * The webhook server could not bind `host:port` (in use, no permission, no such address).
 *
 * @example
 * new WebhookServer({ port: 0, tls }); // an ephemeral port never collides
 */
export class WebhookListenError extends ConvergeError {
  constructor(address: string, options?: ConvergeErrorOptions) {
    const cause = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      KubeErrorCodes.WEBHOOK_LISTEN_FAILED,
      `the webhook server cannot listen on ${address}${cause}`,
      options,
    );
  }
}

/**
 * A webhook was registered on a path that does not start with `/`, holds a query or fragment, or
 * is already taken by another webhook of the same server.
 *
 * @example
 * server.validating('/validate-website', validator);
 * server.mutating('/validate-website', defaulter); // throws WebhookPathError
 */
export class WebhookPathError extends ConvergeError {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(KubeErrorCodes.WEBHOOK_PATH_INVALID, `webhook path ${JSON.stringify(path)}: ${problem}`);
    this.path = path;
  }
}

/**
 * A request the webhook server could not treat as a review: wrong method or path, wrong content
 * type, a body over the limit, not JSON, not an `AdmissionReview` or `ConversionReview` of a served
 * version, no `request.uid`. `status` is the HTTP status it was answered with (400, 404, 405, 413);
 * the answer's body is a `metav1.Status` with this message. Logged, never thrown to callers.
 */
export class WebhookRequestError extends ConvergeError {
  readonly status: number;
  constructor(status: number, message: string) {
    super(KubeErrorCodes.WEBHOOK_BAD_REQUEST, message);
    this.status = status;
  }
}

/**
 * An admission handler threw (the thrown value is the `cause`), or returned something that is not
 * an admission result (`allowed()`, `denied()`, or for defaulters an object or `mutated()`). The
 * request was denied with status code 500 and this message; the error is logged.
 */
export class WebhookHandlerError extends ConvergeError {
  readonly path: string;
  constructor(path: string, problem: string, options?: ConvergeErrorOptions) {
    super(KubeErrorCodes.WEBHOOK_HANDLER_FAILED, `webhook ${path}: ${problem}`, options);
    this.path = path;
  }
}

/**
 * An admission handler or converter did not settle within the per-request timeout (`timeoutMs`,
 * or the caller's shorter `?timeout=`). Its `request.signal` was aborted; an admission request was
 * denied with status code 504, a conversion answered `Failure`.
 */
export class WebhookTimeoutError extends ConvergeError {
  readonly path: string;
  readonly timeoutMs: number;
  constructor(path: string, timeoutMs: number) {
    super(KubeErrorCodes.WEBHOOK_HANDLER_TIMEOUT, `webhook ${path} did not answer within ${timeoutMs} ms`);
    this.path = path;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A conversion webhook could not convert an object: its apiVersion is neither the hub nor a
 * registered spoke, the desired version is unknown, the object is malformed, or a `toHub`/`fromHub`
 * function threw (the `cause`). The whole `ConversionReview` is answered `Failure` with this message
 * (the API server then fails the read or write that needed the conversion).
 *
 * @example
 * toHub(v1) {
 *   if (v1.spec.size === undefined) throw new WebhookConversionError('spec.size is required to convert');
 *   return { ...v1, spec: { replicas: v1.spec.size } };
 * }
 */
export class WebhookConversionError extends ConvergeError {
  constructor(message: string, options?: ConvergeErrorOptions) {
    super(KubeErrorCodes.WEBHOOK_CONVERSION_FAILED, message, options);
  }
}
