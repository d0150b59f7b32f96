/**
 * ReplicaSet: controller-runtime v0.6's running example, whole, over the real `apps/v1` kind. The
 * embedded API server runs no workload controllers, so this is what creates Pods: for each
 * ReplicaSet it keeps `spec.replicas` Pods made from `spec.template` (named `<replicaset>-<random>`
 * by the server through generateName, controlled by the ReplicaSet so that deleting it
 * garbage-collects them), deletes extra ones, replaces deleted ones, and writes what it can honestly
 * know into the status: `replicas`, `fullyLabeledReplicas`, `observedGeneration` (Pods never become
 * Ready without a kubelet). Like Kubernetes' own, it adopts orphan Pods that match the selector and
 * releases Pods it controls that stopped matching. Do not run it against a real cluster: there
 * kube-controller-manager's ReplicaSet controller does this job, and the two would both create Pods.
 *
 * Reconciles read the whole state and never look at the event that caused them, so the queue can
 * fold many Pod events for one ReplicaSet into one request: a burst of them costs a few reconciles.
 *
 * It needs nothing of a Pod but its metadata (owner references, labels, deletion and creation
 * timestamps: Pods never become Ready here, so no status is read), so it watches and caches Pods
 * metadata-only: thousands of Pods cost their metadata, not their specs. It therefore adopts and
 * releases Pods with a merge patch of their owner references (as Kubernetes' own controller does),
 * never by sending a whole Pod back.
 */
import {
  type Controller,
  type ControllerMetrics,
  compileLabelSelector,
  controllerOf,
  done,
  enqueueFromMapFunction,
  generationChanged,
  ignoreNotFound,
  type KubeObject,
  type Manager,
  type ObjectKey,
  type PartialObjectMetadata,
  type Pod,
  podType,
  type ReconcileContext,
  type ReplicaSet,
  type ReplicaSetStatus,
  removeOwnerReference,
  replicaSetType,
  setControllerReference,
} from '@converge/runtime';

export interface ReplicaSetOptions {
  /** The controller's metric hooks (reconciles by result, workers busy). */
  readonly metrics?: ControllerMetrics;
  /** Awaited as each reconcile starts, before it reads anything (tests hold a reconcile with it). */
  readonly beforeReconcile?: (key: ObjectKey) => Promise<void> | void;
}

const byAge = (a: KubeObject, b: KubeObject) =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** Writes a Pod's owner references back, if its resourceVersion is still `pod`'s (else 409, retried). */
function patchOwners(manager: Manager, pod: PartialObjectMetadata) {
  const { namespace = '', name = '', ownerReferences = [], resourceVersion } = pod.metadata;
  const patch = { metadata: { ownerReferences, resourceVersion } };
  return manager.client.patch(podType, { namespace, name }, { type: 'merge', patch });
}

/** Converges the Pods of one ReplicaSet to `spec.replicas`, then its status. */
export async function reconcileReplicaSet(manager: Manager, key: ObjectKey, ctx: ReconcileContext) {
  const { client } = manager;
  const cached = await client.get(replicaSetType, key).catch(ignoreNotFound);
  const spec = cached?.spec;
  // Gone, or going: the garbage collector deletes its Pods.
  if (cached === undefined || spec === undefined || cached.metadata.deletionTimestamp) return done();
  // Objects from a list may come without apiVersion and kind; an owner reference needs them.
  const rs: ReplicaSet = { ...cached, apiVersion: 'apps/v1', kind: 'ReplicaSet' };
  const matches = compileLabelSelector(spec.selector);
  const pods: KubeObject[] = [];
  for (const pod of await client.listMetadata(podType, { namespace: key.namespace })) {
    const owner = controllerOf(pod);
    const matching = matches(pod.metadata.labels);
    if (pod.metadata.deletionTimestamp || (owner !== undefined && owner.uid !== rs.metadata.uid)) continue;
    if (owner === undefined && matching) {
      pods.push(await patchOwners(manager, setControllerReference(rs, pod)));
      ctx.logger.info({ pod: pod.metadata.name }, 'Orphan Pod adopted');
    } else if (owner !== undefined && !matching) {
      await patchOwners(manager, removeOwnerReference(rs, pod)).catch(ignoreNotFound);
      ctx.logger.info({ pod: pod.metadata.name }, 'Pod no longer matching released');
    } else if (owner !== undefined) pods.push(pod);
  }
  const wanted = spec.replicas ?? 1;
  const { metadata = {}, spec: podSpec } = spec.template ?? {};
  // The cache may lag: a ReplicaSet deleted on the server would get Pods that the garbage collector
  // deletes at once, whose deletions wake it again — a storm of creates for as long as the cache
  // lags (found by `operator.scenario.ts` under `npx converge simulate`). Ask the server first.
  if (pods.length < wanted) {
    const live = await manager.backend.get(replicaSetType, key).catch(ignoreNotFound);
    if (live === undefined || live.metadata.uid !== rs.metadata.uid || live.metadata.deletionTimestamp)
      return done();
  }
  for (let i = pods.length; i < wanted; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${key.name}-`,
        namespace: key.namespace,
        ...(metadata.labels === undefined ? {} : { labels: metadata.labels }),
        ...(metadata.annotations === undefined ? {} : { annotations: metadata.annotations }),
      },
      ...(podSpec === undefined ? {} : { spec: podSpec }),
    };
    const created = await client.create(podType, setControllerReference(rs, pod));
    pods.push(created);
    ctx.logger.info({ pod: created.metadata.name }, 'Pod created');
  }
  // Too many: the newest go, `pods` keeps the oldest. Only the version the cache showed: a Pod
  // relabelled (released) or changed since is not ours to delete — the server answers 409 and the
  // retry reads it again (a cache that started behind deleted a released Pod without this: found
  // by `operator.scenario.ts` with two replicas).
  for (const pod of pods.sort(byAge).splice(wanted)) {
    const name = pod.metadata.name ?? '';
    const { uid, resourceVersion } = pod.metadata;
    await client
      .delete(
        podType,
        { namespace: key.namespace, name },
        {
          preconditions: {
            ...(uid === undefined ? {} : { uid }),
            ...(resourceVersion === undefined ? {} : { resourceVersion }),
          },
        },
      )
      .catch(ignoreNotFound);
    ctx.logger.info({ pod: name }, 'Extra Pod deleted');
  }
  const labels = Object.entries(metadata.labels ?? {});
  const status: ReplicaSetStatus = {
    replicas: pods.length,
    fullyLabeledReplicas: pods.filter((p) => labels.every(([k, v]) => p.metadata.labels?.[k] === v)).length,
    ...(rs.metadata.generation === undefined ? {} : { observedGeneration: rs.metadata.generation }),
  };
  const old: ReplicaSetStatus = rs.status ?? { replicas: 0 };
  if (
    (['replicas', 'fullyLabeledReplicas', 'observedGeneration'] as const).some((f) => old[f] !== status[f])
  ) {
    await client.updateStatus(replicaSetType, { ...rs, status });
  }
  return done();
}

/**
 * Wires the controller: ReplicaSet events (only spec changes: its own status writes are filtered
 * by generation), events of Pods it controls mapped to it through their controller reference, and
 * events of orphan Pods mapped through a map function to every ReplicaSet whose selector matches —
 * both from one metadata-only Pod informer, which the reconciler's `listMetadata` reads too.
 */
export function replicaSets(manager: Manager, options: ReplicaSetOptions = {}): Controller<ObjectKey> {
  const replicaSetCache = manager.informers.acquire<ReplicaSet>({
    backend: manager.backend,
    type: replicaSetType,
  }).informer.cache;
  const selecting = (pod: KubeObject): ObjectKey[] => {
    if (controllerOf(pod) !== undefined) return [];
    const namespace = pod.metadata.namespace ?? '';
    return replicaSetCache
      .list({ namespace })
      .filter((rs) => rs.spec !== undefined && compileLabelSelector(rs.spec.selector)(pod.metadata.labels))
      .map((rs) => ({ namespace, name: rs.metadata.name ?? '' }));
  };
  return manager
    .controller(replicaSetType, { predicates: [generationChanged()] })
    .owns(podType, { metadataOnly: true })
    .watches(podType, enqueueFromMapFunction(selecting), { metadataOnly: true })
    .named('replicaset')
    .withOptions(options.metrics === undefined ? {} : { metrics: options.metrics })
    .complete(async (key, ctx) => {
      await options.beforeReconcile?.(key);
      return reconcileReplicaSet(manager, key, ctx);
    });
}

/** The operator module: `converge dev` and `converge run` call it with the manager. */
export default function operator(manager: Manager): void {
  replicaSets(manager);
}
