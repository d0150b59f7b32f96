import { done, ExponentialRateLimiter } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../metrics.ts';
import { pushController, startServer } from '../test-harness.ts';
import type { DebugKeys } from './debug-keys.ts';

describe('/debug/keys', () => {
  it('shows a key in backoff with its causes, attempts, last error and next retry time; JSON and HTML', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 10, 26, 12) });
    let failing = true;
    const { controller, push } = pushController(clock, {
      name: 'widgets',
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 1_000 }),
      reconciler: async () => {
        if (failing) throw Object.assign(new Error('upstream <unavailable>'), { code: 'E_UPSTREAM' });
        return done();
      },
    });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(controller);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('default/web');
    push('default/api');
    await clock.advance(1_000);
    await clock.advance(500);
    const http = await startServer({ metrics, clock });

    const response = await http.get('/debug/keys');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const doc = (await response.json()) as DebugKeys;
    expect(doc.now).toBe('2026-11-26T12:00:01.500Z');
    expect(doc.controllers).toHaveLength(1);
    const [widgets] = doc.controllers;
    expect(widgets?.name).toBe('widgets');
    expect(widgets?.keys.map((k) => k.key)).toEqual(['default/api', 'default/web']);
    expect(widgets?.keys[1]).toEqual({
      key: 'default/web',
      partition: '',
      state: 'backoff',
      priority: 0,
      attempts: 2,
      causes: ['modified Widget default/web via push', 'retry'],
      droppedCauses: 0,
      nextRetryAt: '2026-11-26T12:00:03.000Z',
      nextRetryInMs: 1_500,
      lastError: {
        message: 'upstream <unavailable>',
        name: 'Error',
        code: 'E_UPSTREAM',
        at: '2026-11-26T12:00:01.000Z',
      },
      runsAgain: false,
    });

    const html = await (await http.get('/debug/keys', { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('<td>default/web</td><td>backoff</td><td>2</td>');
    expect(html).toContain('upstream &#60;unavailable&#62;');
    expect(html).not.toContain('<unavailable>');

    const one = (await (
      await http.get('/debug/keys?controller=widgets&limit=1&state=backoff')
    ).json()) as DebugKeys;
    expect(one.controllers[0]?.keys).toHaveLength(1);
    expect(one.controllers[0]?.truncated).toBe(true);
    expect((await http.get('/debug/keys?controller=nope')).status).toBe(404);
    for (const bad of ['limit=0', 'limit=abc', 'limit=1&limit=2', 'state=sleeping', 'colour=red']) {
      const r = await http.get(`/debug/keys?${bad}`);
      expect([bad, r.status]).toEqual([bad, 400]);
    }

    failing = false;
    await clock.advance(2_000);
    const after = (await (await http.get('/debug/keys')).json()) as DebugKeys;
    expect(after.controllers[0]?.keys).toEqual([]);
    await http.stop();
    abort.abort();
    await running;
  });
});
