import type { KubeObject, StatusCause } from '@converge/runtime';
import type { ApiResource, JsonObject } from './api-resource.ts';

/**
 * Schema handling of custom resources, provided by the CRD module (`../crd/index.ts`). Every hook
 * is optional: without them custom resources are served schemaless (nothing pruned, defaulted or
 * validated beyond metadata) and OpenAPI documents carry a permissive schema.
 */
export interface CustomResourceHooks {
  /**
   * Checks a CRD on create (`old` undefined) and update; returns 422 causes. Replaces the server's
   * own basic checks when installed.
   */
  validateCrd?(crd: JsonObject, old?: KubeObject): readonly StatusCause[];
  /**
   * Validates a custom resource against the schema of `version` and its `x-kubernetes-validations`
   * rules (`old` on updates, for transition rules and ratcheting); returns 422 causes and passes
   * warnings (ratcheted rule failures) to `warn`.
   */
  validateCustomResource?(
    crd: KubeObject,
    version: string,
    object: JsonObject,
    old?: KubeObject,
    warn?: (text: string) => void,
  ): readonly StatusCause[];
  /** Validates a `/status` write of a custom resource (`.status` against its schema, then the rules; 422 causes). */
  validateCustomResourceStatus?(
    crd: KubeObject,
    version: string,
    object: JsonObject,
    old?: KubeObject,
    warn?: (text: string) => void,
  ): readonly StatusCause[];
  /** Removes fields the schema does not know (in place); returns their paths (`spec.foo`). */
  pruneUnknownFields?(crd: KubeObject, version: string, object: JsonObject): readonly string[];
  /** Applies `default:` values of the schema (in place). */
  applyDefaults?(crd: KubeObject, version: string, object: JsonObject): void;
  /** The OpenAPI v3 schema of one version's kind (for `/openapi/v3` and `kubectl explain`). */
  openApiV3ForCrd?(crd: KubeObject, version: string): JsonObject | undefined;
  /**
   * The whole OpenAPI v3 document of a group/version served only by CRDs; replaces the server's
   * minimal document when installed.
   */
  openApiV3ForGroupVersion?(crds: readonly KubeObject[], group: string, version: string): JsonObject;
  /** The printer columns of a CRD version (for Tables). */
  printerColumns?(crd: KubeObject, version: string): readonly unknown[] | undefined;
}

/** Options of a strategic merge patch or server-side apply. */
export interface PatchContext {
  readonly resource: ApiResource;
  readonly fieldManager: string;
  /** `force=true` of an apply patch. */
  readonly force: boolean;
  /** `status` or undefined. */
  readonly subresource: string | undefined;
  readonly now: () => number;
}

/** Strategic merge patch and server-side apply, provided by the patch module (`../patch/index.ts`). */
export interface PatchHooks {
  /** Applies a strategic merge patch to `current` and returns the result (a fresh object). */
  applyStrategicMergePatch?(current: JsonObject, patch: unknown, context: PatchContext): JsonObject;
  /**
   * Applies `applied` as `context.fieldManager` to `current` (undefined: the object is created) and
   * returns the result with updated managedFields, a fresh object sharing nothing with its inputs;
   * throws a ConflictError on ownership conflicts. `current` is the stored object, frozen, and
   * neither input may be changed: a conflict retry applies the same `applied` again.
   */
  serverSideApply?(current: JsonObject | undefined, applied: JsonObject, context: PatchContext): JsonObject;
  /**
   * The `metadata.managedFields` of a non-apply write (create when `live` is undefined, update,
   * patch): the writer takes what it changed. An empty list means: store none. `live` is the
   * stored object, frozen; neither it nor `updated` may be changed.
   */
  recordManagedFields?(
    live: JsonObject | undefined,
    updated: JsonObject,
    context: PatchContext,
  ): readonly unknown[];
}

/** What a Table describes besides its objects. */
export interface TableOptions {
  /** The `includeObject` query parameter (`Metadata` by default). */
  readonly includeObject: 'None' | 'Metadata' | 'Object';
  readonly tableVersion: 'v1' | 'v1beta1';
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
  /** Leave out the column definitions (watch events after the first). */
  readonly noHeaders?: boolean;
  readonly nowMs: number;
}

/** Table output (`Accept: …;as=Table;g=meta.k8s.io`), provided by the table module (`../table/index.ts`). */
export interface TableHooks {
  /** A `meta.k8s.io` Table of `objects` (one row each) with the kind's columns. */
  toTable?(resource: ApiResource, objects: readonly JsonObject[], options: TableOptions): JsonObject;
}

/** Protobuf request bodies, provided by the protobuf module (`../protobuf/index.ts`). */
export interface ProtobufHooks {
  /**
   * Decodes a `k8s\0`-enveloped protobuf body into the JSON form of its object; `expected` is the
   * endpoint's apiVersion and kind (the defaults when the envelope omits them).
   */
  decodeProtobuf?(
    bytes: Uint8Array,
    expected: { readonly apiVersion: string; readonly kind: string },
  ): unknown;
}

/**
 * The hooks the HTTP core calls into for what other modules implement. Pass them as
 * `createApiServer({ extensions })`; each missing hook degrades as upstream would for an
 * unsupported feature (415 for strategic merge/apply patches, plain lists instead of Tables).
 */
export interface ApiServerExtensions extends CustomResourceHooks, PatchHooks, TableHooks, ProtobufHooks {}
