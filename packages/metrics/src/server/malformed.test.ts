import { request } from 'node:http';
import { Manager } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../metrics.ts';
import { pushController, startServer } from '../test-harness.ts';

type Started = Awaited<ReturnType<typeof startServer>>;

let http: Started;

beforeAll(async () => {
  const clock = new VirtualClock();
  const { controller } = pushController(clock, { name: 'widgets', reconciler: () => undefined });
  const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(controller);
  http = await startServer({ metrics, probes: new Manager({ clock }), clock });
});

afterAll(async () => {
  await http?.stop();
});

/** One raw request (no URL normalisation): its status and body. */
function raw(base: string, method: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const segment = fc.oneof(
  fc.constantFrom(
    'metrics',
    'debug',
    'keys',
    'healthz',
    'readyz',
    'ping',
    'caches-synced',
    '',
    '..',
    '%',
    '%zz',
    '%2F',
    '%00',
  ),
  fc.stringMatching(/^[A-Za-z0-9._~%-]{0,12}$/),
);
const queryPart = fc.oneof(
  fc.constantFrom(
    'verbose',
    'exclude=ping',
    'limit=5',
    'limit=-1',
    'limit=99999999',
    'state=backoff',
    'controller=widgets',
    'controller=%E0%A4%A',
    '%',
    '&&',
    '=',
  ),
  fc.stringMatching(/^[A-Za-z0-9._~%=&+-]{0,16}$/),
);
const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND');

describe('malformed requests to the operations endpoints', () => {
  it('get 200, 400, 404 or 405 (500 only for a failing probe), never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        method,
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.array(queryPart, { maxLength: 3 }),
        async (m, segments, query) => {
          const path = `/${segments.join('/')}${query.length === 0 ? '' : `?${query.join('&')}`}`;
          for (const route of ['metrics', 'health'] as const) {
            const { status, body } = await raw(http.server.url(route) as string, m, path);
            if (status === 500) {
              // HEAD answers carry no body.
              if (m !== 'HEAD')
                expect(body).toMatch(
                  /(readyz check failed|healthz check failed|internal server error: .+)\n$/,
                );
            } else {
              expect([200, 400, 404, 405]).toContain(status);
            }
            if (status === 405) expect(m === 'GET' || m === 'HEAD').toBe(false);
          }
        },
      ),
      { numRuns: 150 },
    );
    expect((await http.get('/metrics')).status).toBe(200);
    expect((await raw(http.server.url('metrics') as string, 'GET', '/metrics/%zz')).status).toBe(400);
    expect((await raw(http.server.url('metrics') as string, 'POST', '/metrics')).status).toBe(405);
    expect((await raw(http.server.url('metrics') as string, 'GET', '/healthz')).status).toBe(404);
    expect((await raw(http.server.url('health') as string, 'GET', '/metrics')).status).toBe(404);
  });
});

describe('two managers in one process', () => {
  it('keep separate registries: the figures of one never show in the other, nor in the global registry', async () => {
    const { register } = await import('prom-client');
    const scrape = async (metrics: Metrics): Promise<string> => metrics.scrape();
    const clock = new VirtualClock();
    const a = pushController(clock, { name: 'widgets', reconciler: () => undefined });
    const b = pushController(clock, { name: 'widgets', reconciler: () => undefined });
    const ma = new Metrics({ clock }).instrument(a.controller);
    const mb = new Metrics({ clock }).instrument(b.controller);
    const abort = new AbortController();
    const runs = [a.controller.start(abort.signal), b.controller.start(abort.signal)];
    await clock.advance(0);
    a.push('one');
    a.push('two');
    b.push('three');
    await clock.advance(10);
    expect(await scrape(ma)).toContain(
      'controller_runtime_reconcile_total{controller="widgets",result="success"} 2',
    );
    expect(await scrape(mb)).toContain(
      'controller_runtime_reconcile_total{controller="widgets",result="success"} 1',
    );
    expect(await register.metrics()).not.toContain('controller_runtime');
    expect(await scrape(ma)).toContain('nodejs_eventloop_lag_p99_seconds');
    abort.abort();
    await Promise.all(runs);
  });
});
