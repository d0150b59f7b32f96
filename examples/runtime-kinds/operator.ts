/**
 * Runtime kinds (kro's dynamic controller): one `DynamicController` serves every CRD labelled
 * `examples.converge.dev/runtime-kinds=true`, as such CRDs come and go, without a restart; a
 * `CrdFollower` tells it which. Every custom resource of a served kind gets a ConfigMap
 * `<kind>-<name>` summarising it (its kind, generation and spec as JSON), owned by it so that the
 * garbage collector deletes it with it, and a Ready condition with observedGeneration on its status.
 * All kinds share one fair queue and one pool of workers: a storm of one kind does not hold back
 * the others. Only namespaced kinds are served (a ConfigMap needs a namespace).
 */
import {
  apiVersionOf,
  type Condition,
  type ConfigMap,
  CrdFollower,
  configMapType,
  createOrUpdate,
  type DynamicController,
  type DynamicControllerMetrics,
  done,
  type KindContext,
  type KindRequest,
  type KubeObject,
  type Manager,
  type ResourceType,
  setControllerReference,
  setStatusCondition,
} from '@converge/runtime';

/** The label a CRD carries to have its kind served. */
export const RUNTIME_KINDS_LABEL = 'examples.converge.dev/runtime-kinds';

/** A custom resource of any served kind: its spec is summarised as it is. */
interface CustomResource extends KubeObject {
  readonly spec?: unknown;
  readonly status?: {
    readonly observedGeneration?: number;
    readonly conditions?: readonly Condition[];
    readonly [field: string]: unknown;
  };
}

export interface RuntimeKindsOptions {
  /** Reconciles at once, over all kinds. Default 4. */
  readonly workers?: number;
  /** Hooks of the dynamic controller (reconciles, events per kind, kinds served). */
  readonly metrics?: DynamicControllerMetrics;
  /** Called as each reconcile starts, before it reads anything. */
  readonly onReconcile?: (request: KindRequest) => void;
}

/** What {@link runtimeKinds} wired, for tests and for whoever wants to look inside. */
export interface RuntimeKinds {
  readonly dynamic: DynamicController;
  readonly follower: CrdFollower;
}

/** The name of the ConfigMap summarising `name` of kind `type`. */
export function summaryName(type: Pick<ResourceType, 'kind'>, name: string): string {
  return `${type.kind.toLowerCase()}-${name}`;
}

/** Wires the dynamic controller and the CRD follower into `manager`. */
export function runtimeKinds(manager: Manager, options: RuntimeKindsOptions = {}): RuntimeKinds {
  const dynamic = manager.dynamicController({
    name: 'runtime-kinds',
    workers: options.workers ?? 4,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  const follower = new CrdFollower({
    backend: manager.backend,
    controller: dynamic,
    informers: manager.informers,
    labelSelector: `${RUNTIME_KINDS_LABEL}=true`,
    handlerFor: (type) => {
      if (!type.namespaced) return undefined;
      return (request, context) => {
        options.onReconcile?.(request);
        return summarise(manager, request, context);
      };
    },
    clock: manager.clock,
    logger: manager.logger,
  });
  manager.add(follower, { name: 'runtime-kinds-crds' });
  return { dynamic, follower };
}

/** Converges one custom resource: its summary ConfigMap, then its Ready condition. */
async function summarise(manager: Manager, request: KindRequest, context: KindContext) {
  const { type, cache, signal, logger } = context;
  const cached = cache.get(request) as CustomResource | undefined;
  // Gone, or going: its ConfigMap is garbage-collected.
  if (cached === undefined || cached.metadata.deletionTimestamp !== undefined) return done();
  // Listed objects may come without apiVersion and kind; the served type knows them.
  const owner: CustomResource = { ...cached, apiVersion: apiVersionOf(type), kind: type.kind };
  const generation = owner.metadata.generation ?? 0;
  const name = summaryName(type, request.name);
  const skeleton: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: request.namespace, name },
  };
  const { result } = await createOrUpdate(manager.client, configMapType, skeleton, (cm) =>
    setControllerReference(owner, {
      ...cm,
      data: { kind: type.kind, generation: String(generation), spec: JSON.stringify(owner.spec ?? {}) },
    }),
  );
  if (result !== 'unchanged') logger.info({ configMap: name, result }, 'Summary converged');
  const conditions = setStatusCondition(
    owner.status?.conditions,
    {
      type: 'Ready',
      status: 'True',
      reason: 'Summarised',
      message: `ConfigMap ${name} holds generation ${generation}`,
      observedGeneration: generation,
    },
    manager.clock.now(),
  );
  const status = { ...owner.status, observedGeneration: generation, conditions };
  if (JSON.stringify(status) !== JSON.stringify(owner.status)) {
    await manager.client.updateStatus(type, { ...owner, status }, { signal });
  }
  return done();
}

/** The operator module: `converge dev` and `converge run` call it with the manager. */
export default function operator(manager: Manager): void {
  runtimeKinds(manager);
}
