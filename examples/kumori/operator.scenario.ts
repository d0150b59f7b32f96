/**
 * The Kumori example under simulation (`npx converge simulate examples/kumori/operator.scenario.ts`):
 * Applications (the primary, in the KV store) become a ConfigMap and a Deployment (in Kubernetes),
 * owned by labels. The user creates Applications, changes one, deletes a secondary, reports a
 * Deployment's availability as a deployment controller would, deletes an Application with a bare
 * delete, leaves a ConfigMap in another's way and an orphan of an Application that never existed,
 * while the simulator injects faults. Once things settle, every Application has secondaries that
 * match its spec and a Ready condition for its generation (or Ready False, when a name is taken by
 * an object it does not own, which is left alone); the deleted one's secondaries and the orphan are
 * gone.
 *
 * The example's default export connects to a NATS server; a simulation has no network. It is built
 * from parts the module exports, `applicationController` and `applicationOrphans`, which take the
 * primary's backend: here the host's backend named `nats`, which in a simulation is the simulated
 * store (so Applications and their secondaries share one store, with the faults of both). Two
 * differences from `kumori(manager)`, both because the store is not NATS KV (and see
 * {@link distinct}):
 *
 * - no `replayMarkers`: the store keeps no delete markers to replay at start. An Application
 *   deleted while the operator is down (a crash) is found by the orphan collector instead;
 * - the collector runs every 5 s instead of 60 s, so that it runs within the simulator's quiet
 *   window (10 virtual s without a change count as settled).
 */
import {
  type Client,
  type ConfigMap,
  configMapType,
  type Deployment,
  deploymentType,
  EventReasons,
  ignoreNotFound,
  isOwnedBy,
  type Manager,
  OWNER_KIND_LABEL,
  setOwnerLabels,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import { type Application, applicationController, applicationOrphans, applicationType } from './operator.ts';

const namespace = 'default';

const application = (name: string, spec: Application['spec']): Application => ({
  apiVersion: 'kumori.examples.converge.dev/v1',
  kind: 'Application',
  metadata: { name, namespace },
  spec,
});

/** `kumori(manager)` without the NATS connection: the primary's backend is the host's `nats`. */
function kumoriSimulated(manager: Manager): void {
  const nats = manager.namedBackend('nats');
  applicationController(manager, nats);
  applicationOrphans(manager, nats, 5_000);
}

const find = (client: Client, type: typeof configMapType | typeof deploymentType, name: string) =>
  client.get(type, { namespace, name }).catch(ignoreNotFound);

async function waitFor<T>(
  sleep: (ms: number) => Promise<void>,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    await sleep(250);
  }
}

export default defineScenario({
  name: 'kumori',
  operator: kumoriSimulated,
  setup: async ({ client, sleep }) => {
    // A name taken by an object no Application owns, and an orphan of one that never existed.
    await client.create(configMapType, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'taken-config', namespace },
      data: { a: '1' },
    });
    const ghost = {
      ...application('ghost', { image: 'x' }),
      metadata: { name: 'ghost', namespace, uid: 'u-1' },
    };
    await client.create(
      configMapType,
      setOwnerLabels<ConfigMap>(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ghost-config', namespace }, data: {} },
        applicationType,
        ghost,
      ),
    );
    await client.create(
      applicationType,
      application('hello', { image: 'nginx:1.27', replicas: 2, config: { GREETING: 'hi' } }),
    );
    await client.create(applicationType, application('bye', { image: 'busybox' }));
    await client.create(applicationType, application('taken', { image: 'busybox' }));
    await sleep(500);
    const hello = await client.get<Application>(applicationType, { namespace, name: 'hello' });
    await client.update(applicationType, {
      ...hello,
      spec: { image: 'nginx:1.27', replicas: 3, config: { GREETING: 'hello', COLOR: 'blue' } },
    });
    // A deleted secondary is recreated.
    await client.delete(deploymentType, { namespace, name: 'hello' }).catch(ignoreNotFound);
    // A deployment controller reports availability (on the Deployment there is by then).
    const deployment = await waitFor(sleep, () => find(client, deploymentType, 'hello'));
    await client.updateStatus(deploymentType, {
      ...(deployment as Deployment),
      status: { availableReplicas: 2 },
    });
    // Another writer deletes an Application: its secondaries go.
    await client.delete(applicationType, { namespace, name: 'bye' });
  },
  invariants: {
    "hello's ConfigMap and Deployment match its spec, owned by labels": async ({ client }) => {
      const app = await client.get<Application>(applicationType, { namespace, name: 'hello' });
      const cm = (await find(client, configMapType, 'hello-config')) as ConfigMap | undefined;
      const dep = (await find(client, deploymentType, 'hello')) as Deployment | undefined;
      if (cm === undefined || dep === undefined)
        throw new Error(`hello's secondaries: ${cm?.metadata.name}, ${dep?.metadata.name}`);
      for (const secondary of [cm, dep]) {
        if (
          !isOwnedBy(secondary, applicationType, app) ||
          (secondary.metadata.ownerReferences ?? []).length > 0
        )
          throw new Error(
            `${secondary.metadata.name} is not owned by labels: ${JSON.stringify(secondary.metadata)}`,
          );
      }
      if (JSON.stringify(cm.data) !== JSON.stringify(app.spec.config))
        throw new Error(`hello-config holds ${JSON.stringify(cm.data)}`);
      const image = dep.spec?.template.spec?.containers[0]?.image;
      if (dep.spec?.replicas !== app.spec.replicas || image !== app.spec.image)
        throw new Error(`Deployment hello runs ${dep.spec?.replicas} × ${image}`);
    },
    'hello is Ready for its generation and reports the available replicas': async ({ client }) => {
      const app = await client.get<Application>(applicationType, { namespace, name: 'hello' });
      const ready = app.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status !== 'True' || ready.observedGeneration !== app.metadata.generation)
        throw new Error(`hello: generation ${app.metadata.generation}, status ${JSON.stringify(app.status)}`);
      if (app.status?.observedGeneration !== app.metadata.generation || app.status?.availableReplicas !== 2)
        throw new Error(`hello: status ${JSON.stringify(app.status)}`);
    },
    'a taken name is left alone and reported': async ({ client }) => {
      const app = await client.get<Application>(applicationType, { namespace, name: 'taken' });
      const ready = app.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status !== 'False' || ready.reason !== EventReasons.errResourceExists)
        throw new Error(`taken: status ${JSON.stringify(app.status)}`);
      const taken = (await find(client, configMapType, 'taken-config')) as ConfigMap | undefined;
      if (
        JSON.stringify(taken?.data) !== '{"a":"1"}' ||
        taken?.metadata.labels?.[OWNER_KIND_LABEL] !== undefined
      )
        throw new Error(`taken-config was touched: ${JSON.stringify(taken)}`);
    },
    "a deleted Application's secondaries and the orphan are gone": async ({ client }) => {
      for (const [type, name] of [
        [configMapType, 'bye-config'],
        [deploymentType, 'bye'],
        [configMapType, 'ghost-config'],
      ] as const) {
        if ((await find(client, type, name)) !== undefined)
          throw new Error(`${type.kind} ${name} is left behind`);
      }
    },
  },
});
