/**
 * ConfigMap generator: a `ConfigMapGenerator` asks for `spec.copies` ConfigMaps holding
 * `spec.data`; the operator creates them (owned by the generator, so deleting the generator
 * garbage-collects them), deletes extra ones, and reports a Ready condition with
 * observedGeneration. Level-based: every reconcile reads the whole state and converges it, so
 * missed events and crashes between writes heal on the next run.
 *
 * Reads come from the cache, which may lag. Before it creates a ConfigMap, a reconcile asks the
 * server (not the cache) whether its generator still exists: a generator deleted while the cache
 * still shows it would otherwise get ConfigMaps that the garbage collector deletes at once, whose
 * deletions wake the generator again, which creates them again — a storm of writes for as long as
 * the cache lags (found by `operator.scenario.ts`, `npx converge simulate`).
 */
import {
  type Backend,
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

/**
 * Whether the generator the cache shows as `cached` still exists on the server (same uid, not being
 * deleted). `server` is uncached: the manager's backend.
 */
async function stillThere(server: Pick<Backend, 'get'>, cached: ConfigMapGenerator): Promise<boolean> {
  const { namespace = '', name = '' } = cached.metadata;
  const live = await server.get<ConfigMapGenerator>(generatorType, { namespace, name }).catch(ignoreNotFound);
  return (
    live !== undefined &&
    live.metadata.uid === cached.metadata.uid &&
    live.metadata.deletionTimestamp === undefined
  );
}

export async function reconcileGenerator(
  client: Client,
  key: ObjectKey,
  ctx: ReconcileContext,
  now: () => number,
  server?: Pick<Backend, 'get'>,
) {
  const generator = await client.get<ConfigMapGenerator>(generatorType, key).catch(ignoreNotFound);
  // Deleted (or being deleted): its ConfigMaps are garbage-collected.
  if (generator === undefined || generator.metadata.deletionTimestamp) return done();
  const copies = generator.spec.copies ?? 1;
  const wanted = Array.from({ length: copies }, (_, i) => `${key.name}-${i}`);
  const existing = await client.list(configMapType, {
    namespace: key.namespace,
    labelSelector: `${GENERATOR_LABEL}=${key.name}`,
  });
  const missing = wanted.some((name) => !existing.some((cm) => cm.metadata.name === name));
  // Deleted on the server while the cache lags: creating its ConfigMaps would only feed the collector.
  if (missing && server !== undefined && !(await stillThere(server, generator))) return done();
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
    .complete((key, ctx) =>
      reconcileGenerator(manager.client, key, ctx, () => manager.clock.now(), manager.backend),
    );
}
