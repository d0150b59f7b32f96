import type { KubeObject, ResourceType, StatusCause } from '@converge/runtime';

/** A mutable JSON object inside the request pipeline. */
export type JsonObject = Record<string, unknown>;

/** A mutable object with metadata, as handlers and strategies see it. */
export type MutableObject = JsonObject & { metadata: JsonObject };

/** Where the scale subresource reads and writes replicas (JSON paths as in a CRD's `subresources.scale`). */
export interface ScaleSpec {
  /** `.spec.replicas` */
  readonly specReplicasPath: string;
  /** `.status.replicas` */
  readonly statusReplicasPath: string;
  /** A path to a string selector (`.status.selector`), for custom resources. */
  readonly labelSelectorPath?: string;
  /** Built-in workloads: `status.selector` is `spec.selector` (a LabelSelector) rendered as a string. */
  readonly selectorFromSpec?: boolean;
  /** With `selectorFromSpec`: `spec.selector` is a label map (ReplicationControllers). */
  readonly selectorIsMap?: boolean;
}

/** What a strategy hook knows about the request. */
export interface StrategyContext {
  /** The namespace of the request ('' for cluster-scoped). */
  readonly namespace: string;
  /** `fieldValidation`: what to do with unknown fields. */
  readonly fieldValidation: 'Ignore' | 'Warn' | 'Strict';
  /** Collects `Warning: 299` headers. */
  readonly warn: (text: string) => void;
  readonly now: () => number;
  /** Randomness from the server's clock (cluster IPs). */
  readonly random: () => number;
}

/**
 * The per-kind rules of kube-apiserver's registry strategies that the store does not apply
 * itself. Hooks mutate `object` in place and return field causes (a 422) when it is invalid.
 */
export interface Strategy {
  /** PUT to a missing object creates it (Lease, Endpoints). Default false. */
  readonly allowCreateOnUpdate?: boolean;
  /** DELETE answers with the deleted object (Pod, ServiceAccount) instead of a Success Status. */
  readonly returnDeletedObject?: boolean;
  /** Defaults and server-set fields on create; returns validation causes. */
  prepareForCreate?(object: MutableObject, context: StrategyContext): readonly StatusCause[] | undefined;
  /** The same on update of the main resource, knowing the stored object. */
  prepareForUpdate?(
    object: MutableObject,
    old: KubeObject,
    context: StrategyContext,
  ): readonly StatusCause[] | undefined;
  /** Status written through `/status` (after the store keeps only `.status`): validation only. */
  validateStatus?(object: MutableObject, old: KubeObject): readonly StatusCause[] | undefined;
}

/**
 * Converts between a served version and the stored representation (same objects, other shape).
 * Synchronous for built-in views and CRD `conversion: None`; asynchronous through a CRD's
 * conversion webhook.
 */
export interface VersionConverter {
  /** The served shape → the stored shape (for writes). */
  toStorage(object: JsonObject): JsonObject | Promise<JsonObject>;
  /** The stored shape → the served shape (for reads and watch events). */
  fromStorage(object: KubeObject): JsonObject | Promise<JsonObject>;
  /** Many stored objects at once (a list: one conversion webhook call); default one by one. */
  fromStorageMany?(objects: readonly KubeObject[]): Promise<JsonObject[]>;
}

/** Converts objects of a kind between its versions (`apiVersion` → another served version). */
export interface ObjectConversion {
  /**
   * The objects in `desiredApiVersion`, in order; those already in it are returned as they are.
   * `listKind` marks a list (converted in one call).
   */
  convert(
    objects: readonly JsonObject[],
    desiredApiVersion: string,
    listKind?: string,
  ): Promise<JsonObject[]>;
}

/**
 * One served REST resource: a group/version/plural with its kind, discovery data, the store type
 * that holds its objects, and its strategy. Several versions of one kind (CRD versions,
 * `events.k8s.io/v1` Events) share one store type through a {@link VersionConverter}.
 */
export interface ApiResource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  /** The store type holding the objects. */
  readonly storage: ResourceType;
  /**
   * Present when this version is not the stored one, or when the stored shape is served otherwise
   * (core/v1 Events with Go's zero values written out).
   */
  readonly converter?: VersionConverter;
  /** Conversion between the versions of a custom resource (admission's `matchPolicy: Equivalent`). */
  readonly conversion?: ObjectConversion;
  /** Whether `/status` is served. */
  readonly statusSubresource: boolean;
  /** Whether `/status` must be emulated here (the store type has no status subresource). */
  readonly emulateStatus?: boolean;
  readonly scale?: ScaleSpec;
  readonly strategy: Strategy;
  /** Fields beyond `metadata.name`/`metadata.namespace` that field selectors accept. */
  readonly selectableFields: readonly string[];
  /** Reads a selectable field (default: the dotted path). */
  readonly fieldValue?: (object: KubeObject, path: string) => string | undefined;
  /** Known top-level fields of a built-in kind (unknown ones are dropped, warned or rejected). */
  readonly topLevelFields?: ReadonlySet<string>;
  /** The CustomResourceDefinition serving this resource, for custom resources. */
  readonly crd?: KubeObject;
  /** Patch types accepted besides merge and JSON patch. */
  readonly strategicMergePatch: boolean;
  /** Subresources served by their own handlers (`pods/log`, `serviceaccounts/token`), for discovery. */
  readonly subresources?: readonly SubresourceInfo[];
}

/** A subresource as discovery lists it (besides `status` and `scale`). */
export interface SubresourceInfo {
  readonly name: string;
  /** The kind it takes or answers, in `group`/`version` when those differ from the parent's. */
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
}

/** `group/version` or `version` for the core group. */
export function groupVersion(resource: Pick<ApiResource, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** `plural.group` or `plural` for the core group. */
export function qualifiedName(resource: Pick<ApiResource, 'group' | 'plural'>): string {
  return resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
}

/** The verbs of a resource with every REST verb. */
export const ALL_VERBS: readonly string[] = Object.freeze([
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
]);
