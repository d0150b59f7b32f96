import { X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { isIP } from 'node:net';
import type {
  AdmissionWebhookOptions,
  Converter,
  Defaulter,
  SideEffects,
  Validator,
} from '@converge/runtime';
import {
  AlreadyStartedError,
  type KubeObject,
  type Logger,
  type Runnable,
  type Timer,
  type WebhookHost,
} from '@converge/runtime';
import type { AdmissionRoute } from './admission-handler.ts';
import type { ConversionRoute } from './conversion-review.ts';
import { WebhookListenError, WebhookPathError } from './errors.ts';
import { sendStatus } from './http-io.ts';
import {
  type ResolvedWebhookServerOptions,
  resolveWebhookServerOptions,
  type WebhookServerOptions,
} from './options.ts';
import { answerLocally, serveRequest } from './serve-request.ts';
import { type CertificatePair, loadServingCertificate } from './serving-certificate.ts';
import { messageOf } from './settle.ts';

/** What a registered path serves. */
export type WebhookType = 'validating' | 'mutating' | 'conversion';

/** One registered webhook, as a webhook configuration would name it. */
export interface WebhookInfo {
  readonly path: string;
  readonly type: WebhookType;
  /** For admission webhooks: what to declare as `sideEffects`. */
  readonly sideEffects?: SideEffects;
}

/** Where the server listens. */
export interface WebhookServerAddress {
  /** The bound address (`127.0.0.1`, `::`, …). */
  readonly host: string;
  readonly port: number;
  /** `https://HOST:PORT`, with `localhost` for an unspecified address; append a webhook's path. */
  readonly url: string;
}

/** Refuses TLS 1.0 and 1.1 (controller-runtime once allowed them; see its issue 1431). */
const MIN_TLS_VERSION = 'TLSv1.2';
/** Request headers must arrive within this; a whole request (body included) within REQUEST_TIMEOUT_MS. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;

type Route = AdmissionRoute | ConversionRoute;

function checkPath(path: string, taken: ReadonlyMap<string, Route>): void {
  if (typeof path !== 'string' || !path.startsWith('/') || /[?#\s]/.test(path)) {
    throw new WebhookPathError(String(path), 'must start with / and hold no query, fragment or space');
  }
  const existing = taken.get(path);
  if (existing !== undefined) throw new WebhookPathError(path, `already serves a ${existing.type} webhook`);
}

function urlOf(address: AddressInfo): string {
  const unspecified = address.address === '::' || address.address === '0.0.0.0';
  const host = unspecified
    ? 'localhost'
    : address.address.includes(':')
      ? `[${address.address}]`
      : address.address;
  return `https://${host}:${address.port}`;
}

/**
 * An HTTPS server for admission and conversion webhooks, what the API server calls before it stores
 * an object (admission) or to read and write another version of a custom resource (conversion).
 * Register handlers by path, then `start(signal)`: it serves until the signal aborts. It is a
 * {@link Runnable} that needs no leadership (every replica serves).
 *
 * - Admission: `AdmissionReview` `admission.k8s.io/v1` or `v1beta1` in, the same version out,
 *   `uid` echoed. A {@link Validator} answers `allowed()` or `denied(message, { code })`, with
 *   warnings; a {@link Defaulter} returns the defaulted object and the server answers with the
 *   RFC 6902 patch (`patchType: JSONPatch`). A handler that throws is a denial with code 500, one
 *   past the timeout a denial with code 504; neither stops the server.
 * - Conversion: `ConversionReview` `apiextensions.k8s.io/v1` converted by a {@link Converter}
 *   (see `hubAndSpoke`).
 * - Transport: TLS 1.2 or newer over HTTP/1.1 only (no HTTP/2, so no Rapid Reset exposure);
 *   certificate files are reloaded when they change; bodies are bounded; anything that is not a
 *   review it can answer gets a 400 (404, 405, 413) with a `metav1.Status`.
 *
 * @example
 * const server = new WebhookServer({ port: 9443, tls: { certFile: '/certs/tls.crt', keyFile: '/certs/tls.key' } });
 * server.validating<Website>('/validate-website', {
 *   validate: ({ object }) => (object?.spec.domain.includes(' ') ? denied('no spaces in spec.domain') : allowed()),
 * });
 * server.mutating<Website>('/default-website', {
 *   default(website) { website.spec.replicas ??= 1; return website; },
 * });
 * await server.start(signal);
 */
export class WebhookServer implements WebhookHost {
  /** Webhooks must answer on every replica, not only the leader. */
  readonly needLeaderElection = false;
  readonly #o: ResolvedWebhookServerOptions;
  readonly #logger: Logger;
  readonly #routes = new Map<string, Route>();
  readonly #listening: Promise<WebhookServerAddress>;
  #resolveListening!: (address: WebhookServerAddress) => void;
  #rejectListening!: (error: unknown) => void;
  #started = false;
  #address: WebhookServerAddress | undefined;
  #caBundle: string | undefined;
  /** The serving certificate (PEM) now. */
  #cert: string | undefined;
  /**
   * Whether {@link #cert} is trusted under a CA bundle (the caller's PEM string, the same instance
   * call after call) and a name; cleared when the certificate changes.
   */
  #trusted = new Map<string, Map<string, boolean>>();
  /** Aborts when the server stops (the in-process answers see it as HTTP requests do). */
  #stop: AbortSignal | undefined;
  #inFlight = 0;
  #onIdle: (() => void) | undefined;

  constructor(options: WebhookServerOptions) {
    this.#o = resolveWebhookServerOptions(options);
    this.#logger = this.#o.logger.child({ component: 'webhook-server' });
    this.#listening = new Promise<WebhookServerAddress>((resolve, reject) => {
      this.#resolveListening = resolve;
      this.#rejectListening = reject;
    });
    // Whoever awaits listening() sees a failure; nobody awaiting it is not an unhandled rejection.
    this.#listening.catch(() => {});
  }

  /**
   * Serves a validating webhook at `path` (also after `start`). A path serves one webhook.
   *
   * @example
   * server.validating<Website>('/validate-website', { validate: (request) => allowed() });
   */
  validating<T extends KubeObject>(
    path: string,
    validator: Validator<T>,
    options: AdmissionWebhookOptions = {},
  ): this {
    checkPath(path, this.#routes);
    const route: AdmissionRoute = {
      type: 'validating',
      path,
      sideEffects: options.sideEffects ?? 'None',
      validator: validator as unknown as Validator<KubeObject>,
    };
    this.#routes.set(path, route);
    return this;
  }

  /**
   * Serves a mutating (defaulting) webhook at `path` (also after `start`). A path serves one webhook.
   *
   * @example
   * server.mutating<Website>('/default-website', { default(website) { website.spec.replicas ??= 1; } });
   */
  mutating<T extends KubeObject>(
    path: string,
    defaulter: Defaulter<T>,
    options: AdmissionWebhookOptions = {},
  ): this {
    checkPath(path, this.#routes);
    const route: AdmissionRoute = {
      type: 'mutating',
      path,
      sideEffects: options.sideEffects ?? 'None',
      defaulter: defaulter as unknown as Defaulter<KubeObject>,
    };
    this.#routes.set(path, route);
    return this;
  }

  /**
   * Serves a conversion webhook at `path` (a CRD's `conversion.webhook.clientConfig`).
   *
   * @example
   * server.conversion('/convert-website', hubAndSpoke<WebsiteV2>({ hub: 'example.com/v2', spokes: { … } }));
   */
  conversion(path: string, converter: Converter): this {
    checkPath(path, this.#routes);
    this.#routes.set(path, { type: 'conversion', path, converter });
    return this;
  }

  /** The registered webhooks, in registration order. */
  webhooks(): WebhookInfo[] {
    return [...this.#routes.values()].map((route) =>
      route.type === 'conversion'
        ? { path: route.path, type: route.type }
        : { path: route.path, type: route.type, sideEffects: route.sideEffects },
    );
  }

  /** Where the server listens; undefined before it does and after it stopped. */
  get address(): WebhookServerAddress | undefined {
    return this.#address;
  }

  /**
   * An in-process way to call this server's webhooks, for an API server in the same process (as
   * `converge dev` runs them): the same answer as an HTTPS POST to `url`, without TLS or HTTP.
   * Given only when this server listens at `url`'s host and port over HTTPS, and its certificate
   * is one that `caPem` (the configuration's `caBundle`, decoded) issued and that names `serverName`
   * (else `url`'s host): a configuration that would fail over HTTPS gets undefined, and its caller
   * goes over HTTPS to meet the same failure. The dispatch takes and returns JSON text.
   *
   * @example
   * const dispatch = server.localDispatcher(new URL(url), caPem, undefined);
   * const answer = dispatch && (await dispatch('/validate-widget?timeout=10s', JSON.stringify(review), signal));
   */
  localDispatcher(
    url: URL,
    caPem: string | undefined,
    serverName: string | undefined,
  ):
    | ((
        pathWithQuery: string,
        body: string,
        signal: AbortSignal,
      ) => Promise<{ status: number; body: string }>)
    | undefined {
    const address = this.#address;
    const cert = this.#cert;
    const stop = this.#stop;
    if (address === undefined || cert === undefined || stop === undefined || url.protocol !== 'https:')
      return undefined;
    if (Number(url.port || '443') !== address.port) return undefined;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!listensOn(address.host, host)) return undefined;
    if (caPem === undefined || caPem === '') return undefined;
    const name = serverName ?? host;
    let byName = this.#trusted.get(caPem);
    if (byName === undefined) {
      if (this.#trusted.size >= 64) this.#trusted.clear();
      byName = new Map();
      this.#trusted.set(caPem, byName);
    }
    let trusted = byName.get(name);
    if (trusted === undefined) {
      trusted = certificateTrusted(cert, caPem, name);
      byName.set(name, trusted);
    }
    if (!trusted) return undefined;
    return async (pathWithQuery, body) => {
      this.#inFlight++;
      try {
        return await answerLocally(pathWithQuery, body, {
          routes: this.#routes,
          options: this.#o,
          logger: this.#logger,
          stop,
        });
      } finally {
        this.#inFlight--;
        if (this.#inFlight === 0) this.#onIdle?.();
      }
    };
  }

  /** The CA certificate (PEM) of a generated or in-memory certificate, for `caBundle` (base64 it). */
  get caBundle(): string | undefined {
    return this.#caBundle;
  }

  /** Resolves once the server listens (with the bound port); rejects if `start` failed. */
  listening(): Promise<WebhookServerAddress> {
    return this.#listening;
  }

  /**
   * Loads the certificate, binds and serves until `signal` aborts; then stops accepting, lets
   * requests in flight finish (at most `shutdownTimeoutMs`, then their signals abort and the
   * connections are cut) and resolves. Rejects with `WebhookTlsError` or `WebhookListenError` when
   * it cannot start.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('WebhookServer');
    this.#started = true;
    const stop = new AbortController();
    let server: Server;
    let certificateTimer: Timer | undefined;
    try {
      // Wall time, not the clock: TLS peers check validity against real time.
      const serving = await loadServingCertificate(this.#o.tls, Date.now(), this.#logger);
      this.#caBundle = serving.caBundle;
      this.#cert = serving.pair.cert;
      this.#trusted = new Map();
      this.#stop = stop.signal;
      server = this.#createServer(serving.pair, stop.signal);
      const files = serving.files;
      if (files !== undefined) {
        // Never throws: it runs in a socket listener and a timer, where a throw would crash the process.
        const apply = (force: boolean): void => {
          try {
            const next = files.poll(force);
            if (next !== undefined) {
              server.setSecureContext({ cert: next.cert, key: next.key, minVersion: MIN_TLS_VERSION });
              this.#cert = next.cert;
              this.#trusted = new Map();
            }
          } catch (error) {
            this.#logger.error({ err: error }, 'Cannot apply the reloaded webhook certificate');
          }
        };
        // Before the TLS layer's own listener, so this very connection gets a reloaded certificate.
        server.prependListener('connection', () => apply(false));
        const schedule = (): void => {
          certificateTimer = this.#o.clock.setTimer(() => {
            apply(true);
            schedule();
          }, this.#o.certificateCheckIntervalMs);
        };
        schedule();
      }
      await this.#listen(server);
    } catch (error) {
      certificateTimer?.cancel();
      this.#rejectListening(error);
      throw error;
    }
    try {
      if (!signal.aborted) {
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      }
    } finally {
      certificateTimer?.cancel();
      await this.#shutdown(server, stop);
    }
  }

  #createServer(pair: CertificatePair, stop: AbortSignal): Server {
    const server = createServer(
      {
        cert: pair.cert,
        key: pair.key,
        minVersion: MIN_TLS_VERSION,
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
      },
      (req, res) => this.#onRequest(req, res, stop),
    );
    server.on('clientError', (_error, socket: Socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    server.on('tlsClientError', (error) => this.#logger.debug({ err: error }, 'TLS handshake failed'));
    return server;
  }

  async #listen(server: Server): Promise<void> {
    const { host, port } = this.#o;
    await new Promise<void>((resolve, reject) => {
      const onError = (cause: Error): void =>
        reject(new WebhookListenError(`${host ?? '*'}:${port}`, { cause }));
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const info = server.address() as AddressInfo;
    this.#address = { host: info.address, port: info.port, url: urlOf(info) };
    this.#logger.info(
      { url: this.#address.url, webhooks: this.webhooks().map((w) => w.path) },
      'Serving webhooks',
    );
    this.#resolveListening(this.#address);
  }

  async #shutdown(server: Server, stop: AbortController): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (this.#inFlight > 0) {
      const idle = new Promise<void>((resolve) => {
        this.#onIdle = resolve;
      });
      const grace = new AbortController();
      const timedOut = this.#o.clock.sleep(this.#o.shutdownTimeoutMs, grace.signal).catch(() => {});
      await Promise.race([idle, timedOut]);
      grace.abort();
      this.#onIdle = undefined;
      if (this.#inFlight > 0) {
        this.#logger.warn(
          { inFlight: this.#inFlight },
          'Webhook requests still running at shutdown; aborting them',
        );
      }
    }
    stop.abort();
    server.closeAllConnections();
    await closed;
    this.#address = undefined;
    this.#logger.info({}, 'Stopped serving webhooks');
  }

  #onRequest(req: IncomingMessage, res: ServerResponse, stop: AbortSignal): void {
    this.#inFlight++;
    res.once('close', () => {
      this.#inFlight--;
      if (this.#inFlight === 0) this.#onIdle?.();
    });
    void serveRequest(req, res, { routes: this.#routes, options: this.#o, logger: this.#logger, stop }).catch(
      (error: unknown) => {
        this.#logger.error({ err: error, path: req.url }, 'Webhook request failed unexpectedly');
        if (!res.headersSent) sendStatus(res, 500, `internal error: ${messageOf(error)}`);
        else res.destroy();
      },
    );
  }
}

/** Whether a server bound to `bound` (an address) answers a connection to `host`. */
function listensOn(bound: string, host: string): boolean {
  if (bound === host) return true;
  const loopback = (h: string) => h === 'localhost' || h === '127.0.0.1' || h === '::1';
  if (bound === '0.0.0.0' || bound === '::') return loopback(host);
  return loopback(bound) && loopback(host) && (bound === '::1') === (host === '::1');
}

/**
 * Whether a TLS client trusting `caPem` would accept `certPem` for `name`: one of the bundle's
 * certificates issued and signed it (or it is one of them), it is valid now, and it names `name`
 * (as a DNS name or an IP address).
 */
function certificateTrusted(certPem: string, caPem: string, name: string): boolean {
  try {
    const leaf = new X509Certificate(certPem);
    const now = Date.now();
    if (now < Date.parse(leaf.validFrom) || now > Date.parse(leaf.validTo)) return false;
    const named = isIP(name) === 0 ? leaf.checkHost(name) !== undefined : leaf.checkIP(name) !== undefined;
    if (!named) return false;
    const blocks = caPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    for (const block of blocks) {
      const ca = new X509Certificate(block);
      if (ca.fingerprint256 === leaf.fingerprint256) return true;
      if (leaf.checkIssued(ca) && leaf.verify(ca.publicKey)) return true;
    }
    return false;
  } catch {
    return false;
  }
}
