import {
  type JSONSchemaProps,
  type KubeObject,
  type ResourceType,
  resourceType,
  type ValidationRule,
} from '@converge/runtime';
import type { Static, TSchema } from 'typebox';
import { checkKindOptions, defaultPlural } from './options.ts';
import { structuralSchema } from './structural.ts';

/** A column `kubectl get` shows for a kind (a CRD's `additionalPrinterColumns` entry). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** A JSON path into the object, such as `.spec.replicas` or `.status.conditions[?(@.type=="Ready")].status`. */
  readonly jsonPath: string;
  readonly description?: string;
  /** 0 (default) shows in `kubectl get`; higher shows only with `-o wide`. */
  readonly priority?: number;
  readonly format?: string;
}

/** The scale subresource of a kind: where `kubectl scale` and autoscalers read and write replicas. */
export interface ScaleOptions {
  /** JSON path of the desired replicas, under `.spec.` (such as `.spec.replicas`). */
  readonly specReplicasPath: string;
  /** JSON path of the observed replicas, under `.status.`. */
  readonly statusReplicasPath: string;
  /** JSON path of the serialized label selector, under `.spec.` or `.status.`. */
  readonly labelSelectorPath?: string;
}

/** A CEL rule (`x-kubernetes-validations`) on the object's root: `self` is the whole object. */
export type KindValidation = Omit<ValidationRule, 'optionalOldSelf'> & { readonly optionalOldSelf?: boolean };

/**
 * What `defineKind` declares: the kind's names, its TypeBox `spec` (and `status`) schemas, and the
 * CRD's extras (printer columns, scale, root CEL rules). CEL rules on fields go into the TypeBox
 * options: `Type.String({ 'x-kubernetes-validations': [{ rule: 'self != ""' }] })`.
 */
export interface KindOptions<
  Spec extends TSchema = TSchema,
  Status extends TSchema | undefined = TSchema | undefined,
> {
  /** API group, a DNS subdomain with a dot (`example.com`). */
  readonly group: string;
  /** API version (`v1`, `v1alpha1`). */
  readonly version: string;
  /** PascalCase kind (`Website`). */
  readonly kind: string;
  /** Lower-case plural. Default: the kind lower-cased and pluralized (`websites`, `policies`). */
  readonly plural?: string;
  /** Lower-case singular. Default: the kind lower-cased. */
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  /** Groups of resources the kind belongs to (`kubectl get all` uses `all`). */
  readonly categories?: readonly string[];
  /** Default `'Namespaced'`. */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** Schema of `.spec`. */
  readonly spec: Spec;
  /** Schema of `.status`; when given, status is a subresource. */
  readonly status?: Status;
  /** Whether the API serves this version. Default true. */
  readonly served?: boolean;
  /** Whether objects are stored in this version; exactly one version of a CRD stores. Default true. */
  readonly storage?: boolean;
  /** Marks the version deprecated (kubectl warns with `deprecationWarning`). Default false. */
  readonly deprecated?: boolean;
  readonly deprecationWarning?: string;
  /** Description of the object's root schema (`kubectl explain`). */
  readonly description?: string;
  readonly printerColumns?: readonly PrinterColumn[];
  readonly scale?: ScaleOptions;
  /** CEL rules on the object's root (`x-kubernetes-validations`). */
  readonly validations?: readonly KindValidation[];
}

/** The object type of a kind: a {@link KubeObject} whose `spec` (and `status`) come from the schemas. */
export type KindObject<Spec extends TSchema, Status extends TSchema | undefined> = KubeObject & {
  readonly spec: Static<Spec>;
} & (Status extends TSchema ? { readonly status?: Static<Status> } : unknown);

/**
 * A kind declared with {@link defineKind}: its resource `type` (for controllers and clients), its
 * `options` as given, and `schema`, the structural `openAPIV3Schema` of this version.
 */
export interface Kind<T extends KubeObject = KubeObject> {
  readonly type: ResourceType<T>;
  readonly options: Readonly<KindOptions>;
  readonly schema: JSONSchemaProps;
}

/**
 * The object type of a kind: `ObjectOfKind<typeof website>`.
 *
 * @example
 * export type Website = ObjectOfKind<typeof website>;
 */
export type ObjectOfKind<K> = K extends Kind<infer T> ? T : never;

const kinds = new WeakMap<object, Kind>();

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The object's root: apiVersion, kind, metadata, spec (required) and status, plus root CEL rules. */
function rootSchema(options: KindOptions, kind: string): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: structuralSchema(kind, options.spec, 'spec'),
  };
  if (options.status !== undefined) properties.status = structuralSchema(kind, options.status, 'status');
  return deepFreeze({
    type: 'object',
    ...(options.description === undefined ? {} : { description: options.description }),
    properties,
    required: ['spec'],
    ...(options.validations === undefined || options.validations.length === 0
      ? {}
      : { 'x-kubernetes-validations': structuredClone(options.validations) }),
  });
}

/**
 * Declares a custom resource kind from TypeBox schemas: the object type is derived from them, the
 * CRD is generated from them ({@link crdsOf}), so the two cannot drift. Validates the options
 * (throws `KindOptionsError`) and converts the schemas to a Kubernetes structural schema (throws
 * `KindSchemaError` naming the path of what cannot be structural). The result is frozen.
 *
 * @example
 * import { defineKind, Type, type ObjectOfKind } from '@converge/kube';
 *
 * export const website = defineKind({
 *   group: 'example.com', version: 'v1', kind: 'Website', shortNames: ['ws'],
 *   spec: Type.Object({
 *     host: Type.String({ minLength: 1 }),
 *     replicas: Type.Optional(Type.Integer({ minimum: 0, default: 1 })),
 *   }),
 *   status: Type.Object({ readyReplicas: Type.Optional(Type.Integer()) }),
 *   printerColumns: [{ name: 'Host', type: 'string', jsonPath: '.spec.host' }],
 * });
 * export type Website = ObjectOfKind<typeof website>;
 * manager.controller(website.type).reconcile(async (site) => …);
 */
export function defineKind<const Spec extends TSchema, const Status extends TSchema | undefined = undefined>(
  options: KindOptions<Spec, Status>,
): Kind<KindObject<Spec, Status>> {
  checkKindOptions(options);
  const o = options as KindOptions;
  const plural = o.plural ?? defaultPlural(o.kind);
  const type = resourceType<KindObject<Spec, Status>>({
    group: o.group,
    version: o.version,
    kind: o.kind,
    plural,
    namespaced: (o.scope ?? 'Namespaced') === 'Namespaced',
    singular: o.singular ?? o.kind.toLowerCase(),
    ...(o.shortNames === undefined ? {} : { shortNames: Object.freeze([...o.shortNames]) }),
    statusSubresource: o.status !== undefined,
    generation: true,
    requireResourceVersionOnUpdate: true,
  });
  const schema = rootSchema(o, o.kind);
  const frozenOptions: KindOptions = Object.freeze({
    ...o,
    plural,
    ...(o.shortNames === undefined ? {} : { shortNames: Object.freeze([...o.shortNames]) }),
    ...(o.categories === undefined ? {} : { categories: Object.freeze([...o.categories]) }),
    ...(o.printerColumns === undefined
      ? {}
      : { printerColumns: deepFreeze(structuredClone(o.printerColumns)) }),
    ...(o.scale === undefined ? {} : { scale: Object.freeze({ ...o.scale }) }),
    ...(o.validations === undefined ? {} : { validations: deepFreeze(structuredClone(o.validations)) }),
  });
  const kind = Object.freeze({ type, options: frozenOptions, schema });
  kinds.set(type, kind as Kind);
  return kind as Kind<KindObject<Spec, Status>>;
}

/**
 * The kind a resource type was declared with by {@link defineKind}, or undefined for types made
 * otherwise (built-in kinds, `resourceType()`).
 *
 * @example
 * const crds = crdsOf(manager.permissions.types().map(kindOf).filter((k) => k !== undefined));
 */
export function kindOf<T extends KubeObject>(type: ResourceType<T>): Kind<T> | undefined {
  return kinds.get(type) as Kind<T> | undefined;
}
