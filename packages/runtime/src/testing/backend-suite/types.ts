import { type ResourceType, resourceType } from '../../backend/index.ts';
import type { KubeObject, ObjectMeta, OwnerReference } from '../../object/index.ts';

/**
 * The resource types the suite uses: a ConfigMap-like core kind without generation, a namespaced
 * custom kind with generation and status subresource (requireResourceVersionOnUpdate true), a
 * cluster-scoped custom kind.
 *
 * The custom kinds live in group `suite.converge.dev`, version `v1`; their `spec` and `status` are
 * free-form objects (a CRD for them needs `x-kubernetes-preserve-unknown-fields: true` on both). The
 * suite writes `spec.size` (integer), `spec.color` (string) and `status.phase` (string).
 *
 * @example
 * runBackendSuite({
 *   name: 'my-backend',
 *   makeBackend: async (types) => {
 *     const backend = await MyBackend.create({ types });
 *     return { backend, close: () => backend.close() };
 *   },
 * });
 * // types is a subset of [suiteTypes.configMap, suiteTypes.widget, suiteTypes.clusterWidget]
 */
export const suiteTypes: {
  readonly configMap: ResourceType;
  readonly widget: ResourceType;
  readonly clusterWidget: ResourceType;
} = Object.freeze({
  configMap: resourceType({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    shortNames: ['cm'],
    generation: false,
  }),
  widget: resourceType({
    group: 'suite.converge.dev',
    version: 'v1',
    kind: 'Widget',
    plural: 'widgets',
    namespaced: true,
    statusSubresource: true,
    generation: true,
    requireResourceVersionOnUpdate: true,
  }),
  clusterWidget: resourceType({
    group: 'suite.converge.dev',
    version: 'v1',
    kind: 'ClusterWidget',
    plural: 'clusterwidgets',
    namespaced: false,
    statusSubresource: true,
    generation: true,
    requireResourceVersionOnUpdate: true,
  }),
});

/**
 * The namespaces the suite creates objects in. A backend that requires namespaces to exist makes
 * them in `makeBackend`. Equal lengths keep "namespace, then name" and byte order of `ns/name` keys
 * the same.
 *
 * @example
 * const harness = await makeBackend(types);
 * for (const name of suiteNamespaces) await ensureNamespace(harness, name);
 */
export const suiteNamespaces: readonly [string, string] = Object.freeze(['suite-a', 'suite-b']) as readonly [
  string,
  string,
];

/** The first suite namespace, where most tests work. */
export const NS = suiteNamespaces[0];
/** The second suite namespace. */
export const NS_B = suiteNamespaces[1];

/** A ConfigMap as the suite writes it. */
export interface SuiteConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

/** A Widget or ClusterWidget as the suite writes it. */
export interface SuiteWidget extends KubeObject {
  readonly spec?: { readonly size?: number; readonly color?: string };
  readonly status?: { readonly phase?: string };
}

/** Metadata fields the builders accept. */
export interface MetaInput {
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
  readonly ownerReferences?: readonly OwnerReference[];
  readonly generateName?: string;
}

function meta(name: string | undefined, input: MetaInput, namespaced: boolean): ObjectMeta {
  const { generateName, labels, finalizers, ownerReferences } = input;
  return {
    ...(name === undefined ? {} : { name }),
    ...(namespaced ? { namespace: input.namespace ?? NS } : {}),
    ...(generateName === undefined ? {} : { generateName }),
    ...(labels === undefined ? {} : { labels }),
    ...(finalizers === undefined ? {} : { finalizers }),
    ...(ownerReferences === undefined ? {} : { ownerReferences }),
  };
}

/** A ConfigMap in namespace `input.namespace` (default `suite-a`). */
export function configMap(
  name: string | undefined,
  data: Record<string, string> = {},
  input: MetaInput = {},
): SuiteConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name, input, true), data };
}

/** A Widget in namespace `input.namespace` (default `suite-a`). */
export function widget(
  name: string,
  spec: SuiteWidget['spec'] = { size: 1 },
  input: MetaInput = {},
): SuiteWidget {
  return { apiVersion: 'suite.converge.dev/v1', kind: 'Widget', metadata: meta(name, input, true), spec };
}

/** A ClusterWidget (no namespace). */
export function clusterWidget(
  name: string,
  spec: SuiteWidget['spec'] = { size: 1 },
  input: Omit<MetaInput, 'namespace'> = {},
): SuiteWidget {
  return {
    apiVersion: 'suite.converge.dev/v1',
    kind: 'ClusterWidget',
    metadata: meta(name, input, false),
    spec,
  };
}

/** An owner reference to `owner` (which must have been stored: it needs a uid). Default: the controller. */
export function ownerRef(
  owner: KubeObject,
  options: { readonly controller?: boolean; readonly blockOwnerDeletion?: boolean } = {},
): OwnerReference {
  const { apiVersion, kind } = owner;
  const { name, uid } = owner.metadata;
  if (apiVersion === undefined || kind === undefined || name === undefined || uid === undefined) {
    throw new Error('ownerRef: the owner must be a stored object with apiVersion, kind, name and uid');
  }
  const { controller = true, blockOwnerDeletion } = options;
  return {
    apiVersion,
    kind,
    name,
    uid,
    controller,
    ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
  };
}
