import { createRequire } from 'node:module';
import type { Clock } from '@converge/runtime';
import type * as Undici from 'undici';
import type { Dispatcher, Pool } from 'undici';
import type { JsonObject, Webhook, WebhookService } from './types.ts';

/** Where a webhook is reached: its URL and the name its certificate must carry. */
export interface WebhookEndpoint {
  readonly url: string;
  /** The TLS server name checked against the certificate (`NAME.NAMESPACE.svc` for services). */
  readonly serverName?: string;
}

/**
 * A webhook server in this process answering a call without TLS or HTTP: JSON text in, the status
 * and JSON text an HTTPS answer would carry out. `signal` aborts when the call times out.
 */
export type LocalWebhookDispatch = (
  pathWithQuery: string,
  body: string,
  signal: AbortSignal,
) => Promise<{ readonly status: number; readonly body: string }>;

/**
 * Webhook servers in this process (`converge dev` runs an operator's in the API server's process):
 * asked, for each call, with its URL, the configuration's CA bundle (PEM) and the name its
 * certificate must carry, for a {@link LocalWebhookDispatch} — only when they serve that URL with a
 * certificate that bundle trusts for that name, so a call that would fail over HTTPS still does.
 */
export interface LocalWebhooks {
  dispatcher(
    url: URL,
    caPem: string | undefined,
    serverName: string | undefined,
  ): LocalWebhookDispatch | undefined;
}

/** Maps `clientConfig.service` to the base URL that reaches it (path and query are added). */
export type WebhookServiceResolver = (service: WebhookService) => string;

/** The default: `https://127.0.0.1:PORT` (port 443 unless set), as `converge dev` runs operators locally. */
export function localServiceResolver(service: WebhookService): string {
  return `https://127.0.0.1:${service.port ?? 443}`;
}

/** The endpoint of a webhook: its `url`, or its service through `resolve`, with `?timeout=Ns`. */
export function endpointOf(
  webhook: Webhook,
  resolve: WebhookServiceResolver,
  timeoutSeconds: number,
): WebhookEndpoint {
  const { url, service } = webhook.clientConfig;
  let target: URL;
  let serverName: string | undefined;
  if (url !== undefined) target = new URL(url);
  else if (service !== undefined) {
    target = new URL(resolve(service));
    const path = service.path ?? '';
    target.pathname = `${target.pathname.replace(/\/$/, '')}${path.startsWith('/') || path === '' ? path : `/${path}`}`;
    serverName = `${service.name}.${service.namespace}.svc`;
  } else throw new Error('webhook has neither clientConfig.url nor clientConfig.service');
  target.search = `timeout=${timeoutSeconds}s`;
  return serverName === undefined ? { url: target.toString() } : { url: target.toString(), serverName };
}

/** The largest response body read from a webhook. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Go's wording of a network error, so messages read as kube-apiserver's. */
function goError(error: NodeJS.ErrnoException, target: URL): string {
  const address = `${target.hostname.replace(/^\[|\]$/g, '')}:${target.port || '443'}`;
  if (error.code === 'ECONNREFUSED') return `dial tcp ${address}: connect: connection refused`;
  if (error.code === 'ECONNRESET') return `read tcp ${address}: read: connection reset by peer`;
  return error.message;
}

/** Keep-alive connection pools by origin, trust (CA bundle) and server name, at most this many. */
const MAX_POOLS = 64;
const pools = new Map<string, Pool>();

let undici: typeof Undici | undefined;
/**
 * undici's Pool, loaded with the first webhook call rather than with the server: ~110 modules and
 * ~0.2 s of CPU that every `converge dev` and `converge serve` start paid, most with no webhook.
 */
function undiciPool(): typeof Undici.Pool {
  undici ??= createRequire(import.meta.url)('undici') as typeof Undici;
  return undici.Pool;
}

/**
 * A keep-alive pool to `origin` trusting `ca` (the system roots when undefined) and checking the
 * certificate against `serverName` (the URL's host when undefined): calls reuse their TLS
 * connections, as kube-apiserver's clients do, instead of a handshake per call (which made two
 * webhooks cut creates to ~6 % in bench:admission). undici rather than `node:https`: a call costs
 * the API server about half the CPU (no `ClientRequest` and agent queue per call). Idle
 * connections close after 30 s; the least recently used pool is closed past {@link MAX_POOLS}.
 */
function poolFor(key: string, origin: string, ca: string | undefined, serverName: string | undefined): Pool {
  let pool = pools.get(key);
  if (pool !== undefined) {
    pools.delete(key);
    pools.set(key, pool);
    return pool;
  }
  const UndiciPool = undiciPool();
  pool = new UndiciPool(origin, {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 30_000,
    // the caller's clock bounds the whole call (timeoutSeconds); undici's own timers stay off
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: {
      rejectUnauthorized: true,
      ...(ca === undefined ? {} : { ca }),
      ...(serverName === undefined ? {} : { servername: serverName }),
    },
  });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
    pools.delete(oldestKey);
    void oldest.destroy().catch(() => undefined);
  }
  return pool;
}

/**
 * Stops handing out `key`'s pool after a call timed out, and closes it once its other calls have
 * finished: its connections (the timed-out one, and any it opened meanwhile) are closed, as Go's
 * client closes the connection of a cancelled request, instead of lingering until idle.
 */
function retirePool(key: string): void {
  const pool = pools.get(key);
  if (pool === undefined) return;
  pools.delete(key);
  void pool.close().catch(() => undefined);
}

/** The CA bundle as PEM, decoded once per distinct base64 value. */
const decodedBundles = new Map<string, string>();

/** The CA bundle (base64) as PEM; undefined when empty. */
export function pemOf(caBundle: string | undefined): string | undefined {
  if (caBundle === undefined || caBundle === '') return undefined;
  let pem = decodedBundles.get(caBundle);
  if (pem === undefined) {
    pem = Buffer.from(caBundle, 'base64').toString('utf8');
    if (decodedBundles.size >= MAX_POOLS) decodedBundles.clear();
    decodedBundles.set(caBundle, pem);
  }
  return pem;
}

/** The socket-level error under an undici error (undici wraps some in its own classes). */
function rootCause(error: unknown): NodeJS.ErrnoException {
  let current = error as NodeJS.ErrnoException & { cause?: unknown };
  while (current?.code === undefined && current?.cause instanceof Error) {
    current = current.cause as NodeJS.ErrnoException & { cause?: unknown };
  }
  return current instanceof Error ? current : new Error(String(error));
}

/** A webhook's answer, over HTTPS or in process: its status checked, its body parsed (kube-apiserver's messages). */
function reviewOf(status: number, text: string): unknown {
  if (status < 200 || status > 299) {
    throw new Error(
      `failed to call webhook: the server responded with the status code ${status} but did not return more information`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`received invalid webhook response: ${(error as Error).message}`);
  }
}

/**
 * POSTs `body` to the endpoint over HTTPS, verifying with `caBundle` (base64 PEM; the system roots
 * when empty), and resolves with the parsed JSON response. Rejects with a message in Go's words
 * (`failed to call webhook: Post "URL": …`); after `timeoutMs`, `…: context deadline exceeded`.
 */
export async function postReview(
  endpoint: WebhookEndpoint,
  caBundle: string | undefined,
  body: JsonObject,
  timeoutMs: number,
  clock: Clock,
): Promise<unknown> {
  const target = new URL(endpoint.url);
  const post = `Post ${JSON.stringify(endpoint.url)}`;
  if (target.protocol !== 'https:')
    throw new Error(`failed to call webhook: ${post}: webhook URLs must use https`);
  const payload = JSON.stringify(body);
  const ca = pemOf(caBundle);
  const key = `${target.origin}\n${endpoint.serverName ?? ''}\n${ca ?? ''}`;
  const deadline = new AbortController();
  const timer = clock.setTimer(() => {
    deadline.abort();
    retirePool(key);
  }, timeoutMs);
  try {
    let response: Dispatcher.ResponseData;
    try {
      response = await poolFor(key, target.origin, ca, endpoint.serverName).request({
        method: 'POST',
        path: `${target.pathname}${target.search}`,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: payload,
        signal: deadline.signal,
      });
    } catch (error) {
      if (deadline.signal.aborted)
        throw new Error(`failed to call webhook: ${post}: context deadline exceeded`);
      throw new Error(`failed to call webhook: ${post}: ${goError(rootCause(error), target)}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          response.body.destroy();
          throw new Error(`failed to call webhook: ${post}: response body too large`);
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (deadline.signal.aborted)
        throw new Error(`failed to call webhook: ${post}: context deadline exceeded`);
      if (size > MAX_RESPONSE_BYTES) throw error;
      throw new Error(`failed to call webhook: ${post}: ${goError(rootCause(error), target)}`);
    }
    return reviewOf(response.statusCode, Buffer.concat(chunks).toString('utf8'));
  } finally {
    timer.cancel();
  }
}

/**
 * {@link postReview} answered in this process by `dispatch`: the same request body, status check,
 * parse, timeout and messages, without TLS or HTTP.
 */
export async function postReviewLocally(
  dispatch: LocalWebhookDispatch,
  endpoint: WebhookEndpoint,
  body: JsonObject,
  timeoutMs: number,
  clock: Clock,
): Promise<unknown> {
  const target = new URL(endpoint.url);
  const post = `Post ${JSON.stringify(endpoint.url)}`;
  const deadline = new AbortController();
  let expired: () => void = () => {};
  const late = new Promise<never>((_, reject) => {
    expired = () => reject(new Error(`failed to call webhook: ${post}: context deadline exceeded`));
  });
  const timer = clock.setTimer(() => {
    deadline.abort();
    expired();
  }, timeoutMs);
  try {
    const answer = await Promise.race([
      dispatch(`${target.pathname}${target.search}`, JSON.stringify(body), deadline.signal),
      late,
    ]);
    return reviewOf(answer.status, answer.body);
  } finally {
    timer.cancel();
    late.catch(() => {});
  }
}
