import { spawn } from 'node:child_process';
import type { Clock } from '@converge/runtime';
import { ExecCredentialError } from '../errors.ts';
import type { ExecConfig, KubeTlsConfig } from './kube-config.ts';

/** What an exec plugin returned, cached until `expiresAt`. */
export interface ExecCredential {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  /** Epoch ms; undefined: valid until the server rejects it (401). */
  readonly expiresAt?: number;
}

/** The cluster an exec plugin is told about with `provideClusterInfo`. */
export interface ExecClusterInfo {
  readonly server: string;
  readonly tls: KubeTlsConfig;
}

const MAX_STDOUT_BYTES = 1024 * 1024;
const MAX_STDERR_CHARS = 2048;
/** Refresh this long before the credential expires, so no request carries an expired token. */
const EXPIRY_SKEW_MS = 10_000;

function execInfo(exec: ExecConfig, cluster: ExecClusterInfo): string {
  const spec: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo === true) {
    const { ca, insecureSkipTlsVerify, serverName } = cluster.tls;
    spec.cluster = {
      server: cluster.server,
      ...(ca === undefined ? {} : { 'certificate-authority-data': Buffer.from(ca).toString('base64') }),
      ...(insecureSkipTlsVerify === true ? { 'insecure-skip-tls-verify': true } : {}),
      ...(serverName === undefined ? {} : { 'tls-server-name': serverName }),
    };
  }
  return JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec });
}

/**
 * Checks the plugin's stdout: an ExecCredential of the asked version with a token or a certificate pair.
 *
 * @example
 * parseExecCredential(exec, '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}');
 */
export function parseExecCredential(exec: ExecConfig, stdout: string): ExecCredential {
  const fail = (problem: string): ExecCredentialError => new ExecCredentialError(exec.command, problem);
  let output: unknown;
  try {
    output = JSON.parse(stdout);
  } catch {
    throw fail(`printed no JSON ExecCredential on stdout (got ${JSON.stringify(stdout.slice(0, 200))})`);
  }
  const o = output as { apiVersion?: unknown; kind?: unknown; status?: unknown } | null;
  if (typeof o !== 'object' || o === null || o.kind !== 'ExecCredential')
    throw fail('printed JSON that is not an ExecCredential');
  if (o.apiVersion !== exec.apiVersion) {
    throw fail(`printed apiVersion ${String(o.apiVersion)}, but ${exec.apiVersion} was asked for`);
  }
  const status = o.status as Record<string, unknown> | undefined;
  if (typeof status !== 'object' || status === null) throw fail('printed an ExecCredential without status');
  const str = (key: string): string | undefined => {
    const value = status[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw fail(`status.${key} must be a string`);
    return value;
  };
  const token = str('token');
  const cert = str('clientCertificateData');
  const key = str('clientKeyData');
  if ((cert === undefined) !== (key === undefined))
    throw fail('status must carry clientCertificateData and clientKeyData together');
  if (token === undefined && cert === undefined)
    throw fail('status carries neither a token nor a client certificate');
  const expiration = str('expirationTimestamp');
  const expiresAt = expiration === undefined ? undefined : Date.parse(expiration);
  if (expiresAt !== undefined && Number.isNaN(expiresAt))
    throw fail(`status.expirationTimestamp is not a time: ${expiration}`);
  return {
    ...(token === undefined ? {} : { token }),
    ...(cert === undefined || key === undefined ? {} : { clientCertificateData: cert, clientKeyData: key }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/**
 * Runs the plugin once: non-interactive, stdin closed, bounded output and time.
 *
 * @example
 * const credential = await runExecPlugin(exec, { server, tls }, 60_000);
 */
export function runExecPlugin(
  exec: ExecConfig,
  cluster: ExecClusterInfo,
  timeoutMs: number,
): Promise<ExecCredential> {
  const fail = (problem: string, cause?: unknown): ExecCredentialError =>
    new ExecCredentialError(exec.command, problem, cause === undefined ? undefined : { cause });
  if (exec.interactiveMode === 'Always') {
    return Promise.reject(
      fail('interactiveMode is Always, but Converge runs exec plugins without a terminal'),
    );
  }
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: execInfo(exec, cluster) };
  for (const { name, value } of exec.env ?? []) env[name] = value;
  return new Promise<ExecCredential>((resolve, reject) => {
    const child = spawn(exec.command, [...(exec.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let settled = false;
    const finish = (error: Error | undefined, value?: ExecCredential): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined) resolve(value as ExecCredential);
      else reject(error);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(fail(`did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) {
        child.kill('SIGKILL');
        finish(fail(`printed more than ${MAX_STDOUT_BYTES} bytes`));
      } else stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      const hint = exec.installHint === undefined ? '' : ` (${exec.installHint.trim()})`;
      finish(fail(`cannot be started: ${error.message}${hint}`, error));
    });
    child.on('close', (code, signal) => {
      if (code !== 0) {
        const why = code === null ? `was killed by ${String(signal)}` : `exited with code ${code}`;
        const err = stderr.trim().slice(0, MAX_STDERR_CHARS);
        finish(fail(`${why}${err === '' ? '' : `: ${err}`}`));
        return;
      }
      try {
        finish(undefined, parseExecCredential(exec, Buffer.concat(stdout).toString('utf8')));
      } catch (error) {
        finish(error as Error);
      }
    });
  });
}

/**
 * Credentials from an exec plugin, as client-go's exec authenticator: the plugin runs on first use,
 * its credential is cached until `expirationTimestamp` (10 s early) or until {@link invalidate} (a
 * 401), and concurrent callers share one run.
 *
 * @example
 * const cache = new ExecCredentialCache(exec, { server, tls }, realClock, 60_000);
 * const { token } = await cache.get(); // runs the plugin once, then reuses its credential until it expires
 */
export class ExecCredentialCache {
  readonly #exec: ExecConfig;
  readonly #cluster: ExecClusterInfo;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  #cached: ExecCredential | undefined;
  #running: Promise<ExecCredential> | undefined;
  #runs = 0;

  constructor(exec: ExecConfig, cluster: ExecClusterInfo, clock: Clock, timeoutMs: number) {
    this.#exec = exec;
    this.#cluster = cluster;
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
  }

  /** How many times the plugin ran. */
  get runs(): number {
    return this.#runs;
  }

  /** The last credential obtained, even if expired (for the TLS client certificate). */
  get current(): ExecCredential | undefined {
    return this.#cached;
  }

  /** A valid credential: the cached one, or a fresh run of the plugin. */
  get(): Promise<ExecCredential> {
    const cached = this.#cached;
    if (
      cached !== undefined &&
      (cached.expiresAt === undefined || this.#clock.now() < cached.expiresAt - EXPIRY_SKEW_MS)
    ) {
      return Promise.resolve(cached);
    }
    if (this.#running === undefined) {
      this.#runs++;
      this.#running = runExecPlugin(this.#exec, this.#cluster, this.#timeoutMs)
        .then((credential) => {
          this.#cached = credential;
          return credential;
        })
        .finally(() => {
          this.#running = undefined;
        });
    }
    return this.#running;
  }

  /** Forgets the cached credential (after a 401), so the next request runs the plugin again. */
  invalidate(): void {
    this.#cached = undefined;
  }
}
