import { Manager } from '@converge/runtime';
import { flushMicrotasks, PausableClock, VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { startServer } from '../test-harness.ts';

/** A cache whose sync the test releases. */
function gatedCache() {
  let release: () => void = () => {};
  const synced = new Promise<void>((resolve) => (release = resolve));
  return {
    cache: {
      needLeaderElection: false,
      start: (signal: AbortSignal) =>
        new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
      waitForSync: () => synced,
    },
    release: () => release(),
  };
}

describe('/readyz and /healthz', () => {
  it('/readyz is not ready until the caches synced, then ready; verbose, per-check and exclude answers as kube-apiserver', async () => {
    const clock = new VirtualClock();
    const manager = new Manager({ clock });
    const gate = gatedCache();
    manager.addCache(gate.cache, 'widgets');
    const http = await startServer({ probes: manager, clock });
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    await flushMicrotasks();

    let response = await http.get('/readyz');
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(
      '[+]ping ok\n[-]caches-synced failed: caches are not synced\n[+]controllers-synced ok\nreadyz check failed\n',
    );
    response = await http.get('/readyz/caches-synced');
    expect([response.status, await response.text()]).toEqual([
      500,
      'internal server error: caches are not synced\n',
    ]);
    response = await http.get('/readyz?exclude=caches-synced');
    expect([response.status, await response.text()]).toEqual([200, 'ok']);
    expect((await http.get('/healthz')).status).toBe(200);

    gate.release();
    await flushMicrotasks();
    response = await http.get('/readyz');
    expect([response.status, await response.text()]).toEqual([200, 'ok']);
    response = await http.get('/readyz?verbose');
    expect(await response.text()).toBe(
      '[+]ping ok\n[+]caches-synced ok\n[+]controllers-synced ok\nreadyz check passed\n',
    );
    response = await http.get('/readyz?verbose&exclude=nope');
    expect(await response.text()).toContain(
      'warn: some readyz checks cannot be excluded: no matches for "nope"\n',
    );
    response = await http.get('/readyz/caches-synced');
    expect([response.status, await response.text()]).toEqual([200, 'ok']);
    expect((await http.get('/readyz/nope')).status).toBe(404);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');

    abort.abort();
    await running;
    response = await http.get('/readyz');
    expect(response.status).toBe(500);
    await http.stop();
  });

  it('/healthz fails while the event loop is stalled past the threshold, and after, until a heartbeat comes on time', async () => {
    // Time that jumps without firing timers: a stalled event loop.
    const virtual = new VirtualClock({ startMs: 1_000_000 });
    const clock = new PausableClock(virtual);
    const manager = new Manager({ clock });
    manager.addHealthCheck('custom', () => undefined);
    const http = await startServer({
      probes: manager,
      clock,
      eventLoopStallThresholdMs: 5_000,
      eventLoopIntervalMs: 1_000,
    });
    await virtual.advance(1_000);
    let response = await http.get('/healthz?verbose');
    expect([response.status, await response.text()]).toEqual([
      200,
      '[+]ping ok\n[+]custom ok\n[+]event-loop ok\nhealthz check passed\n',
    ]);
    clock.jump(8_000); // the next heartbeat was due in 1 s: it is 7 s overdue
    response = await http.get('/healthz');
    expect(response.status).toBe(500);
    expect(await response.text()).toContain(
      '[-]event-loop failed: event loop stalled for 7000ms (threshold 5000ms)\n',
    );
    await virtual.advance(1_000); // the late heartbeat runs: the stall is over but was seen
    response = await http.get('/healthz/event-loop');
    expect([response.status, await response.text()]).toEqual([
      500,
      'internal server error: event loop was stalled for 8000ms (threshold 5000ms)\n',
    ]);
    await virtual.advance(1_000); // a heartbeat on time: recovered
    response = await http.get('/healthz');
    expect([response.status, await response.text()]).toEqual([200, 'ok']);
    expect(http.server.eventLoop?.lastDelayMs).toBe(0);
    await http.stop();
  });
});
