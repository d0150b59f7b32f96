import type { KubeObject, ObjectKey, PartialObjectMetadata } from '../object/index.ts';
import type { Fence, FencedError } from './fence.ts';
import type { KubeObjectLike, ResourceType } from './resource-type.ts';

/** Selects objects by labels and fields, in Kubernetes' string syntax (`app=web,tier!=db`). */
export interface SelectorOptions {
  /** Namespace scope; undefined or '' means all namespaces. */
  readonly namespace?: string;
  /** Label selector: `=`, `==`, `!=`, `in (…)`, `notin (…)`, `key`, `!key`, comma = AND. */
  readonly labelSelector?: string;
  /** Field selector: `metadata.name` and `metadata.namespace` with `=`, `==`, `!=`. */
  readonly fieldSelector?: string;
}

/**
 * Asks a read for metadata only (controller-runtime's `OnlyMetadata`, kube-rs' `metadata_watcher`).
 * Every object it returns is then a {@link PartialObjectMetadata}: `{ apiVersion, kind, metadata }`
 * with the read kind's apiVersion and kind (never `meta.k8s.io/v1` `PartialObjectMetadata`), and
 * nothing else. A backend that can reduce what travels does (a Kubernetes API server is asked
 * for `PartialObjectMetadata`; the in-process store hands out its stored metadata without the
 * body); every other backend projects each object before returning it, so the mode works on all.
 */
export interface MetadataOnlyOption {
  /** Only `apiVersion`, `kind` and `metadata` of each object. Default false. */
  readonly metadataOnly?: boolean;
}

/** Options of a get. */
export interface GetOptions extends MetadataOnlyOption {
  readonly signal?: AbortSignal;
}

export interface ListOptions extends SelectorOptions, MetadataOnlyOption {
  /** Page size. A list with `limit` returns at most that many items and a `continue` token. */
  readonly limit?: number;
  /** Token of the next page; every page is served from the first page's snapshot. */
  readonly continue?: string;
  /** undefined: latest; '0': any; 'N': not older than N (or exactly N with `resourceVersionMatch: 'Exact'`). */
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /**
   * KEP-5866 shard selector (Kubernetes 1.36 `ShardedListAndWatch`, alpha):
   * `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`, ranges joined
   * by `||`. Only objects whose 64-bit FNV-1a hash of the field falls in a range are listed;
   * undefined or '' lists all. Malformed: a BadRequestError. Every backend honours it (the
   * Kubernetes one also filters what a server without the feature gate sent). Build one with
   * `shardSelectorFor(index, count)`.
   */
  readonly shardSelector?: string;
  readonly signal?: AbortSignal;
}

/** One page of a list. */
export interface ObjectList<T extends KubeObject = KubeObject> {
  readonly items: readonly T[];
  /** The revision the list was taken at. */
  readonly resourceVersion: string;
  /** Token of the next page, absent on the last page. */
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

export interface WatchOptions extends SelectorOptions, MetadataOnlyOption {
  /**
   * Start point: events with a higher revision. undefined or '0': first a synthetic ADDED for
   * every matching object, then live events. Too old: the watch throws an ExpiredError.
   */
  readonly resourceVersion?: string;
  /** Ask for BOOKMARK events (progress notifications). */
  readonly allowBookmarks?: boolean;
  /** With resourceVersion '' or '0': initial ADDED events then a BOOKMARK marked initialEventsEnd. */
  readonly sendInitialEvents?: boolean;
  /** End the watch cleanly after this long. */
  readonly timeoutMs?: number;
  /** As {@link ListOptions.shardSelector}: only events of objects in the shard. */
  readonly shardSelector?: string;
  /**
   * The caller drops `metadata.managedFields` from every object (an informer with the default
   * transform does): a backend may leave them out instead of decoding them. A hint, not a filter:
   * objects may still carry them. The Kubernetes backend cuts them out of each watch line's text
   * before parsing it; the others ignore it. Default false.
   */
  readonly omitManagedFields?: boolean;
  /** Ends the watch (the iterator returns). */
  readonly signal?: AbortSignal;
}

/** A change seen by a watch. DELETED carries the last state, with the deletion's resourceVersion. */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | {
      readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
      readonly object: T;
      /**
       * DELETED only: the backend removed the object's history with it (a NATS KV purge), where
       * it can tell a purge from a delete.
       */
      readonly purged?: boolean;
    }
  | {
      readonly type: 'BOOKMARK';
      readonly resourceVersion: string;
      /** True for the bookmark that ends the initial events of a `sendInitialEvents` watch. */
      readonly initialEventsEnd?: boolean;
    };

export interface WriteOptions {
  /** Validate and return the result without persisting it. */
  readonly dryRun?: boolean;
  /** The field manager recorded for this write. */
  readonly fieldManager?: string;
  readonly signal?: AbortSignal;
  /**
   * The ownership this write is made for. A backend that fences ({@link Backend.announceFence})
   * refuses it with a {@link FencedError} once a higher epoch of the fence's name was announced or
   * written; others ignore it.
   */
  readonly fence?: Fence;
}

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'move' | 'copy'; readonly from: string; readonly path: string };

/** A patch: JSON merge (RFC 7386), JSON patch (RFC 6902), strategic merge or server-side apply. */
export type Patch =
  | { readonly type: 'merge'; readonly patch: unknown }
  | { readonly type: 'json'; readonly patch: readonly JsonPatchOperation[] }
  | { readonly type: 'strategic'; readonly patch: unknown }
  | { readonly type: 'apply'; readonly patch: unknown; readonly force?: boolean };

export interface PatchOptions extends WriteOptions {
  /** Patch the status subresource instead of the main resource. */
  readonly subresource?: 'status';
}

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface DeleteOptions {
  /** Default Background. */
  readonly propagationPolicy?: PropagationPolicy;
  /** The delete fails with a Conflict unless the object still has this uid / resourceVersion. */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
  readonly signal?: AbortSignal;
  /** As {@link WriteOptions.fence}. */
  readonly fence?: Fence;
}

/** A delete either removed the object or started its deletion (finalizers pending). */
export type DeleteResult<T extends KubeObjectLike = KubeObject> =
  | { readonly status: 'deleted' }
  | { readonly status: 'pending'; readonly object: T };

/** Reads of a backend. */
export interface BackendReader {
  get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<T>;
  list<T extends KubeObject = KubeObject>(type: ResourceType, options?: ListOptions): Promise<ObjectList<T>>;
  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options?: WatchOptions,
  ): AsyncIterable<WatchEvent<T>>;
}

/** Writes of a backend. Every write returns the object as stored. */
export interface BackendWriter {
  create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T>;
  /** Replaces the object; a stale `metadata.resourceVersion` is a ConflictError. Ignores `.status` if it is a subresource. */
  update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T>;
  /** Replaces only `.status` (when status is a subresource; otherwise like update). */
  updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T>;
  patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T>;
  delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<T>>;
}

/**
 * Where objects live: the in-process store, a Kubernetes API server over HTTP, a NATS KV bucket.
 * Every implementation speaks Kubernetes-shaped objects and Kubernetes semantics, errors are typed
 * ({@link NotFoundError}, {@link ConflictError}, …), and each passes `runBackendSuite`.
 */
export interface Backend extends BackendReader, BackendWriter {
  /** A name for logs (`store`, `kube:https://…`, `nats:…`). */
  readonly name: string;
  /** The resource type serving `apiVersion` + `kind`, if the backend knows it. */
  resolveType?(apiVersion: string, kind: string): ResourceType | undefined;
  /**
   * The resource type serving a group, version and resource (the lower-case plural: Kubernetes'
   * GroupVersionResource), if the backend serves it. A backend with API discovery (a Kubernetes
   * API server) refreshes it on a miss, so a kind registered since is found.
   */
  findResource?(
    resource: { readonly group: string; readonly version: string; readonly resource: string },
    signal?: AbortSignal,
  ): Promise<ResourceType | undefined>;
  /**
   * Present on backends that fence writes server-side: tells the backend a holder took `fence`
   * (its mark for the name rises to it), so from now on writes carrying a lower epoch of the name
   * are refused. Resolves to the mark; rejects with a {@link FencedError} (whose `current` is the
   * mark) if the backend already has a higher epoch, or this epoch from another holder. A new
   * owner announces before it writes anything. Resolves to undefined when the backend found it
   * cannot fence after all (a Kubernetes API server that does not serve Converge's fences).
   */
  announceFence?(fence: Fence, signal?: AbortSignal): Promise<Fence | undefined>;
}
