import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AlreadyStartedError,
  type CheckReport,
  type Clock,
  isLoopbackHost,
  type Logger,
  noopLogger,
  OptionsError,
  type Runnable,
  realClock,
  toError,
  whenAborted,
} from '@converge/runtime';
import { type BindAddress, parseBindAddress } from '../bind-address/index.ts';
import { ListenFailedError } from '../errors.ts';
import { EventLoopMonitor } from '../event-loop.ts';
import type { Metrics } from '../metrics.ts';
import { DashboardStreams } from './dashboard-events.ts';
import { DASHBOARD_CSP, DASHBOARD_HTML } from './dashboard-page.ts';
import { dashboardQuery } from './dashboard-snapshot.ts';
import { BadQuery, type debugKeys, debugKeysHtml } from './debug-keys.ts';
import { debugKeysOf } from './debug-keys-filter.ts';
import { type ProbeSource, probeResponse } from './probes.ts';

export interface OperationsServerOptions {
  /** The metrics served at `/metrics`; their controllers are the ones `/debug/keys` lists. */
  readonly metrics?: Metrics;
  /** The checks of `/healthz` and `/readyz`: a `Manager`. Default: none (only the server's own). */
  readonly probes?: ProbeSource;
  /**
   * Where `/metrics` and `/debug/keys` are served (controller-runtime's `metricsBindAddress`):
   * `:8080`, `127.0.0.1:8080`, `[::1]:8080`, `127.0.0.1:0` for a free port, or `0` to disable.
   * Default `:8080`.
   */
  readonly metricsBindAddress?: string;
  /**
   * Where `/healthz` and `/readyz` are served (controller-runtime's `healthProbeBindAddress`).
   * The same address as `metricsBindAddress` serves everything on one port. Default `:8081`.
   */
  readonly healthProbeBindAddress?: string;
  /**
   * `/healthz` fails (check `event-loop`) while the event loop is stalled longer than this, and
   * after such a stall until a heartbeat comes on time again. Default 10 000; 0 turns the check off.
   */
  readonly eventLoopStallThresholdMs?: number;
  /** The event loop heartbeat's period. Default 1 000. */
  readonly eventLoopIntervalMs?: number;
  /**
   * Serve the live dashboard at `/` and its event stream at `/debug/events` on the metrics address
   * (beside `/debug/keys`, showing the same keys). Default false; `converge dev` turns it on,
   * `converge run --dashboard` too.
   */
  readonly dashboard?: boolean;
  /** How often each dashboard stream takes a snapshot (sent when it changed). Default 1 000. */
  readonly dashboardIntervalMs?: number;
  /** Dashboard streams open at once; one more gets 503. Default 16. */
  readonly dashboardMaxClients?: number;
  /** Time and timers (the heartbeat, `/debug/keys` times). Default the real clock. */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

type Route = 'metrics' | 'debug' | 'health';

/** The dashboard's own headers: what it may load (its inline script and style, by hash), and no framing. */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/**
 * The HTTP endpoints a kubelet, a Prometheus server and an on-call engineer use (node:http, no
 * framework), as a {@link Runnable}: add it to the manager in the `servers` group, so it listens
 * before caches sync (a readiness probe must be answered, with "not ready", while they do).
 *
 * - `GET /metrics` — the metrics, text exposition format.
 * - `GET /healthz`, `/healthz/<check>` — liveness: the manager's health checks, `ping`, and
 *   `event-loop` (fails while the event loop is stalled past the threshold).
 * - `GET /readyz`, `/readyz/<check>` — readiness: the manager's ready checks (`caches-synced`
 *   until every cache synced) and `ping`. Both answer as kube-apiserver does: `ok`, or with
 *   `?verbose` (and on failure) `[+]name ok` / `[-]name failed: reason` lines and
 *   `readyz check passed|failed`; `?exclude=<check>` leaves one out.
 * - `GET /debug/keys` — every key of the instrumented controllers that is running, backing off,
 *   waiting or queued, with its causes, attempts, last error and next retry time: JSON, or an HTML
 *   table for `Accept: text/html`. `?controller=`, `?state=`, `?limit=` (default 1 000) and
 *   `?key=namespace/name` (one object's keys: {@link debugKeysOf}) narrow it. When the manager
 *   shards: its member (`sharding`: group, identity, phase, epoch, fence, members), whether it may
 *   run each key of a sharded controller (`owned`), and `?owned=true|false`; while it leads, its
 *   leader fence (`fence`).
 * - With `dashboard: true`: `GET /` — a live dashboard (one page, inline script and style under a
 *   strict Content-Security-Policy); `GET /debug/events` — its Server-Sent Events: a `snapshot`
 *   of the controllers (queue depth, reconcile and error rates, latency, leadership, and a page of
 *   keys per controller: `?controller=`, `?state=` (also `hotloop`), `?limit=` (default 50, at
 *   most 500), `?offset=`) each second when it changed, a heartbeat comment otherwise.
 *
 * Other methods get 405, other paths 404, bad parameters 400; nothing a client sends can stop it.
 * It stops listening when its signal aborts. `start` rejects with a {@link ListenFailedError} when
 * an address cannot be bound.
 *
 * @example
 * const metrics = new Metrics().instrument(manager).instrument(controller);
 * manager.add(new OperationsServer({ metrics, probes: manager }), { group: 'servers' });
 */
export class OperationsServer implements Runnable {
  readonly needLeaderElection = false;
  readonly #metrics: Metrics | undefined;
  readonly #probes: ProbeSource | undefined;
  readonly #metricsAddress: BindAddress | undefined;
  readonly #healthAddress: BindAddress | undefined;
  readonly #loop: EventLoopMonitor | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #dashboard: DashboardStreams | undefined;
  readonly #urls = new Map<Route, string>();
  readonly #listening: Promise<void>;
  #listened: (error?: unknown) => void = () => {};
  #started = false;

  constructor(options: OperationsServerOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    this.#metrics = options.metrics;
    this.#probes = options.probes;
    if (
      this.#probes !== undefined &&
      (typeof this.#probes.health !== 'function' || typeof this.#probes.ready !== 'function')
    ) {
      throw new OptionsError('probes', this.#probes, 'an object with health() and ready() (a Manager)');
    }
    this.#metricsAddress = parseBindAddress('metricsBindAddress', options.metricsBindAddress ?? ':8080');
    this.#healthAddress = parseBindAddress(
      'healthProbeBindAddress',
      options.healthProbeBindAddress ?? ':8081',
    );
    this.#listening = new Promise<void>((resolve, reject) => {
      this.#listened = (error?: unknown): void => {
        if (error === undefined) resolve();
        else reject(toError(error));
      };
    });
    this.#listening.catch(() => undefined);
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? noopLogger).child({ component: 'operations-server' });
    this.#dashboard = this.#dashboardStreams(options);
    const threshold = options.eventLoopStallThresholdMs ?? 10_000;
    if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0) {
      throw new OptionsError('eventLoopStallThresholdMs', threshold, 'a number of milliseconds >= 0');
    }
    if (threshold > 0) {
      this.#loop = new EventLoopMonitor({
        clock: this.#clock,
        thresholdMs: threshold,
        ...(options.eventLoopIntervalMs === undefined ? {} : { intervalMs: options.eventLoopIntervalMs }),
      });
      this.#metrics?.addEventLoopMonitor(this.#loop);
    }
  }

  #dashboardStreams(options: OperationsServerOptions): DashboardStreams | undefined {
    if (options.dashboard !== undefined && typeof options.dashboard !== 'boolean')
      throw new OptionsError('dashboard', options.dashboard, 'a boolean');
    if (options.dashboard !== true) return undefined;
    const intervalMs = options.dashboardIntervalMs ?? 1_000;
    if (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs < 10)
      throw new OptionsError('dashboardIntervalMs', intervalMs, 'a number of milliseconds >= 10');
    const maxClients = options.dashboardMaxClients ?? 16;
    if (!Number.isInteger(maxClients) || maxClients < 1)
      throw new OptionsError('dashboardMaxClients', maxClients, 'an integer >= 1');
    const probes = this.#probes as { readonly leading?: unknown } | undefined;
    return new DashboardStreams({
      metrics: this.#metrics,
      leading: () => (typeof probes?.leading === 'boolean' ? probes.leading : undefined),
      intervalMs,
      heartbeatMs: 15_000,
      maxClients,
      clock: this.#clock,
      logger: this.#logger,
    });
  }

  /**
   * The base URL (`http://host:port`) each endpoint is served at once listening (`metrics`,
   * `debug`, `health`), or undefined (disabled, or not listening yet). With port 0 it names the
   * port chosen.
   */
  url(route: Route): string | undefined {
    return this.#urls.get(route);
  }

  /**
   * Resolves once every enabled address is bound (see `url`); rejects with the start's
   * {@link ListenFailedError}, or an AbortedError-like error if it stopped first.
   */
  whenListening(): Promise<void> {
    return this.#listening;
  }

  /** Whether the dashboard is served: `/` and `/debug/events` at {@link url}('debug'). */
  get dashboard(): boolean {
    return this.#dashboard !== undefined;
  }

  /** The event-loop monitor behind the `event-loop` check (undefined when turned off). */
  get eventLoop(): EventLoopMonitor | undefined {
    return this.#loop;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('operations server');
    this.#started = true;
    if (signal.aborted) {
      this.#listened(new Error('operations server stopped before it listened'));
      return;
    }
    const stopLoop = new AbortController();
    const loopRun = this.#loop?.start(stopLoop.signal);
    const servers: Server[] = [];
    try {
      const same =
        this.#metricsAddress !== undefined &&
        this.#healthAddress !== undefined &&
        this.#metricsAddress.text === this.#healthAddress.text &&
        this.#metricsAddress.port !== 0;
      if (same) {
        servers.push(await this.#listen(this.#metricsAddress as BindAddress, ['metrics', 'debug', 'health']));
      } else {
        if (this.#metricsAddress !== undefined)
          servers.push(await this.#listen(this.#metricsAddress, ['metrics', 'debug']));
        if (this.#healthAddress !== undefined)
          servers.push(await this.#listen(this.#healthAddress, ['health']));
      }
      this.#listened();
      await whenAborted(signal);
    } catch (error) {
      this.#listened(error);
      throw error;
    } finally {
      this.#listened(new Error('operations server stopped'));
      stopLoop.abort();
      await loopRun;
      this.#dashboard?.closeAll();
      await Promise.all(servers.map(close));
      this.#urls.clear();
    }
  }

  #listen(address: BindAddress, routes: readonly Route[]): Promise<Server> {
    const server = createServer((req, res) => {
      this.#handle(req, res, routes).catch((error: unknown) => {
        this.#logger.error({ err: error }, 'Operations endpoint failed');
        if (!res.headersSent) send(res, req, 500, 'internal server error\n');
        else res.destroy();
      });
    });
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    return new Promise<Server>((resolve, reject) => {
      const onError = (error: Error): void => reject(new ListenFailedError(address.text, { cause: error }));
      server.once('error', onError);
      server.listen(
        { port: address.port, ...(address.host === undefined ? {} : { host: address.host }) },
        () => {
          server.off('error', onError);
          server.on('error', (error) => this.#logger.error({ err: error }, 'Operations server error'));
          const bound = server.address() as AddressInfo;
          if (this.#dashboard !== undefined && routes.includes('debug') && !isLoopbackHost(bound.address))
            this.#logger.warn(
              { address: address.text },
              'Dashboard served beyond loopback: whoever reaches this address sees key names, causes and errors',
            );
          const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
          for (const route of routes) this.#urls.set(route, `http://${host}:${bound.port}`);
          this.#logger.info({ address: `${host}:${bound.port}`, routes }, 'Serving operations endpoints');
          resolve(server);
        },
      );
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse, routes: readonly Route[]): Promise<void> {
    const raw = req.url ?? '';
    const q = raw.indexOf('?');
    const rawPath = q === -1 ? raw : raw.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : raw.slice(q + 1));
    let segments: string[];
    try {
      if (!rawPath.startsWith('/')) throw new URIError('not an absolute path');
      segments = rawPath.slice(1).split('/').map(decodeURIComponent);
    } catch {
      send(res, req, 400, 'bad request: malformed path\n');
      return;
    }
    const [first, second, ...rest] = segments;
    const route: Route | 'page' | 'events' | undefined =
      first === 'metrics' && second === undefined
        ? 'metrics'
        : first === 'debug' && second === 'keys' && rest.length === 0
          ? 'debug'
          : first === 'debug' && second === 'events' && rest.length === 0
            ? 'events'
            : first === '' && second === undefined
              ? 'page'
              : (first === 'healthz' || first === 'readyz') && rest.length === 0 && second !== ''
                ? 'health'
                : undefined;
    // The dashboard's page and stream are served where /debug/keys is.
    const served = route === 'page' || route === 'events' ? 'debug' : route;
    if (route === undefined || served === undefined || !routes.includes(served)) {
      send(res, req, 404, '404 page not found\n');
      return;
    }
    if (served !== route && this.#dashboard === undefined) {
      send(
        res,
        req,
        404,
        '404 page not found: the dashboard is off (dashboard: true, converge run --dashboard)\n',
      );
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, req, 405, 'method not allowed\n');
      return;
    }
    switch (route) {
      case 'metrics':
        await this.#serveMetrics(req, res);
        return;
      case 'debug':
        this.#serveKeys(req, res, query);
        return;
      case 'health':
        await this.#serveProbe(req, res, first as 'healthz' | 'readyz', second, query);
        return;
      case 'page':
        send(res, req, 200, DASHBOARD_HTML, 'text/html; charset=utf-8', PAGE_HEADERS);
        return;
      case 'events':
        this.#serveEvents(req, res, query);
        return;
    }
  }

  #serveEvents(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
    const streams = this.#dashboard as DashboardStreams;
    let parsed: ReturnType<typeof dashboardQuery>;
    try {
      parsed = dashboardQuery(query, this.#metrics?.controllers() ?? []);
    } catch (error) {
      if (error instanceof BadQuery) {
        send(res, req, error.status, `${error.message}\n`);
        return;
      }
      throw error;
    }
    if (streams.full) {
      res.setHeader('Retry-After', '5');
      send(res, req, 503, 'too many dashboard streams open; retry later\n');
      return;
    }
    streams.serve(req, res, parsed);
  }

  async #serveMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#metrics === undefined) {
      send(res, req, 404, '404 page not found: no metrics configured\n');
      return;
    }
    const text = await this.#metrics.scrape();
    send(res, req, 200, text, this.#metrics.contentType);
  }

  #serveKeys(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
    let doc: ReturnType<typeof debugKeys>;
    try {
      doc = debugKeysOf(this.#metrics?.controllers() ?? [], query, this.#clock.now(), {
        sharding: this.#metrics?.shardMember(),
        fence: this.#metrics?.leaderFence(),
      });
    } catch (error) {
      if (error instanceof BadQuery) {
        send(res, req, error.status, `${error.message}\n`);
        return;
      }
      throw error;
    }
    const accept = req.headers.accept ?? '';
    if (/\btext\/html\b/.test(accept)) send(res, req, 200, debugKeysHtml(doc), 'text/html; charset=utf-8');
    else send(res, req, 200, `${JSON.stringify(doc, null, 2)}\n`, 'application/json');
  }

  async #serveProbe(
    req: IncomingMessage,
    res: ServerResponse,
    kind: 'healthz' | 'readyz',
    check: string | undefined,
    query: URLSearchParams,
  ): Promise<void> {
    const report = await this.#report(kind);
    const { status, body } = probeResponse(kind, report, query, check);
    send(res, req, status, body);
  }

  async #report(kind: 'healthz' | 'readyz'): Promise<CheckReport> {
    const base: CheckReport =
      this.#probes === undefined
        ? { ok: true, checks: {} }
        : kind === 'healthz'
          ? await this.#probes.health()
          : await this.#probes.ready();
    if (kind !== 'healthz' || this.#loop === undefined) return base;
    let loop: { ok: boolean; error?: string } = { ok: true };
    try {
      this.#loop.check();
    } catch (error) {
      loop = { ok: false, error: (error as Error).message };
    }
    return { ok: base.ok && loop.ok, checks: { ...base.checks, 'event-loop': loop } };
  }
}

function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  body: string,
  type = 'text/plain; charset=utf-8',
  headers: Readonly<Record<string, string>> = {},
): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', type);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
