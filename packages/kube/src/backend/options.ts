import { type Clock, type Logger, noopLogger, OptionsError, realClock } from '@converge/runtime';
import type { KubeConfig } from '../config/index.ts';

/**
 * Options of a {@link KubeBackend}. Durations are milliseconds.
 *
 * @example
 * const backend = new KubeBackend({
 *   config: loadKubeconfig({ env: process.env }),
 *   fieldManager: 'website-operator',
 *   logger,
 * });
 */
export interface KubeBackendOptions {
  /** The cluster and credentials ({@link loadKubeconfig}, {@link inClusterConfig}, or by hand). */
  readonly config: KubeConfig;
  /** The field manager of writes (server-side apply needs one). Default `converge`. */
  readonly fieldManager?: string;
  /** Time, timers and randomness (retry waits, watch timeouts, stall detection). Default `realClock`. */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** A name for logs. Default `kube:<server>`. */
  readonly name?: string;
  /** Default `converge/0.1.0 (<platform>/<arch>) node/<version>`. */
  readonly userAgent?: string;
  /** Response headers must arrive within this; non-watch bodies must not pause longer. Default 60 000. */
  readonly requestTimeoutMs?: number;
  /** TCP and TLS connect timeout. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Idle keep-alive connections are kept this long (unless the server says less). Default 60 000. */
  readonly keepAliveMs?: number;
  /** An exec credential plugin must finish within this. Default 60 000. */
  readonly execTimeoutMs?: number;
  /**
   * Retries of a request answered 429 (or 5xx with Retry-After), each after the Retry-After the
   * server asked for (1 s when absent). Default 3; 0 surfaces `TooManyRequestsError` at once.
   */
  readonly maxRetries?: number;
  /** A Retry-After longer than this is not waited for: the error (with `retryAfterSeconds`) is thrown. Default 30 000. */
  readonly maxRetryAfterMs?: number;
  /** How often the server sends watch bookmarks (kube-apiserver: about every 60 s). Default 60 000. */
  readonly watchBookmarkIntervalMs?: number;
  /**
   * A watch that asked for bookmarks and received no byte for this many bookmark intervals is
   * closed as stalled (a retryable `WatchStalledError`). Default 3.
   */
  readonly watchStallFactor?: number;
  /** The longest watch line (one event) and list item accepted. Default 16 MiB. */
  readonly maxWatchLineBytes?: number;
  /** The largest non-list response body accepted. Default 64 MiB. */
  readonly maxResponseBytes?: number;
}

/** {@link KubeBackendOptions} validated, with defaults. */
export interface ResolvedKubeBackendOptions {
  readonly config: KubeConfig;
  readonly fieldManager: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly name: string;
  readonly userAgent: string;
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly execTimeoutMs: number;
  readonly maxRetries: number;
  readonly maxRetryAfterMs: number;
  readonly watchBookmarkIntervalMs: number;
  readonly watchStallFactor: number;
  readonly maxWatchLineBytes: number;
  readonly maxResponseBytes: number;
}

function positive(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a finite number > 0');
  }
  return value;
}

function count(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new OptionsError(field, value, 'an integer >= 0');
  }
  return value;
}

function checkConfig(config: KubeConfig): KubeConfig {
  if (typeof config !== 'object' || config === null) {
    throw new OptionsError('config', config, 'a KubeConfig (loadKubeconfig(), inClusterConfig())');
  }
  let url: URL | undefined;
  try {
    url = new URL(config.server);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new OptionsError('config.server', config.server, 'an http(s) URL');
  }
  if (typeof config.namespace !== 'string' || config.namespace === '') {
    throw new OptionsError('config.namespace', config.namespace, 'a namespace name');
  }
  if (typeof config.tls !== 'object' || config.tls === null) {
    throw new OptionsError('config.tls', config.tls, 'a KubeTlsConfig object');
  }
  if ((config.tls.cert === undefined) !== (config.tls.key === undefined)) {
    throw new OptionsError('config.tls.key', '<redacted>', 'a client key and certificate set together');
  }
  const auth = config.auth as { type?: unknown } | undefined;
  if (
    typeof auth !== 'object' ||
    auth === null ||
    !['none', 'token', 'tokenFile', 'basic', 'exec'].includes(String(auth.type))
  ) {
    throw new OptionsError('config.auth.type', auth?.type, 'none, token, tokenFile, basic or exec');
  }
  return config;
}

/**
 * Validates options (an {@link OptionsError} names the field) and fills in defaults.
 *
 * @example
 * const options = resolveKubeBackendOptions({ config }); // options.maxRetries === 3
 */
export function resolveKubeBackendOptions(options: KubeBackendOptions): ResolvedKubeBackendOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const config = checkConfig(options.config);
  const fieldManager = options.fieldManager ?? 'converge';
  if (typeof fieldManager !== 'string' || fieldManager === '' || fieldManager.length > 128) {
    throw new OptionsError('fieldManager', fieldManager, 'a non-empty string of at most 128 characters');
  }
  const userAgent =
    options.userAgent ?? `converge/0.1.0 (${process.platform}/${process.arch}) node/${process.version}`;
  if (typeof userAgent !== 'string' || userAgent === '' || /[\r\n]/.test(userAgent)) {
    throw new OptionsError('userAgent', userAgent, 'a one-line string');
  }
  return {
    config,
    fieldManager,
    clock: options.clock ?? realClock,
    logger: options.logger ?? noopLogger,
    name: options.name ?? `kube:${config.server}`,
    userAgent,
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs, 60_000),
    connectTimeoutMs: positive('connectTimeoutMs', options.connectTimeoutMs, 10_000),
    keepAliveMs: positive('keepAliveMs', options.keepAliveMs, 60_000),
    execTimeoutMs: positive('execTimeoutMs', options.execTimeoutMs, 60_000),
    maxRetries: count('maxRetries', options.maxRetries, 3),
    maxRetryAfterMs: count('maxRetryAfterMs', options.maxRetryAfterMs, 30_000),
    watchBookmarkIntervalMs: positive('watchBookmarkIntervalMs', options.watchBookmarkIntervalMs, 60_000),
    watchStallFactor: positive('watchStallFactor', options.watchStallFactor, 3),
    maxWatchLineBytes: positive('maxWatchLineBytes', options.maxWatchLineBytes, 16 * 1024 * 1024),
    maxResponseBytes: positive('maxResponseBytes', options.maxResponseBytes, 64 * 1024 * 1024),
  };
}
