import type { ResourceType } from '../backend/index.ts';
import type { CacheReader } from '../cache/index.ts';
import type { KubeObject } from '../object/index.ts';
import type { ReconcileContext, ReconcileReturn } from '../reconcile/index.ts';

/** A kind as the dynamic controller names it: Kubernetes' GroupVersionResource. */
export interface GroupVersionResource {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural resource name (`configmaps`). */
  readonly resource: string;
}

/**
 * What a dynamic controller's handler is asked to reconcile: one object of one kind. The same
 * namespace/name in two kinds are two requests. Cluster-scoped objects have namespace ''.
 */
export interface KindRequest {
  readonly kind: GroupVersionResource;
  readonly namespace: string;
  readonly name: string;
}

/** What a kind's handler gets besides its request. */
export interface KindContext extends ReconcileContext {
  /**
   * Aborts when the reconcile times out, the controller stops, or the kind stops being served
   * (then with a `KindStoppedError`).
   */
  readonly signal: AbortSignal;
  /** The served resource type of the request. */
  readonly type: ResourceType;
  /** The kind's informer cache: read the object here (`cache.get(request)`). */
  readonly cache: CacheReader<KubeObject>;
}

/** The handler of one kind, as an object. Never called concurrently for the same request. */
export interface KindReconciler {
  reconcile(request: KindRequest, context: KindContext): ReconcileReturn | Promise<ReconcileReturn>;
}

/** A handler of one kind: a {@link KindReconciler} or its `reconcile` function. */
export type KindHandler = KindReconciler | KindReconciler['reconcile'];

/** Options of one served kind. */
export interface ServeOptions {
  /**
   * At most this many of the controller's shared workers may reconcile this kind at once.
   * Default: no limit beyond `workers`.
   */
  readonly maxConcurrent?: number;
  /**
   * Whether updates whose `metadata.generation` did not change are dropped (kro's behaviour: status
   * and metadata-only writes do not reconcile). Default: the controller's `filterUnchangedGeneration`.
   */
  readonly filterUnchangedGeneration?: boolean;
  /** Watch one namespace only. Default: all namespaces. */
  readonly namespace?: string;
  /** Watch only objects matching this label selector. */
  readonly labelSelector?: string;
  /**
   * Watch and cache only the kind's metadata: the kind's informer is the shared metadata-only one,
   * and `context.cache` holds `PartialObjectMetadata` objects (`{ apiVersion, kind, metadata }`),
   * never the bodies. For handlers that act on metadata alone (finalizers, labels, owner
   * references, deletion) across many kinds. Serving the kind again with another value moves it to
   * the other informer. Default false.
   */
  readonly metadataOnly?: boolean;
}

/** The served-kinds side of a dynamic controller: what a kind source (like CRD following) drives. */
export interface ServesKinds {
  /**
   * Serves `type` with `handler`. A new kind: its informer starts; once running, resolves after its
   * cache synced and every existing object was enqueued. A kind already served: the handler (and
   * options) are replaced and every cached object is enqueued again.
   */
  serve<T extends KubeObject = KubeObject>(
    type: ResourceType<T>,
    handler: KindHandler,
    options?: ServeOptions,
  ): Promise<void>;
  /**
   * Stops serving `type`: its informer is released, its queued keys are dropped, its in-flight
   * reconciles see their signal abort; resolves once they finished. A kind not served: resolves.
   */
  stopServing(type: GroupVersionResource | ResourceType): Promise<void>;
  /** The kinds served now. */
  served(): ResourceType[];
}

/** `group/version/resource`, the id of a kind in keys, partitions, logs and metrics. */
export function kindId(kind: GroupVersionResource | ResourceType): string {
  const resource = 'resource' in kind ? kind.resource : kind.plural;
  return `${kind.group}/${kind.version}/${resource}`;
}

/** The GroupVersionResource of a resource type. */
export function gvrOf(type: ResourceType | GroupVersionResource): GroupVersionResource {
  if ('resource' in type) return { group: type.group, version: type.version, resource: type.resource };
  return { group: type.group, version: type.version, resource: type.plural };
}
