import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { defaultBucketName, encodeKey, NatsBackend } from '@converge/nats';
import {
  type Backend,
  Client,
  configMapType,
  type Deployment,
  deploymentType,
  EventReasons,
  type EventsV1Event,
  eventsV1Type,
  FakeRecorder,
  ignoreNotFound,
  type KubeObject,
  Manager,
  MemoryLogger,
  OWNER_KEY_LABEL,
  OWNER_KIND_LABEL,
  OWNER_UID_ANNOTATION,
  type ResourceType,
  setOwnerLabels,
} from '@converge/runtime';
import { Store } from '@converge/store';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedNatsUrl, uniqueSuffix } from '../../packages/nats/src/test-harness.ts';
import { deleteBuckets } from '../../packages/nats/src/test-support.ts';
import { connectNats } from './nats.ts';
import kumori, {
  type Application,
  applicationController,
  applicationOrphans,
  applicationType,
  reconcileApplication,
} from './operator.ts';

const ns = 'default';

/** Polls `probe` every 20 ms until it returns a value other than undefined; fails after 15 s. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The object, or undefined when it does not exist. */
async function find<T extends KubeObject>(backend: Backend, type: ResourceType<T>, name: string) {
  return backend.get<T>(type, { namespace: ns, name }).catch(ignoreNotFound);
}

const application = (name: string, spec: Application['spec']): Application => ({
  apiVersion: 'kumori.examples.converge.dev/v1',
  kind: 'Application',
  metadata: { name, namespace: ns },
  spec,
});

/** The Kubernetes side: an embedded API server, and a KubeBackend on it through its kubeconfig. */
interface Cluster {
  readonly kube: KubeBackend;
  close(): Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  const store = new Store();
  const server: ApiServer = createApiServer({ store });
  await server.listen();
  const dir = mkdtempSync(join(tmpdir(), 'converge-kumori-'));
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, server.kubeconfig(), { mode: 0o600 });
  const kube = new KubeBackend({ config: loadKubeconfig({ path, env: {} }) });
  return {
    kube,
    close: async () => {
      await kube.close();
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 1;
}

describe('Kumori operator: Applications in NATS KV, their ConfigMap and Deployment in Kubernetes', () => {
  let url: string;
  let prefix: string;
  let cluster: Cluster;
  let nats: NatsBackend;
  const env = { ...process.env };
  const stops: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    url = await sharedNatsUrl();
    prefix = `kumori${uniqueSuffix()}_`;
    cluster = await startCluster();
    nats = await NatsBackend.connect({ servers: url, types: [applicationType], bucketPrefix: prefix });
  });

  afterEach(async () => {
    process.env = { ...env };
    // Managers first (a failed test leaves its own running), then the servers, then the buckets.
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
    await nats.close().catch(() => {});
    await cluster.close().catch(() => {});
    await deleteBuckets(url, prefix);
  });

  /** Starts the manager; afterEach stops it if the test did not. */
  function start(manager: Manager): () => Promise<void> {
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    const stop = async () => {
      abort.abort();
      await running;
    };
    stops.push(stop);
    return stop;
  }

  it('creates owner-labelled secondaries, reports Ready, follows the spec, recreates a deleted secondary and deletes them all when another writer deletes the key', async () => {
    const { kube } = cluster;
    await kube.create(configMapType, { metadata: { name: 'taken-config', namespace: ns }, data: { a: '1' } });
    process.env.NATS_URL = url;
    process.env.CONVERGE_NATS_BUCKET_PREFIX = prefix;
    const manager = new Manager({ backend: kube });
    await kumori(manager);
    const stop = start(manager);

    const created = await nats.create(
      applicationType,
      application('hello', { image: 'nginx:1.27', replicas: 2, config: { GREETING: 'hi' } }),
    );
    const cm = await eventually('the ConfigMap', () => find(kube, configMapType, 'hello-config'));
    const dep = await eventually('the Deployment', () => find(kube, deploymentType, 'hello'));
    for (const secondary of [cm, dep]) {
      expect(secondary.metadata.labels).toMatchObject({
        [OWNER_KIND_LABEL]: 'Application.kumori.examples.converge.dev',
        [OWNER_KEY_LABEL]: 'default_hello',
      });
      expect(secondary.metadata.annotations).toMatchObject({
        [OWNER_KIND_LABEL]: 'Application.kumori.examples.converge.dev',
        [OWNER_KEY_LABEL]: 'default/hello',
        [OWNER_UID_ANNOTATION]: created.metadata.uid,
      });
      expect(secondary.metadata.ownerReferences ?? []).toEqual([]);
    }
    expect(cm.data).toEqual({ GREETING: 'hi' });
    expect(dep.spec?.replicas).toBe(2);

    const readyAt = (generation: number) =>
      eventually(`Ready with observedGeneration ${generation}`, async () => {
        const app = await nats.get<Application>(applicationType, { namespace: ns, name: 'hello' });
        const ready = app.status?.conditions?.find((c) => c.type === 'Ready');
        const ok = ready?.status === 'True' && ready.observedGeneration === generation;
        return ok && app.status?.observedGeneration === generation ? app : undefined;
      });
    await readyAt(1);

    // A deployment controller reports availability: the Application's status follows, and the
    // Deployment is not rewritten (the fields the server defaulted do not count as changes).
    const current = await eventually('the Deployment', () => find(kube, deploymentType, 'hello'));
    const withStatus = { ...current, status: { availableReplicas: 2 } };
    const reported = await kube.updateStatus<KubeObject>(deploymentType, withStatus);
    await eventually('availableReplicas in NATS', async () => {
      const app = await nats.get<Application>(applicationType, { namespace: ns, name: 'hello' });
      return app.status?.availableReplicas === 2 ? true : undefined;
    });
    const after = await find(kube, deploymentType, 'hello');
    expect(after?.metadata.resourceVersion).toBe(reported.metadata.resourceVersion);
    const first = await readyAt(1);

    // The spec changes: the secondaries follow, the pods roll (new config hash).
    await nats.update(applicationType, {
      ...first,
      spec: { image: 'nginx:1.27', replicas: 3, config: { GREETING: 'hello', COLOR: 'blue' } },
    });
    await readyAt(2);
    const hash = (d: Deployment) =>
      d.spec?.template.metadata?.annotations?.['kumori.examples.converge.dev/config-hash'];
    const dep2 = await eventually('3 replicas', async () => {
      const d = await find(kube, deploymentType, 'hello');
      return d?.spec?.replicas === 3 ? d : undefined;
    });
    expect(hash(dep)).toMatch(/^[0-9a-f]{16}$/);
    expect(hash(dep2)).not.toBe(hash(dep));
    expect((await find(kube, configMapType, 'hello-config'))?.data).toEqual({
      GREETING: 'hello',
      COLOR: 'blue',
    });

    // A deleted secondary is recreated: its delete wakes its owner.
    await kube.delete(deploymentType, { namespace: ns, name: 'hello' });
    const again = await eventually('the recreated Deployment', async () => {
      const d = await find(kube, deploymentType, 'hello');
      return d !== undefined && d.metadata.uid !== dep.metadata.uid ? d : undefined;
    });
    expect(again.spec?.replicas).toBe(3);

    // A name taken by an object the Application does not own: left alone, reported.
    await nats.create(applicationType, application('taken', { image: 'busybox' }));
    const blocked = await eventually('Ready False', async () => {
      const app = await nats.get<Application>(applicationType, { namespace: ns, name: 'taken' });
      const ready = app.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.status === 'False' ? ready : undefined;
    });
    expect(blocked.reason).toBe(EventReasons.errResourceExists);
    expect(blocked.message).toBe(
      'Resource "taken-config" already exists and is not managed by this controller',
    );
    const taken = await find(kube, configMapType, 'taken-config');
    expect(taken?.data).toEqual({ a: '1' });
    expect(taken?.metadata.labels?.[OWNER_KIND_LABEL]).toBeUndefined();

    // Events about the secondaries, in Kubernetes, with Kumori's reasons.
    const notes = await eventually('the Events', async () => {
      const events = (await kube.list<EventsV1Event>(eventsV1Type, { namespace: ns })).items;
      const notes = events.map((e) => `${e.reason}: ${e.regarding.kind}/${e.regarding.name}: ${e.note}`);
      const wanted = [
        '"hello-config" synced successfully (created)',
        '"hello" synced successfully (updated)',
        'taken-config',
      ];
      return wanted.every((w) => notes.some((n) => n.includes(w))) ? notes : undefined;
    });
    expect(notes).toContain('Synced: Deployment/hello: "hello" synced successfully (created)');
    expect(notes.some((n) => n.startsWith('ErrResourceExists: ConfigMap/taken-config'))).toBe(true);

    // Other writers delete keys with a bare KV delete and a purge: the secondaries go.
    await nats.create(applicationType, application('bye', { image: 'busybox' }));
    await eventually('the ConfigMap of bye', () => find(kube, configMapType, 'bye-config'));
    const raw = await connect({ servers: url });
    const kv = await new Kvm(raw).open(defaultBucketName(prefix, applicationType));
    await kv.delete(encodeKey(ns, 'hello'));
    await kv.purge(encodeKey(ns, 'bye'));
    await raw.close();
    await eventually('the secondaries deleted', async () => {
      const names = ['hello-config', 'bye-config'].map((n) => find(kube, configMapType, n));
      const left = await Promise.all([
        ...names,
        ...['hello', 'bye'].map((n) => find(kube, deploymentType, n)),
      ]);
      return left.every((o) => o === undefined) ? true : undefined;
    });
    expect(await find(kube, configMapType, 'taken-config')).toBeDefined();
    await stop();
  });

  it('gives an Application deleted while the operator was stopped its delete run at the next start (the replayed marker), which deletes its secondaries', async () => {
    const { kube } = cluster;
    const logger = new MemoryLogger();
    const run = () => {
      const manager = new Manager({ backend: kube, logger });
      applicationController(manager, nats, nats.replayMarkers(applicationType)); // no orphan collector
      return start(manager);
    };
    const stopFirst = run();
    await nats.create(applicationType, application('gone', { image: 'nginx:1.27' }));
    await eventually('the ConfigMap', () => find(kube, configMapType, 'gone-config'));
    await stopFirst();
    await nats.delete(applicationType, { namespace: ns, name: 'gone' });
    const stopSecond = run();
    await eventually('the ConfigMap deleted', async () =>
      (await find(kube, configMapType, 'gone-config')) === undefined ? true : undefined,
    );
    expect(await find(kube, deploymentType, 'gone')).toBeUndefined();
    // The run had the replayed marker among its causes: Kumori's Delete operation.
    const replayed = logger.records.some(
      (r) =>
        r.fields.name === 'gone' &&
        Array.isArray(r.fields.causes) &&
        r.fields.causes.some(
          (c) =>
            String(c).startsWith('deleted Application default/gone@') &&
            String(c).endsWith('via markers:applications'),
        ),
    );
    expect(replayed).toBe(true);
    await stopSecond();
  });

  it('collects, after the caches synced, a secondary whose owner never existed, and keeps one whose owner exists', async () => {
    const { kube } = cluster;
    const owner = await nats.create(applicationType, application('kept', { image: 'nginx:1.27' }));
    const ghost = {
      ...application('ghost', { image: 'x' }),
      metadata: { name: 'ghost', namespace: ns, uid: 'u-1' },
    };
    const owned = (name: string, by: Application) =>
      setOwnerLabels({ metadata: { name, namespace: ns }, data: {} }, applicationType, by);
    await kube.create(configMapType, owned('kept-extra', owner));
    await kube.create(configMapType, owned('ghost-config', ghost));

    // Only the collector runs, so only it can delete the orphan.
    const connection = await connectNats(url, [applicationType], prefix);
    stops.push(() => connection.close());
    const manager = new Manager({ backend: kube });
    const collector = applicationOrphans(manager, connection.backend, 60_000);
    expect(await find(kube, configMapType, 'ghost-config')).toBeDefined();
    const stop = start(manager);
    await eventually('the orphan collected', async () =>
      (await find(kube, configMapType, 'ghost-config')) === undefined ? true : undefined,
    );
    expect(collector.stats()).toMatchObject({ deleted: 1 });
    expect(await find(kube, configMapType, 'kept-extra')).toBeDefined();
    await stop();
  });

  it('reconciles once with writes and Synced events, then writes and records nothing while nothing changed', async () => {
    const { kube } = cluster;
    const events = new FakeRecorder();
    const parts = {
      nats: new Client({ backend: nats }),
      kube: new Client({ backend: kube }),
      events,
      now: () => Date.now(),
    };
    const key = { namespace: ns, name: 'calm' };
    await nats.create(applicationType, application('calm', { image: 'nginx:1.27', config: { A: '1' } }));
    await reconcileApplication(parts, key);
    expect(events.events.map((e) => `${e.reason} ${e.note}`)).toEqual([
      'Synced "calm-config" synced successfully (created)',
      'Synced "calm" synced successfully (created)',
    ]);
    const versions = async () => [
      (await kube.get(configMapType, { namespace: ns, name: 'calm-config' })).metadata.resourceVersion,
      (await kube.get(deploymentType, key)).metadata.resourceVersion,
      (await nats.get(applicationType, key)).metadata.resourceVersion,
    ];
    const before = await versions();
    // The server defaulted the Deployment (strategy, imagePullPolicy, …): that is not a change.
    await reconcileApplication(parts, key);
    expect(events.events).toHaveLength(2);
    expect(await versions()).toEqual(before);
  });

  it('says clearly when NATS is not reachable', async () => {
    const port = await closedPort();
    process.env.NATS_URL = `nats://127.0.0.1:${port}`;
    const manager = new Manager({ backend: cluster.kube });
    await expect(kumori(manager)).rejects.toThrow(
      `NATS is not reachable at nats://127.0.0.1:${port}: start one with \`nats-server -js\` (Debian: apt-get install nats-server) or set NATS_URL`,
    );
  });
});
