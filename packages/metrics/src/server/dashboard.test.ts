import { createHash } from 'node:crypto';
import { type ControllerKeyInfo, done, ExponentialRateLimiter, Manager } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InstrumentableController } from '../controller-metrics.ts';
import { Metrics } from '../metrics.ts';
import { pushController, startServer } from '../test-harness.ts';
import { DASHBOARD_SCRIPT } from './dashboard-script.ts';
import type { DashboardSnapshot } from './dashboard-snapshot.ts';

/** Reads Server-Sent Events from a response: each `next()` is the next event or comment. */
function sse(response: Response): {
  next: () => Promise<{ event?: string; data?: string; comment?: string; bytes: number } | undefined>;
  cancel: () => Promise<void>;
} {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const out: { event?: string; data?: string; comment?: string; bytes: number } = {
            bytes: Buffer.byteLength(block),
          };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) out.comment = line.slice(1).trim();
            else if (line.startsWith('event: ')) out.event = line.slice(7);
            else if (line.startsWith('data: ')) out.data = line.slice(6);
          }
          if (out.event === undefined && out.comment === undefined && out.data === undefined) continue;
          return out;
        }
        const { value, done: finished } = await reader.read();
        if (finished) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

async function snapshot(stream: ReturnType<typeof sse>): Promise<DashboardSnapshot & { bytes: number }> {
  for (;;) {
    const e = await stream.next();
    if (e === undefined) throw new Error('the stream ended');
    if (e.event === 'snapshot')
      return { ...(JSON.parse(e.data as string) as DashboardSnapshot), bytes: e.bytes };
  }
}

/** A controller that holds `count` keys without a queue: `inspect` makes the ones asked for. */
function manyKeys(count: number, name = 'many'): InstrumentableController & { inspected: number } {
  const info = (i: number): ControllerKeyInfo<unknown> => ({
    key: `default/k${i}`,
    id: `default/k${i}`,
    partition: '',
    queued: true,
    processing: false,
    dirty: false,
    priority: 0,
    requeues: 0,
    causes: { causes: [{ type: 'modified', source: 'test' }], dropped: 0 },
    state: 'queued',
    ...(i % 1000 === 7
      ? {
          hotLoop: {
            since: Date.UTC(2026, 11, 6, 18),
            selfCausedRuns: 40,
            chain: ['written by reconcile 1'],
          },
        }
      : {}),
    ...(i === 0 ? { lastError: new Error('x'.repeat(1_000_000)), lastErrorAt: 0 } : {}),
  });
  const controller = {
    name,
    maxConcurrentReconciles: 1,
    inspected: 0,
    observe: () => {},
    queueGauges: () => ({
      unfinishedWorkMs: 0,
      longestRunningMs: 0,
      depthByPriority: [{ priority: 0, size: count }],
    }),
    inspect(limit?: number) {
      controller.inspected++;
      return Array.from({ length: Math.min(limit ?? count, count) }, (_, i) => info(i));
    },
  };
  return controller;
}

describe('the dashboard page at /', () => {
  it('is one page whose only script and style the Content-Security-Policy allows by hash', async () => {
    const http = await startServer({ dashboard: true });
    try {
      const response = await fetch(`${http.server.url('debug')}/`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      const html = await response.text();
      const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] as string);
      expect(scripts).toEqual([DASHBOARD_SCRIPT]);
      const hash = createHash('sha256').update(DASHBOARD_SCRIPT).digest('base64');
      expect(csp).toContain(`script-src 'sha256-${hash}'`);
      // Nothing outside the page: no src=, href= other than the empty icon.
      expect(html).not.toMatch(/\ssrc=|https?:\/\//);
    } finally {
      await http.stop();
    }
  });

  it('puts data in the page with textContent only: no innerHTML, eval or document.write', () => {
    expect(DASHBOARD_SCRIPT).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\('/,
    );
    expect(DASHBOARD_SCRIPT).toContain('textContent');
  });

  it('is off unless asked for: / and /debug/events are 404 saying how to turn it on', async () => {
    const http = await startServer({});
    try {
      for (const path of ['/', '/debug/events']) {
        const response = await fetch(`${http.server.url('debug')}${path}`);
        expect(response.status).toBe(404);
        expect(await response.text()).toContain('dashboard is off');
      }
    } finally {
      await http.stop();
    }
  });
});

describe('/debug/events', () => {
  it('streams snapshots: controllers, queue, rates, latency, leadership, keys with causes, last error and next retry', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 6, 12) });
    let calls = 0;
    const { controller, push } = pushController(clock, {
      name: 'widgets',
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 1_000 }),
      reconciler: async (request) => {
        calls++;
        if (request === 'default/<script>alert(1)</script>') throw new Error('cannot reach <upstream>');
        return done();
      },
    });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(controller);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('default/<script>alert(1)</script>');
    push('default/web');
    await clock.advance(10);
    const http = await startServer({ metrics, clock, probes: new Manager({ clock }), dashboard: true });
    try {
      const response = await http.get('/debug/events');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const stream = sse(response);
      const first = await snapshot(stream);
      expect(first.now).toBe('2026-12-06T12:00:00.010Z');
      expect(first.leadership).toEqual([{ name: 'manager', leading: false }]);
      expect(first.controllers).toHaveLength(1);
      const [widgets] = first.controllers;
      expect(widgets).toMatchObject({
        name: 'widgets',
        maxConcurrentReconciles: 1,
        queue: { depth: 0, running: 0, waiting: 1 },
        reconciles: { total: 2, errors: 1, perSecond: 0, errorsPerSecond: 0 },
        offset: 0,
        limit: 50,
        truncated: false,
      });
      expect(widgets?.keys).toEqual([
        {
          key: 'default/<script>alert(1)</script>',
          partition: '',
          state: 'backoff',
          priority: 0,
          attempts: 1,
          causes: ['modified Widget default/<script>alert(1)</script> via push', 'retry'],
          droppedCauses: 0,
          nextRetryAt: '2026-12-06T12:00:01.000Z',
          nextRetryInMs: 990,
          lastError: { message: 'cannot reach <upstream>', name: 'Error', at: '2026-12-06T12:00:00.000Z' },
          runsAgain: false,
        },
      ]);

      // A second later: the retry ran (and failed again), another key came; rates are per second.
      push('default/api');
      await clock.advance(1_000);
      const second = await snapshot(stream);
      expect(second.now).toBe('2026-12-06T12:00:01.010Z');
      expect(calls).toBe(4);
      expect(second.controllers[0]?.reconciles).toMatchObject({
        total: 4,
        errors: 2,
        perSecond: 2,
        errorsPerSecond: 1,
      });
      expect(second.controllers[0]?.reconciles.meanMs).toBeGreaterThanOrEqual(0);
      expect(second.controllers[0]?.keys[0]?.attempts).toBe(2);

      // Nothing changes: no snapshot, a heartbeat comment after 15 s.
      const idle = await (async () => {
        const next = stream.next();
        await clock.advance(20_000);
        return next;
      })();
      expect(idle?.event === 'snapshot' || idle?.comment === 'heartbeat').toBe(true);
      await stream.cancel();
    } finally {
      await http.stop();
      abort.abort();
      await running;
    }
  });

  it('sends a page of keys, never all: 100 000 keys in pages of at most 500, by offset and state', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 6, 12) });
    const many = manyKeys(100_000);
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(many);
    const http = await startServer({ metrics, clock, dashboard: true });
    try {
      const read = async (query: string): Promise<DashboardSnapshot & { bytes: number }> => {
        const stream = sse(await http.get(`/debug/events?${query}`));
        const s = await snapshot(stream);
        await stream.cancel();
        return s;
      };
      const first = await read('');
      expect(first.controllers[0]?.keys).toHaveLength(50);
      expect(first.controllers[0]?.truncated).toBe(true);
      expect(first.controllers[0]?.queue.depth).toBe(100_000);
      // The 1 MB error message is cut.
      expect(first.controllers[0]?.keys[0]?.lastError?.message).toMatch(/^x{1000}… \(1000000 characters\)$/);
      expect(first.bytes).toBeLessThan(30_000);

      const big = await read('limit=500&offset=1000');
      expect(big.controllers[0]?.keys).toHaveLength(500);
      expect(big.controllers[0]?.keys[0]?.key).toBe('default/k1000');
      expect(big.bytes).toBeLessThan(250_000);

      const last = await read('limit=500&offset=99990');
      expect(last.controllers[0]?.keys.map((k) => k.key)).toEqual(
        Array.from({ length: 10 }, (_, i) => `default/k${99_990 + i}`),
      );
      expect(last.controllers[0]?.truncated).toBe(false);

      const hot = await read('state=hotloop&limit=20&offset=90');
      expect(hot.controllers[0]?.keys.map((k) => k.key)).toEqual(
        Array.from({ length: 10 }, (_, i) => `default/k${(90 + i) * 1000 + 7}`),
      );
      expect(hot.controllers[0]?.keys[0]?.hotLoop).toEqual({
        since: '2026-12-06T18:00:00.000Z',
        selfCausedRuns: 40,
        chain: ['written by reconcile 1'],
      });
    } finally {
      await http.stop();
    }
  });

  it('stops snapshotting when the client goes, and ends every stream when the server stops', async () => {
    const clock = new VirtualClock();
    const many = manyKeys(10);
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(many);
    const http = await startServer({ metrics, clock, dashboard: true, dashboardMaxClients: 2 });
    const gone = sse(await http.get('/debug/events'));
    await snapshot(gone);
    await gone.cancel();
    const staying = sse(await http.get('/debug/events'));
    await snapshot(staying);
    // The one that went is cleaned up: two streams may be open, so a new one gets in.
    let third: Response | undefined;
    for (let i = 0; i < 100; i++) {
      third = await http.get('/debug/events');
      if (third.status === 200) break;
      expect(third.status).toBe(503);
      expect(third.headers.get('retry-after')).toBe('5');
      await third.text();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(third?.status).toBe(200);
    const full = await http.get('/debug/events');
    expect([full.status, await full.text()]).toEqual([503, 'too many dashboard streams open; retry later\n']);
    const before = many.inspected;
    await clock.advance(3_000);
    // Two streams left: three ticks each, not three.
    expect(many.inspected - before).toBeLessThanOrEqual(6);
    await http.stop();
    expect(await staying.next()).toBeUndefined();
    const after = many.inspected;
    await clock.advance(10_000);
    expect(many.inspected).toBe(after);
  });

  it('answers a malformed query with 400 and what is wrong, an unknown controller with 404', async () => {
    const clock = new VirtualClock();
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(manyKeys(3, 'widgets'));
    const http = await startServer({ metrics, clock, dashboard: true });
    try {
      const cases: [string, number, string][] = [
        ['limit=0', 400, 'limit must be one integer from 1 to 500'],
        ['limit=501', 400, 'limit must be one integer from 1 to 500'],
        ['limit=abc', 400, 'limit must be one integer from 1 to 500'],
        ['limit=1&limit=2', 400, 'limit must be one integer from 1 to 500'],
        ['offset=-1', 400, 'offset must be one integer from 0 to 10000000'],
        ['state=sleeping', 400, 'state must be one of running, backoff, waiting, queued, hotloop'],
        ['colour=red', 400, 'unknown parameter "colour"'],
        ['controller=nope', 404, 'no controller named "nope"'],
      ];
      for (const [query, status, message] of cases) {
        const response = await http.get(`/debug/events?${query}`);
        expect([query, response.status]).toEqual([query, status]);
        expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
        expect(await response.text()).toContain(message);
      }
      const head = await http.get('/debug/events', { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type')]).toEqual([
        200,
        'text/event-stream; charset=utf-8',
      ]);
      await fc.assert(
        fc.asyncProperty(fc.stringMatching(/^[A-Za-z0-9._~%=&+-]{0,24}$/), async (query) => {
          const response = await http.get(`/debug/events?${query}`);
          expect([200, 400, 404]).toContain(response.status);
          await response.body?.cancel();
        }),
        { numRuns: 60 },
      );
    } finally {
      await http.stop();
    }
  });
});
