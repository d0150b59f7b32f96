/**
 * ConfigMap generator: a `ConfigMapGenerator` asks for `spec.copies` ConfigMaps holding
 * `spec.data`; the operator creates them (owned by the generator, so deleting the generator
 * garbage-collects them), deletes extra ones, and reports a Ready condition with
 * observedGeneration. Level-based: every reconcile reads the whole state and converges it, so
 * missed events and crashes between writes heal on the next run.
 */
import {
  type Client,
  type Condition,
  type ConfigMap,
  configMapType,
  createOrUpdate,
  done,
  ignoreNotFound,
  type KubeObject,
  type Manager,
  type ObjectKey,
  type ReconcileContext,
  type ResourceType,
  setControllerReference,
  setStatusCondition,
} from '@converge/runtime';

export const generatorType: ResourceType = {
  group: 'examples.converge.dev',
  version: 'v1alpha1',
  kind: 'ConfigMapGenerator',
  plural: 'configmapgenerators',
  namespaced: true,
  statusSubresource: true,
  requireResourceVersionOnUpdate: true,
};

export interface ConfigMapGenerator extends KubeObject {
  readonly spec: { readonly data: Readonly<Record<string, string>>; readonly copies?: number };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly configMaps?: readonly string[];
    readonly conditions?: readonly Condition[];
  };
}

/** The label that ties a ConfigMap to its generator, for listing. */
export const GENERATOR_LABEL = 'examples.converge.dev/generator';

export async function reconcileGenerator(
  client: Client,
  key: ObjectKey,
  ctx: ReconcileContext,
  now: () => number,
) {
  const generator = await client.get<ConfigMapGenerator>(generatorType, key).catch(ignoreNotFound);
  // Deleted (or being deleted): its ConfigMaps are garbage-collected.
  if (generator === undefined || generator.metadata.deletionTimestamp) return done();
  const copies = generator.spec.copies ?? 1;
  const wanted = Array.from({ length: copies }, (_, i) => `${key.name}-${i}`);
  for (const name of wanted) {
    const skeleton: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: key.namespace },
    };
    const { result } = await createOrUpdate(client, configMapType, skeleton, (cm) =>
      setControllerReference(generator, {
        ...cm,
        metadata: { ...cm.metadata, labels: { ...cm.metadata.labels, [GENERATOR_LABEL]: key.name } },
        data: generator.spec.data,
      }),
    );
    if (result !== 'unchanged') ctx.logger.info({ configMap: name, result }, 'ConfigMap converged');
  }
  const existing = await client.list(configMapType, {
    namespace: key.namespace,
    labelSelector: `${GENERATOR_LABEL}=${key.name}`,
  });
  for (const cm of existing) {
    const name = cm.metadata.name ?? '';
    const owned = cm.metadata.ownerReferences?.some((r) => r.uid === generator.metadata.uid && r.controller);
    if (owned && !wanted.includes(name)) {
      await client.delete(configMapType, { namespace: key.namespace, name });
      ctx.logger.info({ configMap: name }, 'Extra ConfigMap deleted');
    }
  }
  const conditions = setStatusCondition(
    generator.status?.conditions,
    {
      type: 'Ready',
      status: 'True',
      reason: 'ConfigMapsReady',
      message: `${copies} ConfigMap(s) up to date`,
      ...(generator.metadata.generation === undefined
        ? {}
        : { observedGeneration: generator.metadata.generation }),
    },
    now(),
  );
  const status = { observedGeneration: generator.metadata.generation, configMaps: wanted, conditions };
  if (JSON.stringify(status) !== JSON.stringify(generator.status)) {
    await client.updateStatus(generatorType, { ...generator, status });
  }
  return done();
}

/** The operator module: `converge dev` and `converge run` call it with the manager. */
export default function configMapGenerator(manager: Manager): void {
  manager
    .controller(generatorType)
    .owns(configMapType)
    .named('configmap-generator')
    .complete((key, ctx) => reconcileGenerator(manager.client, key, ctx, () => manager.clock.now()));
}
