import { type ControllerKeyInfo, ExponentialRateLimiter } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import type { InstrumentableController } from '../controller-metrics.ts';
import { Metrics } from '../metrics.ts';
import { pushController, startServer } from '../test-harness.ts';
import { type DebugKeys, debugKeys } from './debug-keys.ts';
import { debugKeysOf } from './debug-keys-filter.ts';

describe('/debug/keys?key=', () => {
  it("lists one object's keys in every controller that holds them (a dynamic controller's id too), among many keys", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 6, 12) });
    const failing = (key: string): Promise<never> => Promise.reject(new Error(`cannot reconcile ${key}`));
    const widgets = pushController(clock, {
      name: 'widgets',
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 1_000 }),
      reconciler: failing,
    });
    // Ids as a DynamicController writes them: group/version/resource/namespace/name.
    const dynamic = pushController(clock, { name: 'dynamic', reconciler: failing });
    const metrics = new Metrics({ clock, defaultMetrics: false })
      .instrument(widgets.controller)
      .instrument(dynamic.controller);
    const abort = new AbortController();
    const running = [widgets.controller.start(abort.signal), dynamic.controller.start(abort.signal)];
    await clock.advance(0);
    for (let i = 0; i < 2_000; i++) widgets.push(`default/w${i}`);
    widgets.push('cluster-wide');
    dynamic.push('/v1/configmaps/default/w1999');
    dynamic.push('rbac.authorization.k8s.io/v1/clusterroles//cluster-wide');
    dynamic.push('x/v1/configmaps/other/w1999');
    await clock.advance(100);
    const http = await startServer({ metrics, clock });

    // Past /debug/keys' default limit (1 000): only the filter finds it.
    const doc = (await (await http.get('/debug/keys?key=default/w1999')).json()) as DebugKeys;
    expect(doc.controllers.map((c) => [c.name, c.keys.map((k) => k.key), c.truncated])).toEqual([
      ['widgets', ['default/w1999'], false],
      ['dynamic', ['/v1/configmaps/default/w1999'], false],
    ]);
    expect(doc.controllers[0]?.keys[0]).toMatchObject({ key: 'default/w1999', state: 'queued' });
    const all = (await (await http.get('/debug/keys?controller=widgets')).json()) as DebugKeys;
    expect(all.controllers[0]?.truncated).toBe(true);
    expect(all.controllers[0]?.keys.some((k) => k.key === 'default/w1999')).toBe(false);

    const both = (await (
      await http.get('/debug/keys?key=default/nope&key=cluster-wide&controller=dynamic')
    ).json()) as DebugKeys;
    expect(both.controllers.map((c) => [c.name, c.keys.map((k) => k.key)])).toEqual([
      ['dynamic', ['rbac.authorization.k8s.io/v1/clusterroles//cluster-wide']],
    ]);
    const none = (await (await http.get('/debug/keys?key=default/w1999&state=running')).json()) as DebugKeys;
    expect(none.controllers.map((c) => c.keys)).toEqual([[], []]);
    const html = await (
      await http.get('/debug/keys?key=default/w1', { headers: { accept: 'text/html' } })
    ).text();
    expect(html).toContain('<td>default/w1</td>');
    expect(html).not.toContain('default/w10');

    const many = Array.from({ length: 17 }, (_, i) => `key=k${i}`).join('&');
    for (const bad of ['key=', 'key=a%0Ab', `key=${'a'.repeat(318)}`, many, 'key=a&colour=red']) {
      const r = await http.get(`/debug/keys?${bad}`);
      expect([bad.slice(0, 20), r.status]).toEqual([bad.slice(0, 20), 400]);
    }
    expect((await http.get('/debug/keys?key=a&controller=nope')).status).toBe(404);
    await http.stop();
    abort.abort();
    await Promise.all(running);
  });

  it("narrows only the keys: each controller's other figures are its own, as without ?key=", () => {
    const key = (id: string, hot: boolean): ControllerKeyInfo<unknown> =>
      ({
        key: id,
        id,
        partition: '',
        queued: true,
        processing: false,
        dirty: false,
        priority: 0,
        requeues: 0,
        causes: { causes: [], dropped: 0 },
        state: 'queued',
        ...(hot ? { hotLoop: { since: 0, selfCausedRuns: 10, chain: [] } } : {}),
      }) as ControllerKeyInfo<unknown>;
    let self: unknown;
    const controller = {
      name: 'widgets',
      maxConcurrentReconciles: 1,
      observe() {},
      queueGauges: () => ({ unfinishedWorkMs: 0, longestRunningMs: 0, depthByPriority: [] }),
      inspect: () => [key('default/hot', true), key('default/calm', false)],
      // A member /debug/keys may read besides inspect: called on the controller itself.
      hotLoopKeys() {
        self = this;
        return 1;
      },
    } satisfies InstrumentableController & { hotLoopKeys(): number };
    const now = Date.UTC(2026, 11, 6);
    const figures = (doc: DebugKeys): unknown[] =>
      doc.controllers.map(({ keys: _keys, truncated: _truncated, ...rest }) => rest);
    const narrowed = debugKeysOf([controller], new URLSearchParams('key=default/calm'), now);
    expect(narrowed.controllers[0]?.keys.map((k) => k.key)).toEqual(['default/calm']);
    expect(figures(narrowed)).toEqual(figures(debugKeys([controller], new URLSearchParams(), now)));
    expect(self === undefined || self === controller).toBe(true);
  });
});
