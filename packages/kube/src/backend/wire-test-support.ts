/**
 * Test support for the wire tests (not part of the package's API): a scripted HTTP server that
 * records every request, and a {@link KubeBackend} on it (namespace `home`).
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { KubeBackend } from './kube-backend.ts';
import type { KubeBackendOptions } from './options.ts';

/** One request the fake server received. */
export interface Recorded {
  readonly method: string;
  readonly url: URL;
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts a fake server answering with `handler` and a backend on it; both are closed after the test. */
export async function fake(
  handler: (request: Recorded, res: ServerResponse) => void,
  options: Partial<KubeBackendOptions> = {},
): Promise<{ backend: KubeBackend; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', 'http://x'),
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      };
      requests.push(recorded);
      handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const backend = new KubeBackend({
    config: { server: url, namespace: 'home', tls: {}, auth: { type: 'none' } },
    ...options,
  });
  cleanups.push(async () => {
    await backend.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { backend, requests };
}

/** Answers JSON. */
export function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Answers a watch stream of these lines (objects are JSON-encoded), ended unless `end` is false. */
export function stream(res: ServerResponse, lines: readonly unknown[], end = true): void {
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  for (const line of lines) res.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
  if (end) res.end();
}

/** Every item of an async iterable. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** A ConfigMap in namespace `home` as a server sends it (no apiVersion and kind). */
export const cm = (name: string, rv: string) => ({
  metadata: { name, namespace: 'home', resourceVersion: rv },
});
