import type { buildConnector, Pool } from 'undici';
import type { KubeConfig } from '../config/index.ts';
import { undici } from './undici.ts';

/** Timeouts of the connection pool. */
export interface PoolTimeouts {
  /** TCP + TLS connect. */
  readonly connectTimeoutMs: number;
  /** How long an idle keep-alive connection is kept (the server's `Keep-Alive` hint wins). */
  readonly keepAliveMs: number;
}

/** The client certificate for the next new connection (an exec plugin may rotate it). */
export type ClientCertificate = () => { readonly cert?: string; readonly key?: string };

/**
 * The one keep-alive connection pool of a cluster. Timeouts are deliberate: the pool itself has no
 * headers or body timeout (undici's 300 s `bodyTimeout` default would kill every quiet watch); each
 * request sets its own, and watches rely on client-side stall detection instead. New connections
 * use the current client certificate, so certificates rotated by an exec plugin apply without a
 * new pool. TCP keep-alive probes detect dead peers under long watches.
 *
 * @example
 * const pool = createPool(config, { connectTimeoutMs: 10_000, keepAliveMs: 60_000 }, () => config.tls);
 */
export function createPool(
  config: KubeConfig,
  timeouts: PoolTimeouts,
  clientCertificate: ClientCertificate,
): Pool {
  const url = new URL(config.server);
  const { ca, insecureSkipTlsVerify, serverName } = config.tls;
  const base = {
    ...(ca === undefined ? {} : { ca }),
    rejectUnauthorized: insecureSkipTlsVerify !== true,
    ...(serverName === undefined ? {} : { servername: serverName }),
    timeout: timeouts.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelay: 30_000,
  };
  let current: { cert?: string; key?: string; connect: buildConnector.connector } | undefined;
  const connect: buildConnector.connector = (options, callback) => {
    const { cert, key } = clientCertificate();
    if (current === undefined || current.cert !== cert || current.key !== key) {
      const pair = cert === undefined || key === undefined ? {} : { cert, key };
      current = { ...pair, connect: undici().buildConnector({ ...base, ...pair }) };
    }
    current.connect(options, callback);
  };
  const { Pool: UndiciPool } = undici();
  return new UndiciPool(url.origin, {
    connect,
    connections: null,
    pipelining: 1,
    keepAliveTimeout: timeouts.keepAliveMs,
    keepAliveMaxTimeout: Math.max(timeouts.keepAliveMs, 600_000),
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}
