import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type ApiServer, createApiServer } from './api-server.ts';
import type { ApiServerOptions } from './options.ts';

/** One HTTP exchange's result. */
export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: unknown;
}

/** Options of one test request. */
export interface TestRequest {
  readonly method?: string;
  readonly body?: unknown;
  /** Raw body (sent as is). */
  readonly raw?: string | Buffer;
  readonly headers?: Record<string, string>;
  /** Send no Authorization header. */
  readonly anonymous?: boolean;
  readonly token?: string;
}

/** An open watch stream: events as they arrive, and how the stream ended. */
export interface TestWatch {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every event received so far. */
  readonly events: { type: string; object: Record<string, unknown> }[];
  /** Resolves once at least `count` events arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves with `clean` (a proper end of the chunked body) or `error` (a reset connection). */
  readonly ended: Promise<'clean' | 'error'>;
  /** Aborts the request from the client side. */
  abort(): void;
}

/** A served test instance with a request helper bound to its URL, token and CA. */
export interface TestServer {
  readonly server: ApiServer;
  readonly url: string;
  request(path: string, options?: TestRequest): Promise<TestResponse>;
  /** Opens a watch; resolves as soon as the response headers arrive. */
  watch(path: string, options?: TestRequest): Promise<TestWatch>;
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1 port 0 (plain HTTP unless `secure` is set) for tests, without the
 * cluster defaults (`kubernetes` Service, per-namespace ServiceAccount and CA ConfigMap) unless
 * `clusterDefaults` is set.
 */
export async function startTestServer(
  options: ApiServerOptions & { readonly secure?: boolean } = {},
): Promise<TestServer> {
  const { secure = false, ...rest } = options;
  // tests count the objects they wrote: no cluster defaults unless asked for
  const defaults = { clusterDefaults: false, ...rest };
  const server = createApiServer(secure ? defaults : { tls: false, ...defaults });
  const { url } = await server.listen();
  const agent = url.startsWith('https')
    ? new HttpsAgent({ keepAlive: true, ...(server.ca === undefined ? {} : { ca: server.ca }) })
    : new HttpAgent({ keepAlive: true });
  const base = new URL(url);
  const target = { hostname: base.hostname, port: Number(base.port) };
  const request = (path: string, init: TestRequest = {}): Promise<TestResponse> =>
    new Promise<TestResponse>((resolve, reject) => {
      const headers: Record<string, string> = { ...init.headers };
      const token = init.token ?? server.token;
      if (init.anonymous !== true && token !== undefined) headers.authorization = `Bearer ${token}`;
      let payload: string | Buffer | undefined = init.raw;
      if (payload === undefined && init.body !== undefined) {
        payload = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      if (payload !== undefined) headers['content-length'] ??= String(Buffer.byteLength(payload));
      const send = url.startsWith('https') ? httpsRequest : httpRequest;
      const req = send({ ...target, path, method: init.method ?? 'GET', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  const watch = (path: string, init: TestRequest = {}): Promise<TestWatch> =>
    new Promise<TestWatch>((resolve, reject) => {
      const headers: Record<string, string> = { ...init.headers };
      const token = init.token ?? server.token;
      if (init.anonymous !== true && token !== undefined) headers.authorization = `Bearer ${token}`;
      const send = url.startsWith('https') ? httpsRequest : httpRequest;
      const req = send(
        new URL(path, url),
        { method: 'GET', headers, agent: false, ...(server.ca === undefined ? {} : { ca: server.ca }) },
        (res) => {
          const events: TestWatch['events'] = [];
          const waiters: { count: number; resolve: () => void }[] = [];
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let nl = buffer.indexOf('\n');
            while (nl >= 0) {
              const line = buffer.slice(0, nl);
              buffer = buffer.slice(nl + 1);
              if (line.trim() !== '') events.push(JSON.parse(line) as TestWatch['events'][number]);
              nl = buffer.indexOf('\n');
            }
            for (const waiter of [...waiters]) {
              if (events.length >= waiter.count) {
                waiters.splice(waiters.indexOf(waiter), 1);
                waiter.resolve();
              }
            }
          });
          const ended = new Promise<'clean' | 'error'>((done) => {
            res.on('end', () => done('clean'));
            res.on('error', () => done('error'));
            res.on('aborted', () => done('error'));
          });
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            events,
            ended,
            abort: () => req.destroy(),
            waitFor(count, timeoutMs = 5_000) {
              if (events.length >= count) return Promise.resolve();
              return new Promise<void>((ok, fail) => {
                const timer = setTimeout(
                  () =>
                    fail(new Error(`only ${events.length} of ${count} events: ${JSON.stringify(events)}`)),
                  timeoutMs,
                );
                waiters.push({
                  count,
                  resolve: () => {
                    clearTimeout(timer);
                    ok();
                  },
                });
              });
            },
          });
        },
      );
      req.on('error', (error) => reject(error));
      req.end();
    });
  return {
    server,
    url,
    request,
    watch,
    async close() {
      agent.destroy();
      await server.close();
    },
  };
}
