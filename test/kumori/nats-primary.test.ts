/**
 * Kumori's shape, end to end on real servers: a primary kind in NATS JetStream KV that owns
 * secondaries in NATS (Routes) and in Kubernetes (ConfigMaps, through the embedded API server),
 * labelled with Kumori's `kumori/ownerkind` / `kumori/ownerkey`, reads a "terciary" kind it never
 * reconciles for (Quotas, NATS), and reports Events about the NATS object in Kubernetes. The
 * secondaries of a missing primary are left to the orphan collector (Kumori's GarbageSecondaries).
 */
import {
  Client,
  type ConfigMap,
  collectOrphans,
  configMapType,
  createEventRecorder,
  createOrUpdate,
  done,
  EventReasons,
  type EventsV1Event,
  eventMessages,
  eventsV1Type,
  ignoreNotFound,
  type KubeObject,
  kumoriOwnerLabels,
  Manager,
  resourceType,
  setOwnerLabels,
} from '@converge/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Cluster, eventually, find, startCluster, startNats } from './harness.ts';

const group = 'kumori.test.converge.dev';
const appType = resourceType({
  group,
  version: 'v1',
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
});
const routeType = resourceType({ group, version: 'v1', kind: 'Route', plural: 'routes', namespaced: true });
const quotaType = resourceType({ group, version: 'v1', kind: 'Quota', plural: 'quotas', namespaced: true });
const ns = 'default';

interface Application extends KubeObject {
  readonly spec: { readonly host: string };
}
interface Route extends KubeObject {
  readonly spec?: { readonly host?: string };
}
interface Quota extends KubeObject {
  readonly spec: { readonly maxReplicas: number };
}

const object = <T extends KubeObject>(kind: string, name: string, rest: Omit<T, 'metadata'>): T =>
  ({ apiVersion: `${group}/v1`, kind, metadata: { name, namespace: ns }, ...rest }) as T;

/** What Kumori writes on a secondary of `owner` (an Application that may never have existed). */
const labelledFor = <T extends KubeObject>(secondary: T, owner: string): T =>
  setOwnerLabels(secondary, appType, { metadata: { name: owner, namespace: ns } }, kumoriOwnerLabels);

describe('a NATS primary owning NATS and Kubernetes secondaries, with Kumori labels', () => {
  let cluster: Cluster;
  let nats: Awaited<ReturnType<typeof startNats>>;
  const stops: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    cluster = await startCluster();
    nats = await startNats([appType, routeType, quotaType]);
  });

  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
    await nats.destroy();
    await cluster.close().catch(() => {});
  });

  /** The operator: the manager's backend is NATS (primary, Routes, Quotas); ConfigMaps live in Kubernetes. */
  function operator() {
    const { kube } = cluster;
    const manager = new Manager({ backend: nats.backend });
    const kubeClient = new Client({ backend: kube });
    const events = createEventRecorder({ backend: kube, component: 'kumori-test' });
    manager.add(events, { name: 'events' });
    const reconciled: string[] = [];

    manager
      .controller(appType)
      .owns(routeType, { ownerLabels: kumoriOwnerLabels }) // same backend: labels because asked for
      .owns(configMapType, { backend: kube, ownerLabels: kumoriOwnerLabels })
      .reads(quotaType)
      .complete(async (key) => {
        reconciled.push(key.name);
        const app = await manager.client.get<Application>(appType, key).catch(ignoreNotFound);
        if (app === undefined) return done(); // its secondaries are left to the orphan collector
        const quota = await manager.client.get<Quota>(quotaType, { namespace: ns, name: 'quota' });
        const route = await createOrUpdate<Route>(
          manager.client,
          routeType,
          object<Route>('Route', key.name, {}),
          (r) => setOwnerLabels({ ...r, spec: { host: app.spec.host } }, appType, app, kumoriOwnerLabels),
        );
        const skeleton: ConfigMap = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${key.name}-config`, namespace: ns },
        };
        const config = await createOrUpdate<ConfigMap>(kubeClient, configMapType, skeleton, (cm) =>
          setOwnerLabels(
            { ...cm, data: { host: app.spec.host, maxReplicas: String(quota.spec.maxReplicas) } },
            appType,
            app,
            kumoriOwnerLabels,
          ),
        );
        for (const { result, object: secondary } of [route, config]) {
          if (result === 'unchanged') continue;
          const note = eventMessages.synced(secondary.metadata.name ?? '', result);
          events.event(app, 'Normal', EventReasons.synced, 'Reconcile', note, secondary);
        }
        return done();
      });
    const collector = collectOrphans(manager, {
      ownerType: appType,
      secondaries: [{ type: routeType }, { type: configMapType, backend: kube }],
      ownerLabels: kumoriOwnerLabels,
      intervalMs: 500,
    });
    const abort = new AbortController();
    return {
      manager,
      collector,
      reconciled,
      start: () => {
        const run = manager.start(abort.signal);
        const stop = async () => {
          abort.abort();
          await run;
        };
        stops.push(stop);
        return stop;
      },
    };
  }

  it('creates both secondaries, reconciles the owner when either is edited or deleted, and deletes both with the primary', async () => {
    const { kube } = cluster;
    const routes = nats.backend;
    await routes.create(quotaType, object<Quota>('Quota', 'quota', { spec: { maxReplicas: 3 } }));
    // Secondaries of an Application that never existed, in both backends: orphans.
    await routes.create(routeType, labelledFor(object<Route>('Route', 'ghost', {}), 'ghost'));
    const ghostConfig: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ghost-config', namespace: ns },
    };
    await kube.create(configMapType, labelledFor(ghostConfig, 'ghost'));

    const op = operator();
    const stop = op.start();
    await eventually('the orphans collected in both backends', async () => {
      const left = [
        await find(routes, routeType, { namespace: ns, name: 'ghost' }),
        await find(kube, configMapType, { namespace: ns, name: 'ghost-config' }),
      ];
      return left.every((o) => o === undefined) ? true : undefined;
    });
    expect(op.collector.stats().deleted).toBe(2);

    await routes.create(
      appType,
      object<Application>('Application', 'hello', { spec: { host: 'hello.example.com' } }),
    );
    const route = await eventually('the Route in NATS', () =>
      find<Route>(routes, routeType, { namespace: ns, name: 'hello' }),
    );
    const cmKey = { namespace: ns, name: 'hello-config' };
    const cm = await eventually('the ConfigMap in Kubernetes', () =>
      find<ConfigMap>(kube, configMapType, cmKey),
    );
    for (const secondary of [route, cm]) {
      expect(secondary.metadata.labels).toEqual({
        'kumori/ownerkind': 'Application',
        'kumori/ownerkey': 'default_hello',
      });
      expect(secondary.metadata.annotations).toEqual({
        'kumori/ownerkind': 'Application',
        'kumori/ownerkey': 'default/hello',
      });
    }
    expect(route.spec).toEqual({ host: 'hello.example.com' });
    expect(cm.data).toEqual({ host: 'hello.example.com', maxReplicas: '3' });

    // Edited in NATS: the owner is reconciled and puts it back.
    await routes.update(routeType, { ...route, spec: { host: 'evil.example.com' } });
    await eventually('the Route restored', async () =>
      (await find<Route>(routes, routeType, { namespace: ns, name: 'hello' }))?.spec?.host ===
      'hello.example.com'
        ? true
        : undefined,
    );
    // Edited in Kubernetes: the same.
    const current = await kube.get<ConfigMap>(configMapType, cmKey);
    await kube.update(configMapType, { ...current, data: { host: 'evil.example.com' } });
    await eventually('the ConfigMap restored', async () =>
      (await find<ConfigMap>(kube, configMapType, cmKey))?.data?.host === 'hello.example.com'
        ? true
        : undefined,
    );
    // Deleted in either backend: re-created.
    await kube.delete(configMapType, cmKey);
    await routes.delete(routeType, { namespace: ns, name: 'hello' });
    await eventually('both re-created', async () => {
      const r = await find(routes, routeType, { namespace: ns, name: 'hello' });
      const c = await find(kube, configMapType, cmKey);
      return r !== undefined &&
        r.metadata.uid !== route.metadata.uid &&
        c !== undefined &&
        c.metadata.uid !== cm.metadata.uid
        ? true
        : undefined;
    });

    // The primary goes: the collector deletes both secondaries.
    await routes.delete(appType, { namespace: ns, name: 'hello' });
    await eventually('both secondaries collected', async () => {
      const r = await find(routes, routeType, { namespace: ns, name: 'hello' });
      const c = await find(kube, configMapType, cmKey);
      return r === undefined && c === undefined ? true : undefined;
    });
    expect(op.collector.stats().deleted).toBe(4);

    // Events about the NATS Application, recorded in Kubernetes.
    const notes = await eventually('the Synced events', async () => {
      const { items } = await kube.list<EventsV1Event>(eventsV1Type, { namespace: ns });
      const about = items.filter((e) => e.regarding.kind === 'Application' && e.regarding.name === 'hello');
      const notes = about.map((e) => e.note);
      return notes.includes('"hello-config" synced successfully (created)') ? notes : undefined;
    });
    expect(notes).toContain('"hello" synced successfully (created)');
    await stop();
  });
});
