/**
 * Kumori: an `Application` whose desired state lives in NATS JetStream KV (the primary, as in
 * Kumori's controller runtime) becomes a ConfigMap holding its config and a Deployment running its
 * image, both in Kubernetes (the manager's default backend: the embedded API server under
 * `converge dev`). Owner references cannot point from Kubernetes into NATS, so the secondaries
 * carry the owner labels (`converge.dev/owner-kind`, `converge.dev/owner-key`): a change to one
 * wakes its Application; when the Application goes (deleted through Converge, or by a bare
 * `kv.delete` from any writer, also while the operator was stopped: its delete marker is replayed
 * at start) its secondaries are deleted, and an orphan collector is the backstop. Status (a Ready condition with observedGeneration) goes back to NATS; Events about the
 * secondaries go to Kubernetes with Kumori's reasons and messages (`EventReasons`, `eventMessages`).
 */
import { createHash } from 'node:crypto';
import {
  apiVersionOf,
  type Backend,
  Client,
  type Condition,
  type ConditionInput,
  type Controller,
  collectOrphans,
  configMapType,
  controllerFor,
  createEventRecorder,
  createOrUpdate,
  type Deployment,
  deepDerivative,
  deepEqual,
  deploymentType,
  done,
  EventReasons,
  type EventRecorder,
  eventMessages,
  ignoreNotFound,
  isOwnedBy,
  type KubeObject,
  type Manager,
  type ObjectKey,
  type OrphanCollector,
  ownedBySelector,
  type ResourceType,
  requeueAfter,
  type Source,
  type SyncedOperation,
  setOwnerLabels,
  setStatusCondition,
  type UnstructuredObject,
} from '@converge/runtime';
import { connectNats, DEFAULT_NATS_URL } from './nats.ts';

export const applicationType = {
  group: 'kumori.examples.converge.dev',
  version: 'v1',
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
  statusSubresource: true,
} satisfies ResourceType;

export interface Application extends KubeObject {
  readonly spec: {
    readonly image: string;
    readonly replicas?: number;
    readonly config?: Record<string, string>;
  };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly availableReplicas?: number;
    readonly conditions?: readonly Condition[];
  };
}

/** What a reconcile uses: a client on each side, the recorder of Kubernetes Events, the time. */
export interface KumoriParts {
  readonly nats: Client;
  readonly kube: Client;
  readonly events: EventRecorder;
  readonly now: () => number;
}

/** A secondary's name is taken by an object this Application does not own: it is left alone. */
class ResourceExistsError extends Error {
  readonly object: KubeObject;
  constructor(object: KubeObject) {
    super(eventMessages.resourceExists(object.metadata.name ?? ''));
    this.object = object;
  }
}

const synced = (events: EventRecorder, object: KubeObject, how: SyncedOperation, app?: Application) =>
  events.event(
    object,
    'Normal',
    EventReasons.synced,
    'Reconcile',
    eventMessages.synced(object.metadata.name ?? '', how),
    app,
  );

/**
 * The secondaries of an Application: their type, name, the fields this operator owns, and whether
 * the server fills in defaults among them (a Deployment's strategy, a container's imagePullPolicy).
 */
function secondaries(app: Application): [ResourceType, string, Record<string, unknown>, boolean][] {
  const name = app.metadata.name ?? '';
  const data = { ...app.spec.config };
  const podLabels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'kumori' };
  // A changed config changes the hash, which rolls the pods so they read the new environment.
  const hash = createHash('sha256').update(JSON.stringify(data)).digest('hex').slice(0, 16);
  const annotations = { 'kumori.examples.converge.dev/config-hash': hash };
  const container = {
    name: 'app',
    image: app.spec.image,
    envFrom: [{ configMapRef: { name: `${name}-config` } }],
  };
  const template = { metadata: { labels: podLabels, annotations }, spec: { containers: [container] } };
  const spec = { replicas: app.spec.replicas ?? 1, selector: { matchLabels: podLabels }, template };
  return [
    [configMapType, `${name}-config`, { data }, false],
    [deploymentType, name, { spec }, true],
  ];
}

/** Creates or updates each secondary, labelled as the Application's; returns the Deployment. */
async function apply({ kube, events }: KumoriParts, app: Application, key: ObjectKey): Promise<Deployment> {
  let deployment: Deployment | undefined;
  for (const [t, name, fields, defaulted] of secondaries(app)) {
    const skeleton = {
      apiVersion: apiVersionOf(t),
      kind: t.kind,
      metadata: { name, namespace: key.namespace },
    };
    const { result, object } = await createOrUpdate<UnstructuredObject>(kube, t, skeleton, (current) => {
      const exists = current.metadata.uid !== undefined;
      if (exists && !isOwnedBy(current, applicationType, key)) throw new ResourceExistsError(current);
      const wanted = setOwnerLabels({ ...current, ...fields }, applicationType, app);
      // Compared whole, a defaulted object would be rewritten (and reported) on every reconcile.
      return defaulted && deepDerivative(wanted, current) ? current : wanted;
    });
    if (result !== 'unchanged') synced(events, object, result, app);
    if (t === deploymentType) deployment = object as Deployment;
  }
  return deployment as Deployment;
}

/** Deletes every secondary the Application at `key` owned: it is gone. */
async function removeSecondaries({ kube, events }: KumoriParts, key: ObjectKey): Promise<void> {
  const labelSelector = ownedBySelector(applicationType, key);
  for (const t of [deploymentType, configMapType]) {
    for (const object of await kube.list(t, { namespace: key.namespace, labelSelector })) {
      const target = { namespace: key.namespace, name: object.metadata.name ?? '' };
      const { uid } = object.metadata; // never delete a same-named object created meanwhile
      const options = uid === undefined ? {} : { preconditions: { uid } };
      if ((await kube.delete(t, target, options).catch(ignoreNotFound)) !== undefined) {
        synced(events, object, 'deleted');
      }
    }
  }
}

/** Writes the Ready condition (and the rest of the status) back to NATS when it changed. */
async function report(
  parts: KumoriParts,
  app: Application,
  ready: Omit<ConditionInput, 'type'>,
  available = 0,
) {
  const observedGeneration = app.metadata.generation ?? 0;
  const condition = { type: 'Ready', ...ready, observedGeneration };
  const conditions = setStatusCondition(app.status?.conditions, condition, parts.now());
  const status = { observedGeneration, availableReplicas: available, conditions };
  if (!deepEqual(status, app.status)) await parts.nats.updateStatus(applicationType, { ...app, status });
}

export async function reconcileApplication(parts: KumoriParts, key: ObjectKey) {
  const app = await parts.nats.get<Application>(applicationType, key).catch(ignoreNotFound);
  if (app === undefined) {
    await removeSecondaries(parts, key);
    return done();
  }
  try {
    const deployment = await apply(parts, app, key);
    const message = 'ConfigMap and Deployment match the spec';
    await report(
      parts,
      app,
      { status: 'True', reason: EventReasons.synced, message },
      deployment.status?.availableReplicas,
    );
    return done();
  } catch (error) {
    if (!(error instanceof ResourceExistsError)) throw error;
    const reason = EventReasons.errResourceExists;
    parts.events.event(error.object, 'Warning', reason, 'Reconcile', error.message, app);
    await report(parts, app, { status: 'False', reason, message: error.message });
    return requeueAfter(30_000); // the object in the way is not ours: none of its changes wake us
  }
}

/**
 * Wires the Application controller: primaries in `nats`, secondaries in the manager's backend.
 * `replay` (the NATS backend's `replayMarkers(applicationType)`) gives Applications deleted or
 * purged while the operator was stopped their delete run at start, as Kumori's KV watch does.
 */
export function applicationController(
  manager: Manager,
  nats: Backend,
  replay?: Source<ObjectKey>,
): Controller<ObjectKey> {
  const { backend: kube, clock } = manager;
  const events = createEventRecorder({ backend: kube, clock, component: 'kumori-controller' });
  manager.add(events, { name: 'kumori-events' });
  const parts: KumoriParts = {
    nats: new Client({ backend: nats, clock }),
    kube: new Client({ backend: kube, clock }),
    events,
    now: () => clock.now(),
  };
  const builder = controllerFor(manager, applicationType, { backend: nats })
    .owns(configMapType, { backend: kube }) // not the primary's backend: ownership by owner labels
    .owns(deploymentType, { backend: kube })
    .named('kumori-application');
  if (replay !== undefined) builder.watchesSource(replay);
  return builder.complete((key) => reconcileApplication(parts, key));
}

/** The backstop: deletes secondaries whose Application no longer exists, once every cache synced. */
export function applicationOrphans(manager: Manager, nats: Backend, intervalMs = 60_000): OrphanCollector {
  const secondaries = [{ type: configMapType }, { type: deploymentType }];
  return collectOrphans(manager, { ownerType: applicationType, ownerBackend: nats, secondaries, intervalMs });
}

/**
 * The operator module (`converge dev` calls it with a manager over the embedded API server). NATS
 * is `NATS_URL` (default nats://127.0.0.1:4222), buckets are named with
 * `CONVERGE_NATS_BUCKET_PREFIX` (default `converge_`). Throws `NatsUnreachableError` when nothing
 * answers. The connection closes after everything else stopped: the 'servers' group stops last.
 */
export default async function kumori(manager: Manager): Promise<void> {
  const prefix = process.env.CONVERGE_NATS_BUCKET_PREFIX ?? 'converge_';
  const nats = await connectNats(process.env.NATS_URL ?? DEFAULT_NATS_URL, [applicationType], prefix);
  const closeOnStop = async (signal: AbortSignal) => {
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    await nats.close();
  };
  manager.add(closeOnStop, { group: 'servers', name: 'kumori-nats' });
  applicationController(manager, nats.backend, nats.backend.replayMarkers(applicationType));
  applicationOrphans(manager, nats.backend);
}
