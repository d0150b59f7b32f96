import {
  BackendError,
  type BackendErrorOptions,
  ConvergeError,
  type ConvergeErrorOptions,
} from '@converge/runtime';

/**
 * Stable codes of the errors this package defines (docs/errors.md, "Kubernetes backend"). Errors the
 * API server reports as a `metav1.Status` are the runtime's backend errors (`NotFoundError`,
 * `ConflictError`, …); these codes cover what only a Kubernetes HTTP client can get wrong.
 */
export const KubeErrorCodes = {
  /** A kubeconfig file is malformed or inconsistent; `error.file` and `error.field` say where. */
  KUBECONFIG_INVALID: 'CONVERGE_ERR_KUBE_KUBECONFIG_INVALID',
  /** No kubeconfig file was found (an explicit path missing, or no KUBECONFIG file nor ~/.kube/config). */
  KUBECONFIG_NOT_FOUND: 'CONVERGE_ERR_KUBE_KUBECONFIG_NOT_FOUND',
  /** In-cluster config was asked for outside a pod (no KUBERNETES_SERVICE_HOST/PORT, no service-account files). */
  IN_CLUSTER_UNAVAILABLE: 'CONVERGE_ERR_KUBE_IN_CLUSTER_UNAVAILABLE',
  /** An exec credential plugin could not be run, failed, timed out or printed no valid ExecCredential. */
  EXEC_CREDENTIAL_FAILED: 'CONVERGE_ERR_KUBE_EXEC_CREDENTIAL_FAILED',
  /** The API server answered 401 Unauthorized (also after refreshing refreshable credentials once). */
  UNAUTHORIZED: 'CONVERGE_ERR_KUBE_UNAUTHORIZED',
  /** A watch stream sent no byte for longer than its stall limit; it was closed (retryable). */
  WATCH_STALLED: 'CONVERGE_ERR_KUBE_WATCH_STALLED',
  /** A watch stream line exceeded `maxWatchLineBytes`; the watch was closed. */
  WATCH_LINE_TOO_LONG: 'CONVERGE_ERR_KUBE_WATCH_LINE_TOO_LONG',
  /** A response body or watch line was not the JSON the Kubernetes API defines. */
  RESPONSE_DECODE_FAILED: 'CONVERGE_ERR_KUBE_RESPONSE_DECODE_FAILED',
  /** The webhook server's certificate or key could not be loaded, generated or reloaded. */
  WEBHOOK_TLS_INVALID: 'CONVERGE_ERR_KUBE_WEBHOOK_TLS_INVALID',
  /** The webhook server could not bind its host and port. */
  WEBHOOK_LISTEN_FAILED: 'CONVERGE_ERR_KUBE_WEBHOOK_LISTEN_FAILED',
  /** A webhook path is malformed or already registered. */
  WEBHOOK_PATH_INVALID: 'CONVERGE_ERR_KUBE_WEBHOOK_PATH_INVALID',
  /** A request to the webhook server was not a review it can answer (answered 400, 404, 405 or 413). */
  WEBHOOK_BAD_REQUEST: 'CONVERGE_ERR_KUBE_WEBHOOK_BAD_REQUEST',
  /** An admission handler threw or returned something that is not an admission result (a 500 denial). */
  WEBHOOK_HANDLER_FAILED: 'CONVERGE_ERR_KUBE_WEBHOOK_HANDLER_FAILED',
  /** An admission handler or converter did not finish within the per-request timeout. */
  WEBHOOK_HANDLER_TIMEOUT: 'CONVERGE_ERR_KUBE_WEBHOOK_HANDLER_TIMEOUT',
  /** A conversion webhook could not convert an object to the desired version (a Failure result). */
  WEBHOOK_CONVERSION_FAILED: 'CONVERGE_ERR_KUBE_WEBHOOK_CONVERSION_FAILED',
} as const;

/**
 * A kubeconfig file is malformed or inconsistent: not YAML, a wrongly typed field, a context naming
 * a missing cluster, an unreadable certificate file. `file` is the kubeconfig it was found in and
 * `field` the path inside it (`users[1].user.client-key-data`).
 *
 * @example
 * try { loadKubeconfig({ env: process.env }); }
 * catch (error) { if (error instanceof KubeconfigError) console.error(`${error.file}: ${error.field}`); }
 */
export class KubeconfigError extends ConvergeError {
  readonly file: string;
  readonly field: string;
  constructor(file: string, field: string, problem: string, options?: ConvergeErrorOptions) {
    super(KubeErrorCodes.KUBECONFIG_INVALID, `kubeconfig ${file}: ${field}: ${problem}`, options);
    this.file = file;
    this.field = field;
  }
}

/**
 * No kubeconfig file could be found: an explicit `path` that does not exist, or neither a KUBECONFIG
 * file nor `~/.kube/config`. `files` lists where it looked.
 *
 * @example
 * const config = existsSync(path) ? loadKubeconfig({ path, env }) : inClusterConfig();
 */
export class KubeconfigNotFoundError extends ConvergeError {
  readonly files: readonly string[];
  constructor(files: readonly string[], options?: ConvergeErrorOptions) {
    const where = files.length === 0 ? 'no file given' : files.join(', ');
    super(KubeErrorCodes.KUBECONFIG_NOT_FOUND, `no kubeconfig found (looked at: ${where})`, options);
    this.files = files;
  }
}

/**
 * In-cluster config was asked for, but this process does not run in a pod: `variable` or `file`
 * names what is missing.
 *
 * @example
 * try { inClusterConfig(); } catch (error) { if (error instanceof InClusterConfigError) useKubeconfig(); }
 */
export class InClusterConfigError extends ConvergeError {
  constructor(message: string, options?: ConvergeErrorOptions) {
    super(KubeErrorCodes.IN_CLUSTER_UNAVAILABLE, `in-cluster config unavailable: ${message}`, options);
  }
}

/**
 * An exec credential plugin (`users[].user.exec`) failed: it could not be started, exited non-zero,
 * timed out, or printed something that is not an `ExecCredential` of the requested apiVersion.
 * `command` is the plugin; stderr (truncated) is in the message.
 *
 * @example
 * if (error instanceof ExecCredentialError) console.error(`install ${error.command}: ${error.message}`);
 */
export class ExecCredentialError extends ConvergeError {
  readonly command: string;
  constructor(command: string, problem: string, options?: ConvergeErrorOptions) {
    super(KubeErrorCodes.EXEC_CREDENTIAL_FAILED, `exec credential plugin ${command}: ${problem}`, options);
    this.command = command;
  }
  /** Worth retrying later (a plugin may fail transiently, for example without network). */
  get retryable(): boolean {
    return true;
  }
}

/**
 * The API server answered 401 Unauthorized: the credentials are missing, wrong or expired. Tokens
 * from an exec plugin or a token file are refreshed and the request retried once before this is
 * thrown.
 *
 * @example
 * if (error instanceof UnauthorizedError) console.error('check the kubeconfig user');
 */
export class UnauthorizedError extends BackendError {
  readonly status = 401;
  readonly reason = 'Unauthorized' as const;
  constructor(message: string, options?: BackendErrorOptions) {
    super(KubeErrorCodes.UNAUTHORIZED, message, options);
  }
}

/**
 * A watch stream sent nothing (no event, no bookmark) for `idleMs`, longer than the server's
 * bookmark cadence allows: the connection is presumed dead (a silent proxy, a half-open TCP
 * connection). The watch was closed; re-watching from the last resourceVersion is safe. Retryable.
 *
 * @example
 * for await (const event of backend.watch(type, { resourceVersion, allowBookmarks: true })) apply(event);
 * // throws WatchStalledError when the stream goes silent; the Informer backs off and re-watches.
 */
export class WatchStalledError extends BackendError {
  readonly status = 504;
  readonly reason = 'Timeout' as const;
  readonly idleMs: number;
  constructor(path: string, idleMs: number) {
    super(KubeErrorCodes.WATCH_STALLED, `watch ${path} sent nothing for ${idleMs} ms; closed it as stalled`);
    this.idleMs = idleMs;
  }
  override get retryable(): boolean {
    return true;
  }
}

/**
 * A watch line (one event) was longer than `maxWatchLineBytes`. The watch was closed rather than
 * buffering without bound.
 *
 * @example
 * new KubeBackend({ config, maxWatchLineBytes: 64 * 1024 * 1024 }); // for very large objects
 */
export class WatchLineTooLongError extends ConvergeError {
  readonly limit: number;
  constructor(limit: number) {
    super(
      KubeErrorCodes.WATCH_LINE_TOO_LONG,
      `a watch event line exceeded ${limit} bytes; the watch was closed`,
    );
    this.limit = limit;
  }
}

/**
 * A response body or watch line was not what the Kubernetes API defines: not JSON, or JSON of the
 * wrong shape. `what` says which response (`watch event`, `list`, …) and `field` which part.
 *
 * @example
 * if (error instanceof ResponseDecodeError) console.error(error.what, error.field);
 */
export class ResponseDecodeError extends ConvergeError {
  readonly what: string;
  readonly field: string;
  constructor(what: string, field: string, problem: string, options?: ConvergeErrorOptions) {
    super(KubeErrorCodes.RESPONSE_DECODE_FAILED, `cannot decode ${what}: ${field}: ${problem}`, options);
    this.what = what;
    this.field = field;
  }
}
