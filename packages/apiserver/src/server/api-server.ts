import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { AlreadyStartedError, isLoopbackHost, isNotFound, type ResourceType } from '@converge/runtime';
import { Store } from '@converge/store';
import { invalidateOnChange, type PolicyAdmission, WebhookAdmission } from '../admission/index.ts';
import { continueWithinLimit } from './body.ts';
import { bootstrap } from './bootstrap.ts';
import { startClusterDefaults } from './cluster-defaults.ts';
import { CrdController } from './crd-controller.ts';
import { ApiServerErrorCodes, ApiServerStartError } from './errors.ts';
import { FAULT_ADMIN_PATH } from './fault-admin.ts';
import { type FaultInjector, ServerFaultInjector } from './fault-injector.ts';
import { restartListener } from './fault-restart.ts';
import { serverHealthChecks } from './health.ts';
import { createRequestHandler } from './http-handler.ts';
import { kubeconfigYaml, writeKubeconfig, writeServerFile } from './kubeconfig.ts';
import { OpenApiV3 } from './openapi-v3.ts';
import { type ApiServerOptions, type ResolvedApiServerOptions, resolveApiServerOptions } from './options.ts';
import { policyAdmission } from './policy-admission.ts';
import { RbacAuthorizer } from './rbac-authorizer.ts';
import { ResourceRegistry } from './resource-registry.ts';
import { loadOrCreateTls, type TlsMaterial } from './tls.ts';
import { WatchEncoder } from './watch-encoder.ts';
import { WatchTracker } from './watch-tracker.ts';

/** The address pods would reach the server at (the `kubernetes` Endpoints): loopback for a wildcard bind. */
function advertisedIp(bound: string): string {
  if (bound === '0.0.0.0') return '127.0.0.1';
  if (bound === '::') return '::1';
  return bound;
}

/**
 * The request line and headers may take 1 MiB (Go's `http.DefaultMaxHeaderBytes`, which
 * kube-apiserver keeps) and the 4 KiB Go reads past it: a list URL with long selectors fits.
 * Node's default, 16 KiB, cut such a request with a reset.
 */
export const MAX_HEADER_BYTES = 1024 * 1024 + 4096;

/**
 * The answer to a request Node could not parse: 431 for a request line and headers over
 * {@link MAX_HEADER_BYTES} (Go's words), 400 for anything else; the connection is closed.
 */
function clientErrorAnswer(error: NodeJS.ErrnoException): string {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const reason = '431 Request Header Fields Too Large';
    return `HTTP/1.1 ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${reason.length}\r\nConnection: close\r\n\r\n${reason}`;
  }
  return 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
}

/** How long a connection refused by {@link answerClientError} may go on sending before it is cut. */
const CLIENT_ERROR_LINGER_MS = 1_000;

/** Connections {@link answerClientError} answered: later parse errors of theirs are ignored. */
const answered = new WeakSet<Socket>();

/**
 * The server's `clientError` listener: answers (see {@link clientErrorAnswer}) and closes its side,
 * then reads and discards what the client still sends until it stops or for
 * {@link CLIENT_ERROR_LINGER_MS} at most, as Go's server lingers after an error: a client still
 * writing a long request line reads the answer rather than a reset.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (answered.has(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  socket.end(clientErrorAnswer(error));
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.resume();
}

/** How long `close()` waits for in-flight requests before cutting connections. */
const CLOSE_GRACE_MS = 5_000;

/**
 * The embedded Kubernetes API server. Made by {@link createApiServer}; nothing is served until
 * {@link ApiServer.listen}.
 */
export interface ApiServer {
  /** Registers the built-in kinds and CRDs, binds, and writes the kubeconfig; resolves with the URL. */
  listen(): Promise<{ readonly url: string }>;
  /** Ends every watch cleanly, stops accepting, waits for requests (5 s at most), closes an owned store. */
  close(): Promise<void>;
  /** `https://127.0.0.1:PORT` once listening. */
  readonly url: string | undefined;
  /** The served store. */
  readonly store: Store;
  /** The bearer token (undefined when insecure). */
  readonly token: string | undefined;
  /** The CA certificate (PEM) once listening with TLS. */
  readonly ca: string | undefined;
  /** A kubeconfig for this server (YAML), once listening. */
  kubeconfig(): string;
  /** How many watches are open. */
  readonly openWatches: number;
  /**
   * Fault injection: ends every open watch now with a clean EOF (clients re-watch from their last
   * resourceVersion). Returns how many were open. Same as `faults.dropWatches()`.
   */
  dropWatches(): number;
  /**
   * Fault injection for tests and chaos runs: delays, injected errors, stalled watches, restarts.
   * Usable before `listen()`. Served over HTTP at `/converge/faults` only with the `faultAdmin`
   * option, and then only to {@link ApiServer.faultAdminToken} (the API token gets 403).
   */
  readonly faults: FaultInjector;
  /** The fault admin endpoint's bearer token; undefined when the endpoint is not served. */
  readonly faultAdminToken: string | undefined;
}

class EmbeddedApiServer implements ApiServer {
  readonly #options: ResolvedApiServerOptions;
  readonly store: Store;
  readonly #ownsStore: boolean;
  readonly #registry = new ResourceRegistry();
  readonly #watches = new WatchTracker();
  readonly faults: ServerFaultInjector;
  #server: Server | undefined;
  #crds: CrdController | undefined;
  /** Stops the watches that keep admission's configuration cache fresh. */
  readonly #admissionWatches = new AbortController();
  #tls: TlsMaterial | undefined;
  #url: string | undefined;
  #state: 'new' | 'starting' | 'listening' | 'closed' = 'new';

  constructor(options: ResolvedApiServerOptions) {
    this.#options = options;
    this.#ownsStore = options.store === undefined;
    this.store =
      options.store ??
      new Store({
        clock: options.clock,
        logger: options.logger,
        ...(options.dataDir === undefined ? {} : { dataDir: join(options.dataDir, 'store') }),
        ...(options.reinitializeStore ? { persistence: { allowReinitialize: true } } : {}),
      });
    // Fault injection (fault-injector.ts): restart() reaches the listener through #restart.
    this.faults = new ServerFaultInjector({
      clock: options.clock,
      logger: options.logger,
      watches: this.#watches,
      restart: (downMs) => this.#restart(downMs),
    });
  }

  get url(): string | undefined {
    return this.#url;
  }

  get token(): string | undefined {
    return this.#options.token;
  }

  get faultAdminToken(): string | undefined {
    return this.#options.faultAdmin?.token;
  }

  get ca(): string | undefined {
    return this.#tls?.ca;
  }

  get openWatches(): number {
    return this.#watches.size;
  }

  kubeconfig(): string {
    if (this.#url === undefined) {
      throw new ApiServerStartError(
        ApiServerErrorCodes.NOT_LISTENING,
        'the API server is not listening yet: await listen() first',
      );
    }
    return kubeconfigYaml({
      server: this.#url,
      ...(this.#tls === undefined ? {} : { ca: this.#tls.ca }),
      ...(this.#options.token === undefined ? {} : { token: this.#options.token }),
    });
  }

  dropWatches(): number {
    return this.faults.dropWatches();
  }

  /** Fault injection's restart (fault-restart.ts): same server object, same port, same store. */
  #restart(downMs: number): Promise<void> {
    const target = {
      server: this.#state === 'listening' ? this.#server : undefined,
      host: this.#options.host,
      watches: this.#watches,
      clock: this.#options.clock,
      closing: () => this.#state !== 'listening',
    };
    return restartListener(target, downMs);
  }

  /** Admission webhooks over this server's store: configurations and namespace labels read from it. */
  #webhookAdmission(namespaceType: ResourceType): WebhookAdmission {
    const { clock, logger, webhookServiceResolver, localWebhooks } = this.#options;
    const plurals = {
      MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
      ValidatingWebhookConfiguration: 'validatingwebhookconfigurations',
    } as const;
    const admission = new WebhookAdmission({
      listConfigurations: async (kind) => {
        const resource = this.#registry.lookup('admissionregistration.k8s.io', 'v1', plurals[kind]);
        if (resource === undefined) return [];
        const page = await this.store.list(resource.storage);
        return page.items as unknown as Record<string, unknown>[];
      },
      namespaceLabels: async (name) => {
        try {
          const namespace = await this.store.get(namespaceType, { namespace: '', name });
          return { ...namespace.metadata.labels };
        } catch (error) {
          if (isNotFound(error)) return {};
          throw error;
        }
      },
      ...(webhookServiceResolver === undefined ? {} : { resolveService: webhookServiceResolver }),
      ...(localWebhooks === undefined ? {} : { localWebhooks }),
      clock,
      logger: logger.child({ component: 'admission' }),
    });
    // configurations written straight into the store (not through this server) invalidate too
    for (const plural of Object.values(plurals)) {
      const resource = this.#registry.lookup('admissionregistration.k8s.io', 'v1', plural);
      if (resource === undefined) continue;
      const open = (signal: AbortSignal): AsyncIterable<unknown> =>
        this.store.watch(resource.storage, { signal });
      void invalidateOnChange(admission, open, clock, this.#admissionWatches.signal);
    }
    return admission;
  }

  /** ValidatingAdmissionPolicies over this server's store (policy-admission.ts), followed like webhooks. */
  #policyAdmission(namespaceType: ResourceType): PolicyAdmission {
    const { clock, logger } = this.#options;
    const { admission, kinds } = policyAdmission(this.store, this.#registry, namespaceType, logger);
    for (const resource of kinds) {
      const open = (signal: AbortSignal): AsyncIterable<unknown> =>
        this.store.watch(resource.storage, { signal });
      void invalidateOnChange(admission, open, clock, this.#admissionWatches.signal);
    }
    return admission;
  }

  async listen(): Promise<{ readonly url: string }> {
    if (this.#state !== 'new') throw new AlreadyStartedError('ApiServer');
    this.#state = 'starting';
    try {
      return await this.#start();
    } catch (error) {
      this.#state = 'closed';
      this.#admissionWatches.abort();
      this.#server?.close();
      await this.#crds?.stop();
      if (this.#ownsStore) await this.store.close();
      throw error;
    }
  }

  async #start(): Promise<{ readonly url: string }> {
    const { clock, logger, host, port, insecure } = this.#options;
    const types = await bootstrap(this.store, this.#registry, clock);
    const crds = new CrdController({
      store: this.store,
      registry: this.#registry,
      crdType: types.crd,
      clock,
      logger,
      conversion: {
        clock,
        logger: logger.child({ component: 'conversion' }),
        ...(this.#options.extensions.pruneUnknownFields === undefined
          ? {}
          : { prune: this.#options.extensions.pruneUnknownFields.bind(this.#options.extensions) }),
        ...(this.#options.webhookServiceResolver === undefined
          ? {}
          : { resolveService: this.#options.webhookServiceResolver }),
      },
    });
    this.#crds = crds;
    await crds.start();
    if (this.#options.tls) {
      const dir = this.#options.dataDir === undefined ? undefined : join(this.#options.dataDir, 'pki');
      this.#tls = await loadOrCreateTls(dir, [host], clock.now(), logger);
    }
    // RBAC is always on: the index of roles and bindings is filled before the first request is served
    const rbac = new RbacAuthorizer();
    await rbac.start({
      store: this.store,
      registry: this.#registry,
      clock,
      logger,
      signal: this.#admissionWatches.signal,
    });
    const handler = createRequestHandler({
      store: this.store,
      registry: this.#registry,
      extensions: this.#options.extensions,
      clock,
      logger,
      encoder: new WatchEncoder(),
      watches: this.#watches,
      crds,
      namespaceType: types.namespace,
      admission: this.#webhookAdmission(types.namespace),
      policies: this.#policyAdmission(types.namespace),
      rbac,
      openapi: new OpenApiV3(this.#registry, this.#options.extensions),
      token: this.#options.token,
      faults: this.faults,
      faultAdminToken: this.#options.faultAdmin?.token,
      health: serverHealthChecks({ store: this.store, shuttingDown: () => this.#state !== 'listening' }),
      serverAddress: () => this.#url?.replace(/^https?:\/\//, '') ?? `${host}:${port}`,
    });
    const server =
      this.#tls === undefined
        ? createHttpServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler)
        : createHttpsServer(
            { cert: this.#tls.cert, key: this.#tls.key, maxHeaderSize: MAX_HEADER_BYTES },
            handler,
          );
    server.on('checkContinue', continueWithinLimit(handler));
    server.on('clientError', answerClientError);
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      const onError = (cause: Error): void =>
        reject(
          new ApiServerStartError(
            ApiServerErrorCodes.LISTEN_FAILED,
            `cannot listen on ${host}:${port}: ${cause.message}`,
            { cause },
          ),
        );
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const shownHost = address.address.includes(':') ? `[${address.address}]` : address.address;
    this.#url = `${this.#tls === undefined ? 'http' : 'https'}://${shownHost}:${address.port}`;
    if (this.#options.kubeconfigPath !== undefined)
      writeKubeconfig(this.#options.kubeconfigPath, this.#kubeconfigOptions());
    const faultAdmin = this.#options.faultAdmin;
    if (faultAdmin?.tokenPath !== undefined)
      writeServerFile(faultAdmin.tokenPath, `${faultAdmin.token}\n`, 'the fault admin token');
    if (insecure) {
      const exposed = insecureExposure(this.#url, host, faultAdmin !== undefined);
      logger.warn({ url: this.#url, host, faultAdmin: faultAdmin !== undefined }, `INSECURE: ${exposed}`);
      process.emitWarning(`Converge API server is INSECURE: ${exposed}`, {
        code: 'CONVERGE_APISERVER_INSECURE',
      });
    }
    logger.info({ url: this.#url, kubeconfig: this.#options.kubeconfigPath }, 'Serving the Kubernetes API');
    if (this.#options.clusterDefaults)
      await startClusterDefaults({
        store: this.store,
        registry: this.#registry,
        clock,
        logger,
        endpoint: { ip: advertisedIp(address.address), port: address.port },
        caPem: this.#tls?.ca ?? '',
        signal: this.#admissionWatches.signal,
      });
    this.#state = 'listening';
    return { url: this.#url };
  }

  #kubeconfigOptions(): Parameters<typeof writeKubeconfig>[1] {
    return {
      server: this.#url as string,
      ...(this.#tls === undefined ? {} : { ca: this.#tls.ca }),
      ...(this.#options.token === undefined ? {} : { token: this.#options.token }),
    };
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    const server = this.#server;
    if (server !== undefined) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      this.#watches.dropAll();
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      await closed;
      clearTimeout(timer);
    }
    this.#admissionWatches.abort();
    await this.#crds?.stop();
    if (this.#ownsStore) await this.store.close();
  }
}

/** Exactly what an insecure server exposes, and to whom. */
export function insecureExposure(url: string, host: string, faultAdmin: boolean): string {
  const who = isLoopbackHost(host)
    ? 'every local user and process on this machine'
    : `anyone who can reach ${host} over the network`;
  return (
    `the Kubernetes API at ${url} is served over plain HTTP with no authentication: ${who} can read ` +
    'and change every object, Secrets included' +
    (faultAdmin
      ? `; the fault admin endpoint ${FAULT_ADMIN_PATH} is enabled (its token travels in plain text)`
      : '')
  );
}

/**
 * Creates the embedded Kubernetes-compatible API server over a store: real kubectl and
 * @kubernetes/client-node use it without knowing. Secure by default: binds 127.0.0.1, requires a
 * bearer token and serves TLS with its own CA.
 *
 * @example
 * const server = createApiServer({ kubeconfigPath: '/tmp/kubeconfig' });
 * const { url } = await server.listen();
 * // kubectl --kubeconfig /tmp/kubeconfig get namespaces
 * await server.close();
 */
export function createApiServer(options: ApiServerOptions = {}): ApiServer {
  return new EmbeddedApiServer(resolveApiServerOptions(options));
}
