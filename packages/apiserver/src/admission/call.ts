import { Agent, request } from 'node:https';
import type { Clock } from '@converge/runtime';
import type { JsonObject, Webhook, WebhookService } from './types.ts';

/** Where a webhook is reached: its URL and the name its certificate must carry. */
export interface WebhookEndpoint {
  readonly url: string;
  /** The TLS server name checked against the certificate (`NAME.NAMESPACE.svc` for services). */
  readonly serverName?: string;
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

/** Keep-alive agents by trust (CA bundle) and server name, at most this many. */
const MAX_AGENTS = 64;
const agents = new Map<string, Agent>();

/**
 * A keep-alive agent for webhooks trusted by `ca` and named `serverName`: calls reuse their TLS
 * connections, as kube-apiserver's clients do, instead of a handshake per call (which made two
 * webhooks cut creates to ~6 % in bench:admission). Idle sockets are unref'd by Node and closed
 * after 30 s; the least recently used agent is destroyed past {@link MAX_AGENTS}.
 */
function agentFor(ca: string | undefined, serverName: string | undefined): Agent {
  const key = `${serverName ?? ''}\n${ca ?? ''}`;
  let agent = agents.get(key);
  if (agent !== undefined) {
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  agent = new Agent({
    keepAlive: true,
    timeout: 30_000,
    ...(ca === undefined ? {} : { ca }),
    ...(serverName === undefined ? {} : { servername: serverName }),
  });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

/**
 * POSTs `body` to the endpoint over HTTPS, verifying with `caBundle` (base64 PEM; the system roots
 * when empty), and resolves with the parsed JSON response. Rejects with a message in Go's words
 * (`failed to call webhook: Post "URL": …`); after `timeoutMs`, `…: context deadline exceeded`.
 */
export function postReview(
  endpoint: WebhookEndpoint,
  caBundle: string | undefined,
  body: JsonObject,
  timeoutMs: number,
  clock: Clock,
): Promise<unknown> {
  const target = new URL(endpoint.url);
  const post = `Post ${JSON.stringify(endpoint.url)}`;
  return new Promise((resolve, reject) => {
    if (target.protocol !== 'https:') {
      reject(new Error(`failed to call webhook: ${post}: webhook URLs must use https`));
      return;
    }
    const payload = Buffer.from(JSON.stringify(body));
    const ca =
      caBundle === undefined || caBundle === ''
        ? undefined
        : Buffer.from(caBundle, 'base64').toString('utf8');
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(payload.length),
        },
        agent: agentFor(ca, endpoint.serverName),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new Error('response body too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          timer.cancel();
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) {
            reject(
              new Error(
                `failed to call webhook: the server responded with the status code ${code} but did not return more information`,
              ),
            );
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch (error) {
            reject(new Error(`received invalid webhook response: ${(error as Error).message}`));
          }
        });
        res.on('error', () => undefined);
      },
    );
    const timer = clock.setTimer(
      () => req.destroy(Object.assign(new Error('context deadline exceeded'), { code: 'ETIMEOUT' })),
      timeoutMs,
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      timer.cancel();
      reject(new Error(`failed to call webhook: ${post}: ${goError(error, target)}`));
    });
    req.end(payload);
  });
}
