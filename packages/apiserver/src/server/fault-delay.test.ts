import { request as httpRequest } from 'node:http';
import { VirtualClock } from '@converge/runtime/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, track } from './fault-test-support.ts';
import { startTestServer, type TestServer } from './test-support.ts';

const CM = '/api/v1/namespaces/default/configmaps';
let clock: VirtualClock;
let t: TestServer;

beforeAll(async () => {
  clock = new VirtualClock({ startMs: Date.parse('2025-01-01T00:00:00Z'), seed: 11 });
  t = await startTestServer({ clock });
});
afterEach(() => {
  t.server.faults.clear();
});
afterAll(async () => {
  await t.close();
});

describe('faults.delay', () => {
  it('holds a matching request for ms on the server clock, and serves other paths and methods at once', async () => {
    const before = t.server.faults.counters.delayed;
    t.server.faults.delay({ pathPattern: CM, methods: ['GET'], ms: 5_000 });
    const slow = track(t.request(CM));
    await eventually(() => t.server.faults.counters.delayed === before + 1);
    expect((await t.request('/api/v1/namespaces/default/secrets')).status).toBe(200);
    expect((await t.request(CM, { method: 'POST', body: { metadata: { name: 'undelayed' } } })).status).toBe(
      201,
    );
    await clock.advance(4_999);
    // A full round trip after the advance: had the delay ended, the held answer would be on its way.
    expect((await t.request('/version')).status).toBe(200);
    expect(slow.settled()).toBe(false);
    await clock.advance(1);
    const answer = await slow.promise;
    expect(answer.status).toBe(200);
    expect(
      (answer.json as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
    ).toContain('undelayed');
    expect(t.server.faults.counters.delayed).toBe(before + 1);
  });

  it('adds up the delays of every matching rule, and matches every path without a pattern', async () => {
    t.server.faults.delay({ ms: 1_000 });
    t.server.faults.delay({ pathPattern: '/version', ms: 2_000 });
    const slow = track(t.request('/version'));
    await eventually(() => t.server.faults.list().every((r) => r.injected === 1));
    await clock.advance(2_999);
    expect(slow.settled()).toBe(false);
    await clock.advance(1);
    expect((await slow.promise).status).toBe(200);
  });

  it('never applies a delayed write whose client left during the delay', async () => {
    t.server.faults.delay({ pathPattern: `${CM}`, methods: ['POST'], ms: 10_000 });
    const timersBefore = clock.pendingTimers;
    const body = JSON.stringify({ metadata: { name: 'abandoned' } });
    const url = new URL(t.url);
    const req = httpRequest({
      hostname: url.hostname,
      port: Number(url.port),
      path: CM,
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.server.token}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
    });
    req.on('error', () => {});
    req.end(body);
    await eventually(() => clock.pendingTimers === timersBefore + 1, 8_000, 'the delay timer');
    req.destroy();
    await eventually(() => clock.pendingTimers === timersBefore, 8_000, 'the delay timer to be cancelled');
    await clock.advance(10_000);
    expect((await t.request(`${CM}/abandoned`)).status).toBe(404);
  });

  it('delays a watch before its headers, and WATCH in methods does not delay lists', async () => {
    t.server.faults.delay({ pathPattern: CM, methods: ['WATCH'], ms: 3_000 });
    expect((await t.request(CM)).status).toBe(200);
    const watch = track(t.watch(`${CM}?watch=true&timeoutSeconds=30`));
    await eventually(() => t.server.faults.list()[0]?.injected === 1);
    expect(watch.settled()).toBe(false);
    await clock.advance(3_000);
    const w = await watch.promise;
    expect(w.status).toBe(200);
    w.abort();
  });

  it('stops delaying after times requests, and the rule leaves the list', async () => {
    const rule = t.server.faults.delay({ pathPattern: '/version', ms: 1_000, times: 1 });
    const first = track(t.request('/version'));
    await eventually(() => t.server.faults.list().length === 0);
    expect((await t.request('/version')).status).toBe(200);
    expect(first.settled()).toBe(false);
    expect(rule.remove()).toBe(false);
    await clock.advance(1_000);
    expect((await first.promise).status).toBe(200);
  });
});
