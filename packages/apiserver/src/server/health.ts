/**
 * `/healthz`, `/livez` and `/readyz` as kube-apiserver answers them: every check of the endpoint
 * runs; all passing is `200 ok` (with `?verbose`, one `[+]name ok` line each and `<endpoint> check
 * passed`); any failing is a 500 listing every check with `[-]name failed: reason withheld` and
 * `<endpoint> check failed` (the reason goes to the log, not to the client). `?exclude=name` skips
 * a check; `/<endpoint>/<name>` runs one check (`ok`, or a 500 `internal server error: <reason>`);
 * an unknown check is a 404.
 */

import type { Store } from '@converge/store';

/** One named check: `undefined` when healthy, else why not. */
export interface HealthCheck {
  readonly name: string;
  check(): string | undefined;
}

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

export interface HealthAnswer {
  readonly status: 200 | 404 | 500;
  readonly body: string;
  /** The failures, for the log: `name: reason`. */
  readonly failures: readonly string[];
}

const ENDPOINTS: ReadonlySet<string> = new Set(['healthz', 'livez', 'readyz']);

/** `healthz` and `readyz` for `/healthz`, `/readyz/store`; undefined for any other path. */
export function healthPath(pathname: string): { endpoint: HealthEndpoint; check?: string } | undefined {
  const parts = pathname.split('/').filter((p) => p !== '');
  const [endpoint, check, ...rest] = parts;
  if (endpoint === undefined || !ENDPOINTS.has(endpoint) || rest.length > 0) return undefined;
  return check === undefined
    ? { endpoint: endpoint as HealthEndpoint }
    : { endpoint: endpoint as HealthEndpoint, check };
}

/** The checks of each endpoint, answered as kube-apiserver's healthz package answers. */
export class HealthChecks {
  readonly #checks: Readonly<Record<HealthEndpoint, readonly HealthCheck[]>>;

  constructor(checks: Readonly<Record<HealthEndpoint, readonly HealthCheck[]>>) {
    this.#checks = checks;
  }

  answer(endpoint: HealthEndpoint, check: string | undefined, query: URLSearchParams): HealthAnswer {
    const checks = this.#checks[endpoint];
    if (check !== undefined) {
      const one = checks.find((c) => c.name === check);
      if (one === undefined) return { status: 404, body: '404 page not found\n', failures: [] };
      const reason = run(one);
      return reason === undefined
        ? { status: 200, body: 'ok', failures: [] }
        : { status: 500, body: `internal server error: ${reason}\n`, failures: [`${one.name}: ${reason}`] };
    }
    const excluded = new Set(query.getAll('exclude'));
    const verbose = query.has('verbose');
    const lines: string[] = [];
    const failures: string[] = [];
    for (const c of checks) {
      if (excluded.delete(c.name)) {
        lines.push(`[+]${c.name} excluded: ok`);
        continue;
      }
      const reason = run(c);
      if (reason === undefined) lines.push(`[+]${c.name} ok`);
      else {
        lines.push(`[-]${c.name} failed: reason withheld`);
        failures.push(`${c.name}: ${reason}`);
      }
    }
    if (excluded.size > 0) {
      lines.push(
        `warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(',')}`,
      );
    }
    const listed = lines.map((l) => `${l}\n`).join('');
    if (failures.length > 0) return { status: 500, body: `${listed}${endpoint} check failed\n`, failures };
    return { status: 200, body: verbose ? `${listed}${endpoint} check passed\n` : 'ok', failures };
  }
}

/** A check that throws has failed, with its message as the reason. */
function run(check: HealthCheck): string | undefined {
  try {
    return check.check();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** What the server's checks read: the store's health, and whether the server is shutting down. */
export interface HealthSources {
  readonly store: Pick<Store, 'health'>;
  readonly shuttingDown: () => boolean;
}

/**
 * The embedded server's checks: `ping` everywhere; `store` (persistence healthy: writable and no
 * failed snapshot waiting for its retry) on `/healthz` and `/readyz`; `store-writable` on `/livez`
 * (a store that refuses every write recovers only by a restart); `shutdown` on `/readyz` once
 * `close()` has begun, so load balancers stop sending before the port closes.
 */
export function serverHealthChecks(sources: HealthSources): HealthChecks {
  const ping: HealthCheck = { name: 'ping', check: () => undefined };
  const store: HealthCheck = {
    name: 'store',
    check: () => {
      const { ok, persistence } = sources.store.health();
      if (ok && (persistence === undefined || persistence.healthy)) return undefined;
      if (persistence === undefined) return 'the store is closed';
      const last = persistence.lastError;
      const code = last?.code === undefined ? '' : ` (${last.code})`;
      const why = last === undefined ? 'unknown' : `${last.step} failed${code}: ${last.message}`;
      return persistence.writable
        ? `${persistence.consecutiveSnapshotFailures} snapshot attempt(s) failed, writes still durable (${why})`
        : `the store refuses writes (${why})`;
    },
  };
  const writable: HealthCheck = {
    name: 'store-writable',
    check: () => {
      const { persistence } = sources.store.health();
      return persistence === undefined || persistence.writable ? undefined : 'the store refuses writes';
    },
  };
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: () => (sources.shuttingDown() ? 'the server is shutting down' : undefined),
  };
  return new HealthChecks({
    healthz: [ping, store],
    livez: [ping, writable],
    readyz: [ping, shutdown, store],
  });
}
