import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';

/**
 * The least an object shape must have for a client to read and write it: optional `apiVersion`,
 * `kind` and `metadata` with optional name, namespace, uid and resourceVersion. Converge's own kinds
 * ({@link KubeObject} and everything extending it), `@kubernetes/client-node`'s models (whose
 * timestamps are `Date`s) and `kubernetes-types`' interfaces (whose `metadata` is optional) all fit.
 *
 * @example
 * function describe<T extends KubeObjectLike>(object: T): string {
 *   return `${object.kind ?? '?'} ${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
 * }
 */
export interface KubeObjectLike {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata?:
    | {
        readonly name?: string | undefined;
        readonly namespace?: string | undefined;
        readonly uid?: string | undefined;
        readonly resourceVersion?: string | undefined;
      }
    | undefined;
}

/** Names the type-only member of {@link ResourceType}; no value ever carries it. */
declare const objectShape: unique symbol;

/**
 * A kind of object a backend serves (Kubernetes' GroupVersionKind + resource).
 *
 * `T` is the shape of its objects, for the type checker only: a client given a
 * `ResourceType<Deployment>` returns `Deployment`s without an explicit type argument. A
 * `ResourceType` written without one stands for {@link KubeObject}s, as before.
 *
 * @example
 * const websiteType: ResourceType<Website> = resourceType({
 *   group: 'example.com', version: 'v1', kind: 'Website', plural: 'websites', namespaced: true,
 * });
 * const site = await client.get(websiteType, { namespace: 'default', name: 'home' }); // a Website
 */
export interface ResourceType<T extends KubeObjectLike = KubeObject> {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural resource name, as in URLs (`configmaps`). */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Lower-case singular name. Default: `kind` lower-cased. */
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  /** Whether `status` is a subresource: the main resource ignores `.status`, `updateStatus` ignores the rest. */
  readonly statusSubresource?: boolean;
  /**
   * Whether the backend tracks `metadata.generation` (1 on create, +1 when anything outside
   * metadata and status changes). Default true; Kubernetes does not for ConfigMap, Secret, Namespace,
   * Lease, Event, Pod, Service and others — the built-in kind constants (`configMapType`, …) say.
   */
  readonly generation?: boolean;
  /** Whether an update must carry a resourceVersion (custom resources: true). Default false. */
  readonly requireResourceVersionOnUpdate?: boolean;
  /** Type-level only, never present at runtime: the shape of this type's objects. */
  readonly [objectShape]?: T;
}

/**
 * The object shape of a resource type: `ObjectOf<typeof deploymentType>` is `Deployment`; a plain
 * `ResourceType` (or an object literal typed as one) gives {@link KubeObject}; a union of resource
 * types gives the union of their shapes.
 *
 * @example
 * type Owned = ObjectOf<typeof configMapType | typeof deploymentType>; // ConfigMap | Deployment
 */
export type ObjectOf<R> = R extends { readonly [objectShape]?: infer T }
  ? T extends KubeObjectLike
    ? T
    : KubeObject
  : KubeObject;

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** A stable id of a type within a backend: `group/version/plural` (version included). */
export function typeId(type: Pick<ResourceType, 'group' | 'version' | 'plural'>): string {
  return `${type.group}/${type.version}/${type.plural}`;
}

/** `plural.group` (or `plural` for core), the resource name used in errors (`configmaps "x" not found`). */
export function qualifiedResource(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Validates and normalises a resource type; throws {@link OptionsError} naming the bad field.
 * The result is frozen, with `singular` filled in; its object shape is the one asked for.
 *
 * @example
 * export const websiteType = resourceType<Website>({
 *   group: 'example.com', version: 'v1', kind: 'Website', plural: 'websites', namespaced: true,
 *   statusSubresource: true,
 * });
 */
export function resourceType<T extends KubeObjectLike = KubeObject>(type: ResourceType<T>): ResourceType<T> {
  if (typeof type !== 'object' || type === null)
    throw new OptionsError('type', type, 'a ResourceType object');
  if (typeof type.group !== 'string')
    throw new OptionsError('type.group', type.group, "a string ('' for core)");
  if (typeof type.version !== 'string' || !DNS_LABEL.test(type.version)) {
    throw new OptionsError('type.version', type.version, 'a DNS label such as v1');
  }
  if (typeof type.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(type.kind)) {
    throw new OptionsError('type.kind', type.kind, 'a PascalCase kind such as ConfigMap');
  }
  if (typeof type.plural !== 'string' || !DNS_LABEL.test(type.plural)) {
    throw new OptionsError('type.plural', type.plural, 'a lower-case plural such as configmaps');
  }
  if (typeof type.namespaced !== 'boolean')
    throw new OptionsError('type.namespaced', type.namespaced, 'a boolean');
  return Object.freeze({ ...type, singular: type.singular ?? type.kind.toLowerCase() });
}
