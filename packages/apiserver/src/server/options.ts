import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Clock, type Logger, noopLogger, OptionsError, realClock } from '@converge/runtime';
import type { Store } from '@converge/store';
import { defaultExtensions } from './default-extensions.ts';
import type { ApiServerExtensions } from './extensions.ts';

/**
 * Options of {@link createApiServer}.
 *
 * @example
 * const server = createApiServer({ dataDir: '.converge', kubeconfigPath: '.converge/kubeconfig' });
 * const { url } = await server.listen();
 */
export interface ApiServerOptions {
  /** The store served. Default: a new Store (persistent in `<dataDir>/store` when `dataDir` is set). */
  readonly store?: Store;
  /** Interface to bind. Default `127.0.0.1`. */
  readonly host?: string;
  /** Port to bind; 0 picks a free one. Default 0. */
  readonly port?: number;
  /** The bearer token clients must send. Default: random (kept in `<dataDir>/pki/token`). */
  readonly token?: string;
  /** Serve HTTPS with a generated CA and serving certificate (kept in `<dataDir>/pki`). Default true. */
  readonly tls?: boolean;
  /** Plain HTTP and no authentication, for debugging only (logged loudly). Default false. */
  readonly insecure?: boolean;
  /** Where state (store, certificates, token) survives restarts. Default: memory only. */
  readonly dataDir?: string;
  /** Time and randomness (watch timeouts, generated names, certificates). Default `realClock`. */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Write a kubeconfig here once listening (context `converge`, namespace `default`). */
  readonly kubeconfigPath?: string;
  /**
   * Hooks into the CRD, patch, table and protobuf modules; each overrides the built-in one (strategic
   * merge patch, server-side apply, managed fields and protobuf bodies are installed by default).
   */
  readonly extensions?: ApiServerExtensions;
}

/** {@link ApiServerOptions} with defaults applied. */
export interface ResolvedApiServerOptions {
  readonly store: Store | undefined;
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly tls: boolean;
  readonly insecure: boolean;
  readonly dataDir: string | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly kubeconfigPath: string | undefined;
  readonly extensions: ApiServerExtensions;
}

/** The token kept in `<dataDir>/pki/token`, created if missing. */
function persistentToken(dataDir: string): string {
  const dir = join(dataDir, 'pki');
  const path = join(dir, 'token');
  try {
    const existing = readFileSync(path, 'utf8').trim();
    if (existing !== '') return existing;
  } catch {
    // created below
  }
  const token = randomBytes(32).toString('base64url');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Validates options (an {@link OptionsError} names the field) and applies defaults. */
export function resolveApiServerOptions(options: ApiServerOptions = {}): ResolvedApiServerOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const { host = '127.0.0.1', port = 0, token, dataDir, kubeconfigPath } = options;
  if (typeof host !== 'string' || host === '')
    throw new OptionsError('host', host, 'a host name or IP address');
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535)
    throw new OptionsError('port', port, 'an integer in 0..65535');
  if (token !== undefined && (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))) {
    throw new OptionsError(
      'token',
      '<redacted>',
      'a non-empty string of printable characters without spaces',
    );
  }
  if (dataDir !== undefined && (typeof dataDir !== 'string' || dataDir === ''))
    throw new OptionsError('dataDir', dataDir, 'a directory path');
  if (kubeconfigPath !== undefined && (typeof kubeconfigPath !== 'string' || kubeconfigPath === '')) {
    throw new OptionsError('kubeconfigPath', kubeconfigPath, 'a file path');
  }
  const insecure = options.insecure === true;
  const resolvedToken = insecure
    ? undefined
    : (token ?? (dataDir === undefined ? randomBytes(32).toString('base64url') : persistentToken(dataDir)));
  return {
    store: options.store,
    host,
    port,
    token: resolvedToken,
    tls: !insecure && options.tls !== false,
    insecure,
    dataDir,
    clock: options.clock ?? realClock,
    logger: options.logger ?? noopLogger,
    kubeconfigPath,
    extensions: { ...defaultExtensions(), ...options.extensions },
  };
}
