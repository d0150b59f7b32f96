import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import {
  AbortedError,
  type BackendError,
  BadRequestError,
  type Clock,
  type Logger,
  TimeoutError,
  UnavailableError,
} from '@converge/runtime';
import type { Dispatcher, Pool } from 'undici';
import { type CredentialSource, credentialSource, type KubeConfig } from '../config/index.ts';
import { readErrorText } from './body.ts';
import { createPool } from './pool.ts';
import { errorFromResponse, retryAfterSeconds } from './status-error.ts';

/** One request to the API server. */
export interface KubeRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The API path (`/api/v1/namespaces/x/configmaps`), without the server's path prefix. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: string;
  readonly contentType?: string;
  /** Default `application/json`. */
  readonly accept?: string;
  readonly signal?: AbortSignal | undefined;
  /** A long-lived stream: no body timeout (the caller detects stalls). */
  readonly stream?: boolean;
  /** More request headers (a write's `Converge-Fence`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A successful (2xx) response; the caller consumes `body`. */
export interface KubeResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

/** Settings of a {@link Transport}. */
export interface TransportOptions {
  readonly config: KubeConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly userAgent: string;
  /** Headers timeout of every request, and body idle timeout of non-stream requests. */
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly execTimeoutMs: number;
  /** Retries after 429 (or 5xx with Retry-After). */
  readonly maxRetries: number;
  /** A Retry-After longer than this is not waited for: the error is thrown at once. */
  readonly maxRetryAfterMs: number;
}

/** Request counters of a transport. */
export interface TransportCounters {
  requests: number;
  /** Requests retried after a 429 or a 5xx with Retry-After. */
  throttled: number;
  /** Requests retried after refreshing credentials on a 401. */
  reauthenticated: number;
}

/** Whether `signal` has aborted (a function, so TypeScript does not narrow it across awaits). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Refuses a path with a `.` or `..` segment (also percent-encoded): a server or proxy that
 * normalises paths would act on another object than the one named (`configmaps/..` is the
 * namespace). `resourcePath` refuses such names first; this guards every other caller.
 */
function checkDotSegments(path: string): void {
  for (const segment of (path.split('?', 1)[0] ?? '').split('/')) {
    if (!DOT_SEGMENT.test(segment)) continue;
    throw new BadRequestError(
      `invalid request path ${JSON.stringify(path)}: may not hold the segment '${segment}'`,
    );
  }
}

/** `.` and `..`, also percent-encoded (`%2e`, `.%2E`, `%2e%2e`). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
const MAX_REMEMBERED_WARNINGS = 256;
const STALE_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
const TIMEOUTS = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/**
 * HTTP to one cluster over its one keep-alive pool: authentication (refreshing exec and token-file
 * credentials once on a 401), `Retry-After` on 429 (and on 5xx that carry it) waited out up to
 * `maxRetries` times, every error response typed from its `metav1.Status`, and transport failures
 * typed too (`UnavailableError`, `TimeoutError`, `AbortedError`). A GET that finds its keep-alive
 * connection closed by the server is retried once at once.
 *
 * @example
 * const transport = new Transport({ config, clock: realClock, logger, userAgent: 'me/1', requestTimeoutMs: 60_000, connectTimeoutMs: 10_000, keepAliveMs: 60_000, execTimeoutMs: 60_000, maxRetries: 3, maxRetryAfterMs: 30_000 });
 * const response = await transport.send({ method: 'GET', path: '/api/v1/namespaces' });
 */
export class Transport {
  readonly #o: TransportOptions;
  readonly #pool: Pool;
  readonly #credentials: CredentialSource;
  readonly #prefix: string;
  readonly #warned = new Set<string>();
  readonly counters: TransportCounters = { requests: 0, throttled: 0, reauthenticated: 0 };

  constructor(options: TransportOptions) {
    this.#o = options;
    this.#credentials = credentialSource(options.config, options.clock, options.execTimeoutMs);
    this.#prefix = new URL(options.config.server).pathname.replace(/\/+$/, '');
    this.#pool = createPool(
      options.config,
      { connectTimeoutMs: options.connectTimeoutMs, keepAliveMs: options.keepAliveMs },
      () => this.#credentials.clientCertificate(),
    );
  }

  /** Sends a request; resolves with a 2xx response, rejects with a typed error otherwise. */
  async send(request: KubeRequest): Promise<KubeResponse> {
    const { signal } = request;
    checkDotSegments(request.path);
    let retries = 0;
    let reauthenticated = false;
    let staleRetried = false;
    for (;;) {
      if (isAborted(signal)) throw new AbortedError('request aborted', { cause: signal?.reason });
      const credentials = await this.#credentials.get();
      let response: Dispatcher.ResponseData;
      try {
        this.counters.requests++;
        response = await this.#pool.request({
          method: request.method,
          path: this.#path(request),
          headers: {
            accept: request.accept ?? 'application/json',
            'user-agent': this.#o.userAgent,
            ...(credentials.authorization === undefined ? {} : { authorization: credentials.authorization }),
            ...(request.contentType === undefined ? {} : { 'content-type': request.contentType }),
            ...request.headers,
          },
          ...(request.body === undefined ? {} : { body: request.body }),
          signal: signal ?? null,
          headersTimeout: this.#o.requestTimeoutMs,
          bodyTimeout: request.stream === true ? 0 : this.#o.requestTimeoutMs,
        });
      } catch (error) {
        if (isAborted(signal)) throw new AbortedError('request aborted', { cause: error });
        const code = (error as { code?: unknown }).code;
        if (request.method === 'GET' && !staleRetried && STALE_CONNECTION.has(String(code))) {
          staleRetried = true;
          continue;
        }
        throw transportError(`${request.method} ${this.#o.config.server}${request.path}`, error);
      }
      this.#warnings(request, response.headers);
      if (response.statusCode >= 200 && response.statusCode < 300) {
        return { status: response.statusCode, headers: response.headers, body: response.body };
      }
      const text = await readErrorText(response.body);
      const retryAfter = retryAfterSeconds(response.headers['retry-after'], this.#o.clock.now());
      const error = errorFromResponse(response.statusCode, text, retryAfter);
      if (response.statusCode === 401 && !reauthenticated && this.#credentials.invalidate()) {
        reauthenticated = true;
        this.counters.reauthenticated++;
        continue;
      }
      const delayMs = this.#retryDelay(response.statusCode, error, retryAfter);
      if (delayMs !== undefined && retries < this.#o.maxRetries) {
        retries++;
        this.counters.throttled++;
        this.#o.logger.info(
          { method: request.method, path: request.path, code: response.statusCode, delayMs, retry: retries },
          'Kubernetes API asked to retry later; waiting',
        );
        try {
          await this.#o.clock.sleep(delayMs, signal);
        } catch (aborted) {
          throw new AbortedError('request aborted', { cause: aborted });
        }
        continue;
      }
      throw error;
    }
  }

  /** Closes every connection at once (open watches end). */
  async close(): Promise<void> {
    await this.#pool.destroy();
  }

  /** How long to wait before retrying: 429 always (1 s without Retry-After), 5xx only with Retry-After. */
  #retryDelay(status: number, error: BackendError, retryAfter: number | undefined): number | undefined {
    const seconds = retryAfter ?? error.details.retryAfterSeconds;
    if (status === 429) {
      const ms = (seconds ?? 1) * 1000;
      return ms <= this.#o.maxRetryAfterMs ? ms : undefined;
    }
    if (status >= 500 && seconds !== undefined) {
      const ms = seconds * 1000;
      return ms <= this.#o.maxRetryAfterMs ? ms : undefined;
    }
    return undefined;
  }

  #path(request: KubeRequest): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(request.query ?? {}))
      if (value !== undefined) params.set(key, value);
    const query = params.toString();
    return `${this.#prefix}${request.path}${query === '' ? '' : `?${query}`}`;
  }

  /** Logs each distinct `Warning` header once (deprecated APIs warn on every request). */
  #warnings(request: KubeRequest, headers: IncomingHttpHeaders): void {
    const warning = headers.warning;
    if (warning === undefined) return;
    for (const text of Array.isArray(warning) ? warning : [warning]) {
      if (this.#warned.has(text)) continue;
      if (this.#warned.size >= MAX_REMEMBERED_WARNINGS) this.#warned.clear();
      this.#warned.add(text);
      this.#o.logger.warn(
        { method: request.method, path: request.path, warning: text },
        'Kubernetes API warning',
      );
    }
  }
}

/**
 * The typed error of a failed exchange (no HTTP answer): `TimeoutError` for connect, headers and
 * body timeouts, `UnavailableError` for everything else (refused, reset, DNS, TLS), `cause` kept.
 *
 * @example
 * throw transportError('GET /api/v1/pods', error); // TimeoutError or UnavailableError, cause kept
 */
export function transportError(what: string, error: unknown): BackendError {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  const message = error instanceof Error ? error.message : String(error);
  if (TIMEOUTS.has(code)) return new TimeoutError(`${what}: ${message}`, { cause: error });
  const tls = /CERT|SSL|TLS|SIGNATURE/.test(code)
    ? ' (TLS: check the certificate authority and server name)'
    : '';
  return new UnavailableError(`${what}: ${message}${tls}`, { cause: error });
}
