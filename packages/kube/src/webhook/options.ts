import { type Clock, type Logger, noopLogger, OptionsError, realClock } from '@converge/runtime';
import type { WebhookTlsOptions } from './serving-certificate.ts';

/**
 * Options of a {@link WebhookServer}. Durations are milliseconds, sizes bytes.
 *
 * @example
 * new WebhookServer({ tls: { certFile: '/certs/tls.crt', keyFile: '/certs/tls.key' } }); // :9443
 * new WebhookServer({ host: '127.0.0.1', port: 0, tls: { generate: {} } }); // tests
 */
export interface WebhookServerOptions {
  /** The certificate: files reloaded on change, generated for development, or PEM in memory. */
  readonly tls: WebhookTlsOptions;
  /** The address to bind. Default: every interface (IPv6 and IPv4), as in a pod. */
  readonly host?: string;
  /** The port; 0 picks a free one (read it from `listening()`). Default 9443, controller-runtime's. */
  readonly port?: number;
  /**
   * The longest a handler or converter may take; past it the request is answered (admission: a
   * denial with code 504; conversion: `Failure`) and the handler's `signal` aborts. A shorter
   * `?timeout=` from the API server wins. Default 10 000, the API server's default `timeoutSeconds`.
   */
  readonly timeoutMs?: number;
  /**
   * The largest `AdmissionReview` body accepted (413 past it). Default 7 MiB, controller-runtime's:
   * an object and its old version of at most 3 MiB each (the API server's request limit) and 1 MiB
   * for the rest of the review.
   */
  readonly maxAdmissionBodyBytes?: number;
  /**
   * The largest `ConversionReview` body accepted. Default 64 MiB: the API server converts a whole
   * list page in one review, so these are larger than admission reviews.
   */
  readonly maxConversionBodyBytes?: number;
  /** How long stopping waits for requests in flight before cutting connections. Default 5 000. */
  readonly shutdownTimeoutMs?: number;
  /** How often certificate files are re-read even when `stat` shows no change. Default 10 000. */
  readonly certificateCheckIntervalMs?: number;
  readonly logger?: Logger;
  /** Time for handler timeouts, the shutdown grace and certificate checks. Default `realClock`. */
  readonly clock?: Clock;
}

export interface ResolvedWebhookServerOptions {
  readonly tls: WebhookTlsOptions;
  readonly host: string | undefined;
  readonly port: number;
  readonly timeoutMs: number;
  readonly maxAdmissionBodyBytes: number;
  readonly maxConversionBodyBytes: number;
  readonly shutdownTimeoutMs: number;
  readonly certificateCheckIntervalMs: number;
  readonly logger: Logger;
  readonly clock: Clock;
}

const MIB = 1024 * 1024;

function positive(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a finite number > 0');
  }
  return value;
}

function checkTls(tls: WebhookTlsOptions | undefined): WebhookTlsOptions {
  const expected = '{ certFile, keyFile }, { generate: { hosts } } or { cert, key }';
  if (typeof tls !== 'object' || tls === null) throw new OptionsError('tls', tls, expected);
  if ('certFile' in tls || 'keyFile' in tls) {
    const files = tls as { certFile?: unknown; keyFile?: unknown };
    for (const field of ['certFile', 'keyFile'] as const) {
      if (typeof files[field] !== 'string' || files[field] === '') {
        throw new OptionsError(`tls.${field}`, files[field], 'a file path');
      }
    }
    return tls;
  }
  if ('generate' in tls) {
    if (typeof tls.generate !== 'object' || tls.generate === null) {
      throw new OptionsError('tls.generate', tls.generate, 'an object ({} for localhost)');
    }
    return tls;
  }
  if ('cert' in tls && typeof tls.cert === 'string' && 'key' in tls && typeof tls.key === 'string')
    return tls;
  throw new OptionsError('tls', tls, expected);
}

/** Validates options (an `OptionsError` names the field) and fills in defaults. */
export function resolveWebhookServerOptions(options: WebhookServerOptions): ResolvedWebhookServerOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const port = options.port ?? 9443;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new OptionsError('port', port, 'an integer from 0 to 65535');
  }
  if (options.host !== undefined && (typeof options.host !== 'string' || options.host === '')) {
    throw new OptionsError('host', options.host, 'a host name or IP address');
  }
  return {
    tls: checkTls(options.tls),
    host: options.host,
    port,
    timeoutMs: positive('timeoutMs', options.timeoutMs, 10_000),
    maxAdmissionBodyBytes: positive('maxAdmissionBodyBytes', options.maxAdmissionBodyBytes, 7 * MIB),
    maxConversionBodyBytes: positive('maxConversionBodyBytes', options.maxConversionBodyBytes, 64 * MIB),
    shutdownTimeoutMs: positive('shutdownTimeoutMs', options.shutdownTimeoutMs, 5_000),
    certificateCheckIntervalMs: positive(
      'certificateCheckIntervalMs',
      options.certificateCheckIntervalMs,
      10_000,
    ),
    logger: options.logger ?? noopLogger,
    clock: options.clock ?? realClock,
  };
}
