import { connect, type PeerCertificate } from 'node:tls';
import { MemoryLogger } from '@converge/runtime';
import { Agent, request } from 'undici';
import type { WebhookServerOptions } from './options.ts';
import { WebhookServer } from './webhook-server.ts';

/** A running server on 127.0.0.1 and an HTTPS client trusting its CA. */
export interface RunningServer {
  readonly server: WebhookServer;
  readonly url: string;
  readonly ca: string;
  readonly logger: MemoryLogger;
  /** POSTs `body` (JSON-encoded unless a string or Buffer) to `path`. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Stops the server, waits for `start` to resolve, then closes the client. */
  stop(): Promise<void>;
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: unknown;
}

/** Starts a server with a generated certificate (unless `tls` is given) and registers handlers. */
export async function runServer(
  register: (server: WebhookServer) => void,
  options: Partial<WebhookServerOptions> = {},
  ca?: string,
): Promise<RunningServer> {
  const logger = new MemoryLogger();
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1', 'localhost'] } },
    logger,
    ...options,
  });
  register(server);
  const controller = new AbortController();
  const started = server.start(controller.signal);
  started.catch(() => {});
  const { url } = await server.listening();
  const trusted = ca ?? server.caBundle;
  if (trusted === undefined) throw new Error('no CA to trust: pass one');
  const agent = new Agent({ connect: { ca: trusted }, headersTimeout: 20_000, bodyTimeout: 20_000 });
  return {
    server,
    url,
    ca: trusted,
    logger,
    async post(path, body, headers = {}) {
      const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const answer = await request(`${url}${path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', ...headers },
        body: payload,
      });
      const text = await answer.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: answer.statusCode, headers: answer.headers, text, json };
    },
    async stop() {
      controller.abort();
      try {
        await started;
      } finally {
        await agent.close();
      }
    },
  };
}

/** An `AdmissionReview` request body. */
export function admissionReview(
  request: Record<string, unknown>,
  apiVersion = 'admission.k8s.io/v1',
): Record<string, unknown> {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: 'b4a3f1d2-0000-4000-8000-000000000001',
      kind: { group: 'example.com', version: 'v1', kind: 'Website' },
      resource: { group: 'example.com', version: 'v1', resource: 'websites' },
      operation: 'CREATE',
      namespace: 'default',
      name: 'blog',
      userInfo: { username: 'alice', uid: 'u-1', groups: ['system:authenticated'] },
      dryRun: false,
      ...request,
    },
  };
}

export interface Website {
  readonly apiVersion?: string;
  readonly kind?: string;
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec: { domain: string; replicas?: number; tags?: string[] };
}

export function website(spec: Partial<Website['spec']> = {}): Website {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Website',
    metadata: { name: 'blog', namespace: 'default' },
    spec: { domain: 'blog.example.com', ...spec },
  };
}

/** The `response` of an answered review. */
export function responseOf(answer: HttpAnswer): Record<string, unknown> {
  const body = answer.json as { response?: Record<string, unknown> } | undefined;
  if (body?.response === undefined) throw new Error(`not a review: ${answer.status} ${answer.text}`);
  return body.response;
}

/** The certificate a new TLS connection to `url` is served, verified against `ca`. */
export function servedCertificate(url: string, ca: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca, servername: 'localhost' }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve(certificate);
    });
    socket.once('error', reject);
  });
}
