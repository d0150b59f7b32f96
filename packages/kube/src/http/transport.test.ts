import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InternalError,
  MemoryLogger,
  noopLogger,
  realClock,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeConfig } from '../config/index.ts';
import { UnauthorizedError } from '../errors.ts';
import { readBody } from './body.ts';
import { Transport, type TransportOptions } from './transport.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A plain HTTP server on port 0; counts connections. */
async function serve(handler: Handler): Promise<{ url: string; connections: () => number; server: Server }> {
  let connections = 0;
  const server = createServer(handler);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    server,
  };
}

function status(
  res: ServerResponse,
  code: number,
  reason: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: reason, reason, code }),
  );
}

function transport(
  config: Partial<KubeConfig> & { server: string },
  options: Partial<TransportOptions> = {},
): Transport {
  const t = new Transport({
    config: { namespace: 'default', tls: {}, auth: { type: 'none' }, ...config },
    clock: realClock,
    logger: noopLogger,
    userAgent: 'converge-test/1',
    requestTimeoutMs: 5_000,
    connectTimeoutMs: 2_000,
    keepAliveMs: 60_000,
    execTimeoutMs: 5_000,
    maxRetries: 3,
    maxRetryAfterMs: 30_000,
    ...options,
  });
  cleanups.push(() => t.close());
  return t;
}

/** Runs `request` on a VirtualClock, advancing through each wait the transport schedules; returns the waits. */
async function withWaits<T>(
  clock: VirtualClock,
  request: Promise<T>,
): Promise<{ result: T | Error; waits: number[] }> {
  const waits: number[] = [];
  let settled = false;
  const outcome = request.then(
    (value) => value,
    (error: Error) => error,
  );
  void outcome.finally(() => {
    settled = true;
  });
  while (!settled) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const next = clock.nextTimerAt();
    if (next !== undefined) {
      waits.push(next - clock.now());
      await clock.advance(next - clock.now());
    }
  }
  return { result: await outcome, waits };
}

describe('Transport', () => {
  it('sends the bearer token, user agent and Accept, under the server URL path prefix', async () => {
    let seen: IncomingMessage | undefined;
    const { url } = await serve((req, res) => {
      seen = req;
      res.end('{}');
    });
    const t = transport({ server: `${url}/prefix`, auth: { type: 'token', token: 's3cret' } });
    await t.send({ method: 'GET', path: '/api/v1/namespaces', query: { limit: '5', continue: undefined } });
    expect(seen?.url).toBe('/prefix/api/v1/namespaces?limit=5');
    expect(seen?.headers).toMatchObject({
      authorization: 'Bearer s3cret',
      'user-agent': 'converge-test/1',
      accept: 'application/json',
    });
  });

  it('logs each distinct Warning header once, however many responses carry it', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { warning: '299 - "v1beta1 Widget is deprecated"' });
      res.end('{}');
    });
    const logger = new MemoryLogger();
    const t = transport({ server: url }, { logger });
    for (let i = 0; i < 3; i++) await readBody((await t.send({ method: 'GET', path: '/x' })).body, 1024, 'x');
    const warnings = logger.records.filter((r) => r.message === 'Kubernetes API warning');
    expect(warnings.map((w) => w.fields.warning)).toEqual(['299 - "v1beta1 Widget is deprecated"']);
  });

  it('reuses keep-alive connections for sequential requests instead of opening one per request', async () => {
    const { url, connections } = await serve((_req, res) => res.end('{}'));
    const t = transport({ server: url });
    for (let i = 0; i < 20; i++)
      await readBody((await t.send({ method: 'GET', path: '/x' })).body, 1024, 'x');
    // A second connection may open while the first is still being released after its response.
    expect(connections()).toBeLessThanOrEqual(2);
  });

  it('waits the Retry-After of each 429 and retries; past maxRetries it throws TooManyRequestsError with retryAfterSeconds', async () => {
    let calls = 0;
    const { url } = await serve((_req, res) => {
      calls++;
      if (calls <= 2) status(res, 429, 'TooManyRequests', { 'retry-after': String(calls) });
      else res.end('{}');
    });
    const clock = new VirtualClock();
    const ok = await withWaits(
      clock,
      transport({ server: url }, { clock }).send({ method: 'GET', path: '/x' }),
    );
    expect(ok.result).not.toBeInstanceOf(Error);
    expect(ok.waits).toEqual([1_000, 2_000]);

    calls = 0;
    const clock2 = new VirtualClock();
    const t = transport({ server: url }, { clock: clock2, maxRetries: 1 });
    const failed = await withWaits(clock2, t.send({ method: 'POST', path: '/x', body: '{}' }));
    expect(failed.result).toBeInstanceOf(TooManyRequestsError);
    expect((failed.result as TooManyRequestsError).details.retryAfterSeconds).toBe(2);
    expect(failed.waits).toEqual([1_000]);
    expect(t.counters.throttled).toBe(1);
  });

  it('retries a 5xx only when it carries Retry-After, and never waits longer than maxRetryAfterMs', async () => {
    let calls = 0;
    const { url } = await serve((req, res) => {
      calls++;
      if (req.url === '/retry' && calls === 1) status(res, 503, 'ServiceUnavailable', { 'retry-after': '1' });
      else if (req.url === '/long') status(res, 429, 'TooManyRequests', { 'retry-after': '3600' });
      else if (req.url === '/plain') status(res, 500, 'InternalError');
      else res.end('{}');
    });
    const clock = new VirtualClock();
    const t = transport({ server: url }, { clock });
    expect((await withWaits(clock, t.send({ method: 'GET', path: '/retry' }))).waits).toEqual([1_000]);
    const plain = await withWaits(clock, t.send({ method: 'GET', path: '/plain' }));
    expect(plain.result).toBeInstanceOf(InternalError);
    expect(plain.waits).toEqual([]);
    const long = await withWaits(clock, t.send({ method: 'GET', path: '/long' }));
    expect(long.result).toBeInstanceOf(TooManyRequestsError);
    expect((long.result as TooManyRequestsError).details.retryAfterSeconds).toBe(3600);
    expect(long.waits).toEqual([]);
  });

  it('re-reads a token file once after a 401 and retries; a second 401 is an UnauthorizedError', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'transport-token-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'old');
    const { url } = await serve((req, res) => {
      if (req.url === '/open' || req.headers.authorization === 'Bearer new') res.end('{}');
      else status(res, 401, 'Unauthorized');
    });
    const t = transport({ server: url, auth: { type: 'tokenFile', path: tokenFile } });
    await t.send({ method: 'GET', path: '/open' });
    writeFileSync(tokenFile, 'new');
    await t.send({ method: 'GET', path: '/secure' });
    expect(t.counters.reauthenticated).toBe(1);
    writeFileSync(tokenFile, 'revoked');
    await expect(
      transport({ server: url, auth: { type: 'tokenFile', path: tokenFile } }).send({
        method: 'GET',
        path: '/secure',
      }),
    ).rejects.toBeInstanceOf(UnauthorizedError);
  });

  // undici checks body timeouts on a coarse (~0.5 s) timer wheel, hence the long quiet period.
  it('lets a stream stay quiet past requestTimeoutMs, while a quiet non-stream body hits the body timeout', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      setTimeout(() => res.end('{"late":true}'), 2_500);
    });
    const t = transport({ server: url }, { requestTimeoutMs: 200 });
    const stream = await t.send({ method: 'GET', path: '/watch', stream: true });
    expect((await readBody(stream.body, 1024, 'stream')).toString()).toBe('{"late":true}');
    const plain = await t.send({ method: 'GET', path: '/get' });
    const error = await readBody(plain.body, 1024, 'get').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as { code?: string }).code).toBe('UND_ERR_BODY_TIMEOUT');
  });

  it('maps a refused connection to UnavailableError and a headers timeout to TimeoutError', async () => {
    const { url, server } = await serve(() => {
      // Never answers.
    });
    await expect(
      transport({ server: url }, { requestTimeoutMs: 100 }).send({ method: 'GET', path: '/x' }),
    ).rejects.toBeInstanceOf(TimeoutError);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await transport({ server: url })
      .send({ method: 'GET', path: '/x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).cause).toBeDefined();
  });
});
