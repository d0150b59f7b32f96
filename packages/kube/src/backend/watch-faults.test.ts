import { afterEach, describe, expect, it } from 'vitest';
import {
  COLLECTION,
  type ConfigMap,
  configMaps,
  type FaultRig,
  monotonic,
  NAMESPACE,
  startFaultRig,
} from './fault-test-support.ts';

const NAMES = ['a', 'b', 'c'];
let rig: FaultRig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The listener's last resourceVersion of every object is the server's: no update was lost. */
async function expectNoLostUpdate(r: FaultRig): Promise<void> {
  const server = await r.writer.list<ConfigMap>(configMaps, { namespace: NAMESPACE });
  for (const object of server.items) {
    expect(r.seen.get(object.metadata.name ?? '')?.at(-1), `last event of ${object.metadata.name}`).toBe(
      object.metadata.resourceVersion,
    );
  }
  expect(monotonic(r.seen), 'no object went back to an older resourceVersion').toBe(true);
}

describe.each(['watch-list', 'paginated'] as const)(
  'KubeBackend under watch faults, consumed by an Informer with %s lists',
  (initialList) => {
    it('resumes dropped watches from the last resourceVersion without relisting or losing an update', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      await rig.start();
      for (let i = 0; i < 5; i++) {
        await rig.write(NAMES, 2);
        expect(rig.cluster.server.faults.dropWatches()).toBeGreaterThanOrEqual(0);
      }
      await rig.converged();
      await expectNoLostUpdate(rig);
      const stats = rig.informer.stats();
      expect(stats.relists, 'a dropped watch resumes, it does not relist').toBe(0);
      expect(stats.watches).toBeGreaterThan(1);
      expect(rig.cluster.server.faults.counters.droppedWatches).toBeGreaterThan(0);
    });

    it('relists after a 410 ERROR event and ends with the server state', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      await rig.start();
      rig.cluster.server.faults.failRatio({
        pathPattern: COLLECTION,
        methods: ['WATCH'],
        ratio: 1,
        status: 410,
        times: 2,
      });
      rig.cluster.server.faults.dropWatches();
      await rig.write(NAMES, 3);
      await rig.converged();
      await expectNoLostUpdate(rig);
      expect(rig.cluster.server.faults.counters.failed[410]).toBe(2);
      expect(rig.informer.stats().expired).toBeGreaterThanOrEqual(1);
      expect(rig.informer.stats().relists).toBeGreaterThanOrEqual(1);
    });

    it('relists when the watch resumes from a resourceVersion the server compacted away', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      await rig.start();
      const stall = rig.cluster.server.faults.stallWatches({ pathPattern: COLLECTION });
      await rig.write(NAMES, 2);
      rig.cluster.server.store.compact();
      stall.release();
      rig.cluster.server.faults.dropWatches();
      await rig.converged();
      await expectNoLostUpdate(rig);
      expect(rig.informer.stats().expired).toBeGreaterThanOrEqual(1);
    });

    it('detects a stalled stream (no byte for 3 bookmark intervals), closes it and catches up once the server sends again', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      await rig.start();
      const started = Date.now();
      const stall = rig.cluster.server.faults.stallWatches({ pathPattern: COLLECTION });
      await rig.write(NAMES, 2);
      while (rig.backend.stats().stalledWatches === 0 && Date.now() - started < 30_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(rig.backend.stats().stalledWatches).toBeGreaterThanOrEqual(1);
      expect(Date.now() - started, 'detected after about 600 ms of silence').toBeGreaterThanOrEqual(400);
      expect(rig.informer.stats().watchErrors).toBeGreaterThanOrEqual(1);
      expect(rig.logger.records.some((r) => r.message.startsWith('Watch stalled'))).toBe(true);
      stall.release();
      await rig.converged();
      await expectNoLostUpdate(rig);
    });

    it('waits out 429 Retry-After on the list and the watch inside the backend: the informer sees no error', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      const { faults } = rig.cluster.server;
      // A streamed list is a watch: there is no list request to throttle then.
      const methods = initialList === 'paginated' ? (['GET', 'WATCH'] as const) : (['WATCH'] as const);
      for (const method of methods) {
        faults.failRatio({
          pathPattern: COLLECTION,
          methods: [method],
          ratio: 1,
          status: 429,
          retryAfterSeconds: 1,
          times: 1,
        });
      }
      const started = Date.now();
      await rig.start();
      await rig.write(NAMES, 1);
      await rig.converged();
      expect(Date.now() - started, 'each 429 waited its Retry-After of 1 s').toBeGreaterThanOrEqual(
        methods.length * 1_000 - 100,
      );
      expect(faults.counters.failed[429]).toBe(methods.length);
      expect(rig.backend.stats().throttled).toBe(methods.length);
      expect(rig.informer.stats()).toMatchObject({
        listErrors: 0,
        watchErrors: 0,
        lists: 1,
        relists: 0,
        watches: 1,
      });
      expect(rig.backend.stats().watchListFallbacks).toBe(0);
      await expectNoLostUpdate(rig);
    });

    it('backs off on 500s from lists and watches without a reconnect storm, then converges', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      await rig.start();
      const { faults } = rig.cluster.server;
      const rule = faults.failRatio({
        pathPattern: COLLECTION,
        methods: ['GET', 'WATCH'],
        ratio: 1,
        status: 500,
      });
      faults.dropWatches();
      await rig.write(NAMES, 2);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const failed = faults.counters.failed[500];
      rule.remove();
      // Backoff 100 ms doubling to 1 s: about 0.1 + 0.2 + 0.4 + 0.8 + 1 + 1 s in 3 s — a handful, not hundreds.
      expect(failed).toBeGreaterThanOrEqual(3);
      expect(failed).toBeLessThanOrEqual(8);
      await rig.converged();
      await expectNoLostUpdate(rig);
    });

    it('recovers from a server restart (connections cut, port closed for a while) with the server state', async () => {
      rig = await startFaultRig({ initialList });
      await rig.write(NAMES, 1);
      await rig.start();
      await rig.cluster.server.faults.restart({ downMs: 500 });
      await rig.write(NAMES, 2);
      await rig.converged();
      await expectNoLostUpdate(rig);
      expect(rig.informer.stats().relists).toBe(0);
    });
  },
);
