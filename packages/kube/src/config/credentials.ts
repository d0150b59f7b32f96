import { readFile } from 'node:fs/promises';
import type { Clock } from '@converge/runtime';
import { ExecCredentialCache } from './exec-credential.ts';
import type { KubeConfig } from './kube-config.ts';

/** What one request authenticates with. */
export interface Credentials {
  /** The `Authorization` header value, if any. */
  readonly authorization?: string;
  /** A client certificate and key (PEM) from an exec plugin, for new TLS connections. */
  readonly cert?: string;
  readonly key?: string;
}

/**
 * Where requests get their credentials: fixed (token, basic, client certificate only), a token file
 * re-read every minute (rotated service-account tokens), or an exec plugin cached until expiry.
 */
export interface CredentialSource {
  get(): Promise<Credentials>;
  /** After a 401: drops cached credentials; true when fetching them again may help. */
  invalidate(): boolean;
  /** The client certificate for new connections (exec plugins may rotate it). */
  clientCertificate(): { readonly cert?: string; readonly key?: string };
}

/** client-go re-reads token files every minute (bound service-account tokens rotate hourly). */
const TOKEN_FILE_REFRESH_MS = 60_000;

class FixedCredentials implements CredentialSource {
  readonly #credentials: Credentials;
  readonly #tls: { readonly cert?: string; readonly key?: string };
  constructor(authorization: string | undefined, tls: { readonly cert?: string; readonly key?: string }) {
    this.#credentials = authorization === undefined ? {} : { authorization };
    this.#tls = tls;
  }
  get(): Promise<Credentials> {
    return Promise.resolve(this.#credentials);
  }
  invalidate(): boolean {
    return false;
  }
  clientCertificate(): { readonly cert?: string; readonly key?: string } {
    return this.#tls;
  }
}

class TokenFileCredentials implements CredentialSource {
  readonly #path: string;
  readonly #clock: Clock;
  readonly #tls: { readonly cert?: string; readonly key?: string };
  #token: { value: string; readAt: number } | undefined;

  constructor(path: string, clock: Clock, tls: { readonly cert?: string; readonly key?: string }) {
    this.#path = path;
    this.#clock = clock;
    this.#tls = tls;
  }

  async get(): Promise<Credentials> {
    const now = this.#clock.now();
    if (this.#token === undefined || now - this.#token.readAt >= TOKEN_FILE_REFRESH_MS) {
      try {
        this.#token = { value: (await readFile(this.#path, 'utf8')).trim(), readAt: now };
      } catch (error) {
        // client-go keeps using the last token it read when a re-read fails.
        if (this.#token === undefined) throw error;
      }
    }
    return { authorization: `Bearer ${this.#token.value}` };
  }

  invalidate(): boolean {
    this.#token = undefined;
    return true;
  }

  clientCertificate(): { readonly cert?: string; readonly key?: string } {
    return this.#tls;
  }
}

class ExecCredentials implements CredentialSource {
  readonly #cache: ExecCredentialCache;
  readonly #tls: { readonly cert?: string; readonly key?: string };

  constructor(cache: ExecCredentialCache, tls: { readonly cert?: string; readonly key?: string }) {
    this.#cache = cache;
    this.#tls = tls;
  }

  async get(): Promise<Credentials> {
    const credential = await this.#cache.get();
    return {
      ...(credential.token === undefined ? {} : { authorization: `Bearer ${credential.token}` }),
      ...(credential.clientCertificateData === undefined
        ? {}
        : { cert: credential.clientCertificateData, key: credential.clientKeyData as string }),
    };
  }

  invalidate(): boolean {
    this.#cache.invalidate();
    return true;
  }

  clientCertificate(): { readonly cert?: string; readonly key?: string } {
    const current = this.#cache.current;
    if (current?.clientCertificateData !== undefined && current.clientKeyData !== undefined) {
      return { cert: current.clientCertificateData, key: current.clientKeyData };
    }
    return this.#tls;
  }
}

/**
 * The credential source of a config.
 *
 * @example
 * const credentials = credentialSource(config, realClock, 60_000);
 * const { authorization } = await credentials.get();
 */
export function credentialSource(config: KubeConfig, clock: Clock, execTimeoutMs: number): CredentialSource {
  const { cert, key } = config.tls;
  const tls = cert === undefined || key === undefined ? {} : { cert, key };
  const { auth } = config;
  switch (auth.type) {
    case 'none':
      return new FixedCredentials(undefined, tls);
    case 'token':
      return new FixedCredentials(`Bearer ${auth.token}`, tls);
    case 'basic':
      return new FixedCredentials(
        `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`,
        tls,
      );
    case 'tokenFile':
      return new TokenFileCredentials(auth.path, clock, tls);
    case 'exec': {
      const cluster = { server: config.server, tls: config.tls };
      return new ExecCredentials(new ExecCredentialCache(auth.exec, cluster, clock, execTimeoutMs), tls);
    }
  }
}
