import { request as httpRequest } from 'node:http';
import { VirtualClock } from '@converge/runtime/testing';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createApiServer } from './api-server.ts';
import { FaultError, FaultErrorCodes } from './fault-errors.ts';
import { eventually, retrying } from './fault-test-support.ts';
import { startTestServer } from './test-support.ts';

const CM = '/api/v1/namespaces/default/configmaps';

/** Whether a fresh connection to `url` is refused (no pooled connection involved). */
function refused(url: string): Promise<boolean> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = httpRequest({
      hostname: target.hostname,
      port: Number(target.port),
      path: '/version',
      agent: false,
    });
    req.on('response', (res) => {
      res.resume();
      resolve(false);
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    req.end();
  });
}

describe('faults.restart', () => {
  it('keeps the store and the port, ends every watch and connection, and serves again', async () => {
    const t = await startTestServer();
    try {
      await t.request(CM, { method: 'POST', body: { metadata: { name: 'survivor' } } });
      const w = await t.watch(`${CM}?watch=true`);
      await w.waitFor(1);
      const url = t.server.url;
      await t.server.faults.restart();
      expect(await w.ended).toMatch(/clean|error/);
      expect(t.server.openWatches).toBe(0);
      expect(t.server.url).toBe(url);
      const list = await retrying(() => t.request(CM));
      expect(
        (list.json as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
      ).toEqual(['survivor']);
      const again = await t.watch(`${CM}?watch=true`);
      await again.waitFor(1);
      again.abort();
      expect(t.server.faults.counters.restarts).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('refuses connections for downMs on the server clock, then listens again', async () => {
    const clock = new VirtualClock({ startMs: Date.parse('2025-01-01T00:00:00Z') });
    const t = await startTestServer({ clock });
    try {
      const restarting = t.server.faults.restart({ downMs: 30_000 });
      const shared = t.server.faults.restart({ downMs: 1 });
      await eventually(() => clock.pendingTimers > 0, 8_000, 'the down time');
      expect(await refused(t.url)).toBe(true);
      await clock.advance(29_999);
      expect(await refused(t.url)).toBe(true);
      await clock.advance(1);
      await Promise.all([restarting, shared]);
      expect(await refused(t.url)).toBe(false);
      expect(t.server.faults.counters.restarts).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('cuts requests in flight: a delayed request gets no answer', async () => {
    const clock = new VirtualClock({ startMs: Date.parse('2025-01-01T00:00:00Z') });
    const t = await startTestServer({ clock });
    try {
      t.server.faults.delay({ pathPattern: '/version', ms: 60_000 });
      const inFlight = t.request('/version').then(
        () => 'answered',
        () => 'cut',
      );
      await eventually(() => t.server.faults.counters.delayed === 1);
      await t.server.faults.restart();
      expect(await inFlight).toBe('cut');
    } finally {
      await t.close();
    }
  });

  it('fails with RESTART_FAILED before listen() and after close()', async () => {
    const server = createApiServer({ tls: false });
    await expect(server.faults.restart()).rejects.toMatchObject({ code: FaultErrorCodes.RESTART_FAILED });
    await server.listen();
    await server.close();
    const error = await server.faults.restart().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FaultError);
    expect((error as FaultError).code).toBe(FaultErrorCodes.RESTART_FAILED);
    await expect(server.faults.restart({ downMs: -1 })).rejects.toMatchObject({
      code: FaultErrorCodes.INVALID_RULE,
    });
  });
});

describe('@kubernetes/client-node v2 informer across a restart', () => {
  it('reconnects (restarted on error as its README advises) and ends with the store state', async () => {
    const t = await startTestServer({ secure: true });
    const kc = new KubeConfig();
    kc.loadFromString(t.server.kubeconfig());
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = 'restarted';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'before' } } });
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${namespace}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace }),
    );
    const added: string[] = [];
    let errors = 0;
    let stopped = false;
    informer.on('add', (cm) => added.push(cm.metadata?.name ?? ''));
    informer.on('error', () => {
      errors++;
      setTimeout(() => {
        if (!stopped) informer.start().catch(() => {});
      }, 50);
    });
    await informer.start();
    try {
      await eventually(() => added.includes('before') && t.server.openWatches === 1);
      const type = t.server.store.resolveType('v1', 'ConfigMap');
      if (type === undefined) throw new Error('ConfigMap is not served');
      const restarting = t.server.faults.restart({ downMs: 300 });
      // Changes while the port is closed: the informer must see them once it is back.
      await t.server.store.create(type, { metadata: { name: 'while-down', namespace } });
      await t.server.store.delete(type, { namespace, name: 'before' });
      await restarting;
      await retrying(() =>
        core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'after-restart' } } }),
      );
      await eventually(
        () =>
          added.includes('after-restart') &&
          added.includes('while-down') &&
          informer.get('before', namespace) === undefined,
        15_000,
        'the informer to catch up',
      );
      expect(
        informer
          .list(namespace)
          .map((cm) => cm.metadata?.name)
          .sort(),
      ).toEqual(['after-restart', 'while-down']);
      await eventually(() => t.server.openWatches === 1);
      // The client did see the restart: its watch broke and reconnecting was refused while down.
      expect(errors).toBeGreaterThan(0);
    } finally {
      stopped = true;
      await informer.stop();
      await t.close();
    }
  });
});
