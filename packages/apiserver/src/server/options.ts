import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Clock,
  isLoopbackHost,
  type Logger,
  noopLogger,
  OptionsError,
  realClock,
} from '@converge/runtime';
import type { Store } from '@converge/store';
import type { LocalWebhooks, WebhookServiceResolver } from '../admission/index.ts';
import { defaultExtensions } from './default-extensions.ts';
import type { ApiServerExtensions } from './extensions.ts';
import { ensurePrivateDir, ensurePrivateFile, writePrivateFile } from './private-files.ts';

/**
 * The HTTP fault admin endpoint `/converge/faults` (in-process `server.faults` works either way).
 *
 * @example
 * const server = createApiServer({ faultAdmin: { tokenPath: '.converge/fault-admin-token' } });
 */
export interface FaultAdminOptions {
  /**
   * The bearer token the endpoint requires; never the API's token (which gets 403 there). Default:
   * random, kept in `<dataDir>/pki/fault-admin-token` when `dataDir` is set.
   */
  readonly token?: string;
  /** Also write the token to this file (mode 0600) once listening. */
  readonly tokenPath?: string;
}

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
  /**
   * Plain HTTP and no authentication, for debugging only (logged loudly). Only on a loopback
   * `host` (127.0.0.0/8, ::1, localhost) unless `insecureBindNonLoopback` is set. Default false.
   */
  readonly insecure?: boolean;
  /** Allow `insecure` on a host other than loopback: anyone who can reach it owns the API. Default false. */
  readonly insecureBindNonLoopback?: boolean;
  /**
   * Serve the fault admin endpoint `/converge/faults` with its own bearer token (`true`: a
   * generated one, see {@link ApiServer.faultAdminToken}). Default: not served (404);
   * `server.faults` in process is always available.
   */
  readonly faultAdmin?: boolean | FaultAdminOptions;
  /** Where state (store, certificates, token) survives restarts. Default: memory only. */
  readonly dataDir?: string;
  /**
   * Start with an empty store when the data dir's store log or snapshot is missing or emptied
   * (its leftovers are moved aside into `reinitialized-<time>/`) instead of refusing to start
   * with a StoreDataMissingError. Default false: data that went missing is never papered over.
   */
  readonly reinitializeStore?: boolean;
  /**
   * Create what kube-apiserver and kube-controller-manager create: the `kubernetes` Service with
   * its Endpoints and EndpointSlice, and in every namespace the `default` ServiceAccount and the
   * `kube-root-ca.crt` ConfigMap. Default true; false serves a store with only what clients wrote
   * (the system namespaces aside).
   */
  readonly clusterDefaults?: boolean;
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
  /**
   * Where admission webhooks with `clientConfig.service` are called: the base URL (`https://host:port`)
   * for a service; the service's `path` is appended and its certificate must name
   * `NAME.NAMESPACE.svc`. Default: `https://127.0.0.1:PORT` (the service's port, 443 unless set),
   * for operators running on this machine.
   */
  readonly webhookServiceResolver?: WebhookServiceResolver;
  /**
   * Webhook servers in this process (`converge dev` passes its own): an admission webhook call to a
   * URL one of them serves, under a CA bundle that trusts its certificate, is answered in process
   * without TLS or HTTP — the same review, answer, timeout and failures. Default: none.
   */
  readonly localWebhooks?: LocalWebhooks;
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
  readonly reinitializeStore: boolean;
  readonly clusterDefaults: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly kubeconfigPath: string | undefined;
  readonly extensions: ApiServerExtensions;
  readonly webhookServiceResolver: WebhookServiceResolver | undefined;
  readonly localWebhooks: LocalWebhooks | undefined;
  /** The fault admin endpoint's token and where to write it; undefined when it is not served. */
  readonly faultAdmin: { readonly token: string; readonly tokenPath: string | undefined } | undefined;
}

/**
 * A token kept in `<dataDir>/pki/<name>`, created if missing; the data dir, `pki` and the file are
 * made private (0700, 0700, 0600), with a warning when they were looser.
 */
function persistentToken(dataDir: string, name: string, logger: Logger): string {
  const dir = join(dataDir, 'pki');
  const path = join(dir, name);
  ensurePrivateDir(dir, logger);
  ensurePrivateFile(path, logger);
  try {
    const existing = readFileSync(path, 'utf8').trim();
    if (existing !== '') return existing;
  } catch {
    // created below
  }
  const token = randomBytes(32).toString('base64url');
  writePrivateFile(path, `${token}\n`);
  return token;
}

const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

function resolveFaultAdmin(
  option: ApiServerOptions['faultAdmin'],
  apiToken: string | undefined,
  dataDir: string | undefined,
  logger: Logger,
): ResolvedApiServerOptions['faultAdmin'] {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (typeof option !== 'object' || option === null))
    throw new OptionsError('faultAdmin', option, 'a boolean or { token?, tokenPath? }');
  const given = option === true ? {} : option;
  if (given.token !== undefined && (typeof given.token !== 'string' || !TOKEN_CHARACTERS.test(given.token))) {
    throw new OptionsError(
      'faultAdmin.token',
      '<redacted>',
      'a non-empty string of printable characters without spaces',
    );
  }
  if (given.token !== undefined && given.token === apiToken) {
    throw new OptionsError('faultAdmin.token', '<redacted>', 'a token other than the API token');
  }
  if (given.tokenPath !== undefined && (typeof given.tokenPath !== 'string' || given.tokenPath === ''))
    throw new OptionsError('faultAdmin.tokenPath', given.tokenPath, 'a file path');
  const token =
    given.token ??
    (dataDir === undefined
      ? randomBytes(32).toString('base64url')
      : persistentToken(dataDir, 'fault-admin-token', logger));
  return { token, tokenPath: given.tokenPath };
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
  if (token !== undefined && (typeof token !== 'string' || !TOKEN_CHARACTERS.test(token))) {
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
  if (insecure && options.insecureBindNonLoopback !== true && !isLoopbackHost(host)) {
    throw new OptionsError(
      'host',
      host,
      'a loopback address (127.0.0.1, ::1, localhost) when insecure (plain HTTP, no authentication), unless insecureBindNonLoopback is set',
    );
  }
  const logger = options.logger ?? noopLogger;
  // Before the store creates anything inside it: the data dir holds every secret the server keeps.
  if (dataDir !== undefined) ensurePrivateDir(dataDir, logger);
  const resolvedToken = insecure
    ? undefined
    : (token ??
      (dataDir === undefined
        ? randomBytes(32).toString('base64url')
        : persistentToken(dataDir, 'token', logger)));
  return {
    store: options.store,
    host,
    port,
    token: resolvedToken,
    tls: !insecure && options.tls !== false,
    insecure,
    dataDir,
    reinitializeStore: options.reinitializeStore === true,
    clusterDefaults: options.clusterDefaults !== false,
    clock: options.clock ?? realClock,
    logger,
    kubeconfigPath,
    extensions: { ...defaultExtensions(), ...options.extensions },
    webhookServiceResolver: options.webhookServiceResolver,
    localWebhooks: options.localWebhooks,
    faultAdmin: resolveFaultAdmin(options.faultAdmin, resolvedToken, dataDir, logger),
  };
}
