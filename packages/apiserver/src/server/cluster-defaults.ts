import {
  type Clock,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  type Logger,
  type ResourceType,
} from '@converge/runtime';
import type { Store } from '@converge/store';
import type { MutableObject, Strategy } from './api-resource.ts';
import { aggregateClusterRoles } from './clusterrole-aggregation.ts';
import { BOOTSTRAP_BINDINGS, BOOTSTRAP_ROLES } from './rbac-bootstrap.ts';
import type { ResourceRegistry } from './resource-registry.ts';

/**
 * What kube-apiserver and kube-controller-manager create in every cluster, without workload
 * controllers: the `kubernetes` Service in `default` with its Endpoints and EndpointSlice (the
 * apiserver's endpoint reconciler), and in every active namespace the `default` ServiceAccount (the
 * serviceaccounts controller) and the `kube-root-ca.crt` ConfigMap (the root-ca-cert-publisher),
 * recreated when deleted; the bootstrap RBAC policy (`cluster-admin`, `admin`/`edit`/`view` and
 * what every client may do; rbac-bootstrap.ts), and ClusterRole aggregation (clusterrole-aggregation.ts).
 */

/** The ConfigMap every namespace holds with the cluster's CA bundle. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';
/** The cluster IP of the `kubernetes` Service: the first address of the service range 10.96.0.0/12. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
const RESTART_DELAY_MS = 1_000;

/** Options of {@link startClusterDefaults}. */
export interface ClusterDefaultsOptions {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The server's address as pods would reach it: an IP and the port it listens on. */
  readonly endpoint: { readonly ip: string; readonly port: number };
  /** The PEM bundle published in `kube-root-ca.crt` ('' for a plain HTTP server). */
  readonly caPem: string;
  /** Stops the namespace watch. */
  readonly signal: AbortSignal;
}

interface Types {
  readonly namespace: ResourceType;
  readonly service: ResourceType;
  readonly endpoints: ResourceType;
  readonly endpointSlice: ResourceType;
  readonly serviceAccount: ResourceType;
  readonly configMap: ResourceType;
  readonly clusterRole: ResourceType | undefined;
  readonly componentStatus: ResourceType | undefined;
  readonly clusterRoleBinding: ResourceType | undefined;
  readonly serviceStrategy: Strategy;
}

function typesOf(registry: ResourceRegistry): Types | undefined {
  const storage = (group: string, version: string, plural: string) =>
    registry.lookup(group, version, plural)?.storage;
  const namespace = storage('', 'v1', 'namespaces');
  const service = registry.lookup('', 'v1', 'services');
  const endpoints = storage('', 'v1', 'endpoints');
  const endpointSlice = storage('discovery.k8s.io', 'v1', 'endpointslices');
  const serviceAccount = storage('', 'v1', 'serviceaccounts');
  const configMap = storage('', 'v1', 'configmaps');
  if (
    namespace === undefined ||
    service === undefined ||
    endpoints === undefined ||
    endpointSlice === undefined ||
    serviceAccount === undefined ||
    configMap === undefined
  )
    return undefined;
  return {
    namespace,
    service: service.storage,
    endpoints,
    endpointSlice,
    serviceAccount,
    configMap,
    clusterRole: storage('rbac.authorization.k8s.io', 'v1', 'clusterroles'),
    componentStatus: storage('', 'v1', 'componentstatuses'),
    clusterRoleBinding: storage('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings'),
    serviceStrategy: service.strategy,
  };
}

/** Creates `object` unless it exists; true when it was created. */
async function ensure(store: Store, type: ResourceType, object: MutableObject): Promise<boolean> {
  const key = { namespace: String(object.metadata.namespace ?? ''), name: String(object.metadata.name) };
  try {
    await store.get(type, key);
    return false;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  try {
    await store.create(type, object as KubeObject);
    return true;
  } catch (error) {
    if (isAlreadyExists(error)) return false;
    throw error;
  }
}

/** Creates or updates `object` so its top-level `fields` are as given. */
async function reconcile(
  store: Store,
  type: ResourceType,
  object: MutableObject,
  fields: readonly string[],
): Promise<void> {
  const key = { namespace: String(object.metadata.namespace ?? ''), name: String(object.metadata.name) };
  let current: KubeObject;
  try {
    current = await store.get(type, key);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await ensure(store, type, object);
    return;
  }
  const stored = current as unknown as Record<string, unknown>;
  if (fields.every((f) => JSON.stringify(stored[f]) === JSON.stringify(object[f]))) return;
  const next = structuredClone(stored) as MutableObject;
  for (const field of fields) next[field] = object[field];
  await store.update(type, next as KubeObject);
}

/** The `kubernetes` Service, its Endpoints and EndpointSlice in `default`, pointing at this server. */
async function kubernetesService(options: ClusterDefaultsOptions, types: Types): Promise<void> {
  const { store, clock, endpoint } = options;
  const labels = { component: 'apiserver', provider: 'kubernetes' };
  const service: MutableObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels },
    spec: {
      clusterIP: KUBERNETES_SERVICE_IP,
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: endpoint.port }],
      type: 'ClusterIP',
      sessionAffinity: 'None',
    },
  };
  types.serviceStrategy.prepareForCreate?.(service, {
    namespace: 'default',
    fieldValidation: 'Ignore',
    warn: () => undefined,
    now: () => clock.now(),
    random: () => clock.random(),
  });
  delete service.status;
  // the apiserver's reconciler keeps it pointing at the port this server listens on
  await reconcile(store, types.service, service, ['spec']);
  const port = { name: 'https', port: endpoint.port, protocol: 'TCP' };
  await reconcile(
    store,
    types.endpoints,
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
      },
      subsets: [{ addresses: [{ ip: endpoint.ip }], ports: [port] }],
    },
    ['subsets'],
  );
  await reconcile(
    store,
    types.endpointSlice,
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      },
      addressType: endpoint.ip.includes(':') ? 'IPv6' : 'IPv4',
      endpoints: [{ addresses: [endpoint.ip], conditions: { ready: true } }],
      ports: [port],
    },
    ['addressType', 'endpoints', 'ports'],
  );
}

const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

/**
 * kube-apiserver's bootstrap ClusterRoles and ClusterRoleBindings (rbac-bootstrap.ts): created when
 * absent, left alone when present (an administrator's edits stay, as with `autoupdate: false`).
 */
async function bootstrapPolicy(options: ClusterDefaultsOptions, types: Types): Promise<void> {
  if (types.clusterRole === undefined || types.clusterRoleBinding === undefined) return;
  for (const role of BOOTSTRAP_ROLES) {
    const object: MutableObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: {
        name: role.name,
        labels: { ...BOOTSTRAP_LABELS, ...role.labels },
        annotations: AUTOUPDATE,
      },
      rules: role.rules.map((rule) => ({ ...rule })),
    };
    if (role.aggregateFrom !== undefined)
      object.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { ...role.aggregateFrom } }] };
    await ensure(options.store, types.clusterRole, object);
  }
  for (const binding of BOOTSTRAP_BINDINGS)
    await ensure(options.store, types.clusterRoleBinding, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: binding.name, labels: BOOTSTRAP_LABELS, annotations: AUTOUPDATE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: binding.name },
      subjects: binding.groups.map((name) => ({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Group',
        name,
      })),
    });
}

/**
 * ComponentStatuses (`kubectl get cs`): the store stands where etcd does and is healthy while the
 * server runs; there is no scheduler or controller-manager to probe, so none is listed.
 */
async function componentStatuses(options: ClusterDefaultsOptions, types: Types): Promise<void> {
  if (types.componentStatus === undefined) return;
  await reconcile(
    options.store,
    types.componentStatus,
    {
      apiVersion: 'v1',
      kind: 'ComponentStatus',
      metadata: { name: 'etcd-0' },
      conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
    },
    ['conditions'],
  );
}

function isActive(namespace: KubeObject): boolean {
  const phase = (namespace as unknown as { status?: { phase?: unknown } }).status?.phase;
  return namespace.metadata.deletionTimestamp === undefined && phase !== 'Terminating';
}

/** The `default` ServiceAccount and `kube-root-ca.crt` ConfigMap of one active namespace. */
async function namespaceDefaults(options: ClusterDefaultsOptions, types: Types, name: string): Promise<void> {
  const { store } = options;
  try {
    const namespace = await store.get(types.namespace, { namespace: '', name });
    if (!isActive(namespace)) return;
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  await ensure(store, types.serviceAccount, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'default', namespace: name },
  });
  await reconcile(
    store,
    types.configMap,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: ROOT_CA_CONFIGMAP,
        namespace: name,
        annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION },
      },
      data: { 'ca.crt': options.caPem },
    },
    ['data'],
  );
}

/** Follows one type's events until the signal aborts, restarting a watch that ends or fails. */
async function follow(
  options: ClusterDefaultsOptions,
  type: ResourceType,
  onEvent: (event: { type: string; object: KubeObject }) => Promise<void>,
): Promise<void> {
  const { store, clock, logger, signal } = options;
  while (!signal.aborted) {
    try {
      for await (const event of store.watch(type, { signal })) {
        if (event.type === 'BOOKMARK') continue;
        await onEvent(event as { type: string; object: KubeObject }).catch((error: unknown) => {
          if (!signal.aborted) logger.warn({ err: error, kind: type.kind }, 'cluster defaults: write failed');
        });
      }
    } catch (error) {
      if (signal.aborted) return;
      logger.debug({ err: error, kind: type.kind }, 'cluster defaults: watch ended');
    }
    await clock.sleep(RESTART_DELAY_MS, signal).catch(() => undefined);
  }
}

/**
 * Creates the `kubernetes` Service (with Endpoints and EndpointSlice) and starts following
 * namespaces, ServiceAccounts and ConfigMaps so every active namespace keeps its `default`
 * ServiceAccount and `kube-root-ca.crt` ConfigMap. Resolves once the Service exists; the watches
 * run until `signal` aborts.
 */
export async function startClusterDefaults(options: ClusterDefaultsOptions): Promise<void> {
  const types = typesOf(options.registry);
  if (types === undefined) return;
  await kubernetesService(options, types);
  await bootstrapPolicy(options, types);
  await componentStatuses(options, types);
  const clusterRole = types.clusterRole;
  if (clusterRole !== undefined)
    void follow(options, clusterRole, () => aggregateClusterRoles(options.store, clusterRole));
  const forNamespace = (name: string) => namespaceDefaults(options, types, name);
  void follow(options, types.namespace, async (event) => {
    if (event.type !== 'DELETED') await forNamespace(String(event.object.metadata.name));
  });
  void follow(options, types.serviceAccount, async (event) => {
    if (event.type === 'DELETED' && event.object.metadata.name === 'default')
      await forNamespace(String(event.object.metadata.namespace));
  });
  void follow(options, types.configMap, async (event) => {
    if (event.object.metadata.name !== ROOT_CA_CONFIGMAP) return;
    if (event.type === 'DELETED' || event.type === 'MODIFIED')
      await forNamespace(String(event.object.metadata.namespace));
  });
}
