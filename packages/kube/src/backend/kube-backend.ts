import {
  AbortedError,
  apiVersionOf,
  type Backend,
  checkFence,
  type DeleteOptions,
  type DeleteResult,
  FENCE_HEADER,
  type Fence,
  ForbiddenError,
  formatFenceHeader,
  type GetOptions,
  isConvergeError,
  isFenced,
  isNotFound,
  type KubeObject,
  type ListOptions,
  type NotFoundError,
  type ObjectKey,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type ResourceType,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '@converge/runtime';
import type { KubeConfig } from '../config/index.ts';
import { METADATA_OBJECT_ACCEPT, metadataOnlyObject, withTypeMeta } from '../decode/index.ts';
import { ResponseDecodeError } from '../errors.ts';
import {
  type KubeRequest,
  type KubeResponse,
  parseJson,
  readBody,
  Transport,
  transportError,
} from '../http/index.ts';
import { Discovery } from './discovery.ts';
import { listObjects } from './list-request.ts';
import {
  type KubeBackendOptions,
  type ResolvedKubeBackendOptions,
  resolveKubeBackendOptions,
} from './options.ts';
import { resourcePath } from './paths.ts';
import { type WatchContext, type WatchCounters, watchEvents } from './watch.ts';
import {
  deleteBody,
  deleteResult,
  nameOf,
  namespaceFor,
  objectBody,
  PATCH_CONTENT_TYPES,
  patchBody,
} from './write-requests.ts';

/** Counters of a {@link KubeBackend}, for metrics and tests. */
export interface KubeBackendStats extends WatchCounters {
  /** HTTP requests sent (retries included). */
  readonly requests: number;
  /** Requests retried after a 429 (or a 5xx with Retry-After). */
  readonly throttled: number;
  /** Requests retried after refreshing credentials on a 401. */
  readonly reauthenticated: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where Converge's embedded API server takes fence announcements. */
const FENCES_PATH = '/converge/fences';

/** The request headers of a write made for `fence` (none without one). */
function fenceHeaders(fence: Fence | undefined): { readonly headers?: Record<string, string> } {
  return fence === undefined ? {} : { headers: { [FENCE_HEADER]: formatFenceHeader(fence) } };
}

/**
 * The Backend over the Kubernetes HTTP API — a real cluster or Converge's embedded API server —
 * over one keep-alive undici pool (create one backend per cluster and share it: informers,
 * clients and leases all multiplex onto its connections).
 *
 * - **Metadata only.** `get`, `list` and `watch` with `metadataOnly` ask the server for
 *   `meta.k8s.io/v1` PartialObjectMetadata(List) (`Accept: application/json;as=…;g=meta.k8s.io;v=v1`,
 *   falling back to plain JSON): only metadata travels, and objects are handed out as
 *   `{ apiVersion, kind, metadata }` of the read kind; a server that answers with full objects has
 *   them projected on arrival.
 * - **Reads.** `get`; `list` with selectors, `limit`/`continue` and `resourceVersion`(`Match`)
 *   passed through, the response decoded item by item as it streams in (a large list never blocks
 *   the event loop), items given the `apiVersion`/`kind` real servers leave out; `watch` (see
 *   {@link watchEvents}): bookmarks, random 5–10 min `timeoutSeconds`, stall detection, line cap,
 *   ERROR events as typed errors (410 → `ExpiredError`), clean end on abort, `sendInitialEvents`.
 * - **Writes.** create, update, updateStatus (the `status` subresource when the type has one),
 *   patch (merge, JSON, strategic merge, server-side apply with `fieldManager` and `force`), delete
 *   (propagation, preconditions, dry run; `deleted` vs `pending` from a Status or an object).
 * - **Errors.** Every error response becomes the runtime's typed error from its `metav1.Status`;
 *   429 is retried after its `Retry-After` up to `maxRetries` times, then thrown as
 *   `TooManyRequestsError` with `details.retryAfterSeconds`.
 * - **Namespaces.** A namespaced object or key without a namespace uses the config's namespace
 *   (kubectl's rule); a namespace on a cluster-scoped object is a `BadRequestError`.
 * - **Types.** `resolveType` answers from discovery once {@link discover} ran; {@link resolve}
 *   refreshes discovery on a miss.
 *
 * @example
 * const backend = new KubeBackend({ config: loadKubeconfig({ env: process.env }), fieldManager: 'my-operator' });
 * await backend.discover();
 * const deployments = backend.resolveType('apps/v1', 'Deployment');
 * const informer = new Informer({ backend, type: deployments!, namespace: 'default' });
 */
export class KubeBackend implements Backend {
  readonly name: string;
  readonly config: KubeConfig;
  readonly #o: ResolvedKubeBackendOptions;
  readonly #transport: Transport;
  readonly #discovery: Discovery;
  readonly #watch: WatchContext;
  readonly #counters: WatchCounters = { watches: 0, stalledWatches: 0, watchListFallbacks: 0 };

  #fencing: boolean | undefined;

  constructor(options: KubeBackendOptions) {
    this.#o = resolveKubeBackendOptions(options);
    this.name = this.#o.name;
    this.config = this.#o.config;
    const logger = this.#o.logger.child({ backend: this.name });
    this.#transport = new Transport({ ...this.#o, logger });
    this.#discovery = new Discovery(this.#transport, this.#o.clock, logger);
    this.#watch = {
      options: this.#o,
      transport: this.#transport,
      logger,
      counters: this.#counters,
      state: { watchListUnsupported: false },
      list: (type, listOptions) => this.list(type, listOptions),
    };
  }

  /** The cached type serving `apiVersion` + `kind` (undefined before {@link discover}). */
  resolveType(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#discovery.lookup(apiVersion, kind);
  }

  /** Like {@link resolveType}, refreshing discovery on a miss (kinds registered since are found). */
  resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceType | undefined> {
    return this.#discovery.resolve(apiVersion, kind, signal);
  }

  /**
   * The type serving a GroupVersionResource, from API discovery (refreshed on a miss, at most
   * once a second): how `DynamicController.serve` takes a bare `{ group, version, resource }`.
   */
  findResource(
    resource: { readonly group: string; readonly version: string; readonly resource: string },
    signal?: AbortSignal,
  ): Promise<ResourceType | undefined> {
    return this.#discovery.resolveResource(resource.group, resource.version, resource.resource, signal);
  }

  /** Loads (or reloads) API discovery; returns every served kind. */
  async discover(signal?: AbortSignal): Promise<ResourceType[]> {
    await this.#discovery.refresh(signal);
    return this.#discovery.types();
  }

  stats(): KubeBackendStats {
    return { ...this.#counters, ...this.#transport.counters };
  }

  /** Closes the connection pool; open watches end. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: GetOptions = {},
  ): Promise<T> {
    const namespace = namespaceFor(type, key.namespace, this.config.namespace);
    return this.#object<T>(
      type,
      { method: 'GET', path: resourcePath(type, namespace, key.name), signal: options.signal },
      options.metadataOnly === true,
    );
  }

  async list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    return listObjects<T>(this.#transport, type, options, this.#o.maxWatchLineBytes);
  }

  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    return { [Symbol.asyncIterator]: () => watchEvents<T>(this.#watch, type, options) };
  }

  async create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const namespace = namespaceFor(type, object.metadata?.namespace, this.config.namespace);
    return this.#write<T>(type, 'POST', resourcePath(type, namespace), objectBody(type, object), options);
  }

  async update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const namespace = namespaceFor(type, object.metadata?.namespace, this.config.namespace);
    const path = resourcePath(type, namespace, nameOf(type, object));
    return this.#write<T>(type, 'PUT', path, objectBody(type, object), options);
  }

  async updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    const namespace = namespaceFor(type, object.metadata?.namespace, this.config.namespace);
    const sub = type.statusSubresource === true ? 'status' : undefined;
    const path = resourcePath(type, namespace, nameOf(type, object), sub);
    return this.#write<T>(type, 'PUT', path, objectBody(type, object), options);
  }

  async patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options: PatchOptions = {},
  ): Promise<T> {
    const namespace = namespaceFor(type, key.namespace, this.config.namespace);
    const path = resourcePath(type, namespace, key.name, options.subresource);
    const force = patch.type === 'apply' && patch.force === true ? { force: 'true' } : {};
    return this.#write<T>(type, 'PATCH', path, patchBody(type, key, namespace, patch), options, {
      contentType: PATCH_CONTENT_TYPES[patch.type],
      query: force,
    });
  }

  async delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: DeleteOptions = {},
  ): Promise<DeleteResult<T>> {
    const namespace = namespaceFor(type, key.namespace, this.config.namespace);
    const request: KubeRequest = {
      method: 'DELETE',
      path: resourcePath(type, namespace, key.name),
      body: deleteBody(options),
      contentType: 'application/json',
      signal: options.signal,
      ...fenceHeaders(options.fence),
    };
    const response = await this.#transport.send(request);
    const body = await this.#json(response, `delete ${type.plural}`, options.signal);
    return deleteResult<T>(type, response.status, body);
  }

  #write<T extends KubeObject>(
    type: ResourceType,
    method: 'POST' | 'PUT' | 'PATCH',
    path: string,
    body: string,
    options: WriteOptions,
    extra: { contentType?: string; query?: Record<string, string> } = {},
  ): Promise<T> {
    return this.#object<T>(type, {
      method,
      path,
      body,
      contentType: extra.contentType ?? 'application/json',
      query: {
        fieldManager: options.fieldManager ?? this.#o.fieldManager,
        ...(options.dryRun === true ? { dryRun: 'All' } : {}),
        ...extra.query,
      },
      signal: options.signal,
      ...fenceHeaders(options.fence),
    });
  }

  /**
   * Announces a fence to the server (`POST /converge/fences`, served by Converge's embedded API
   * server), which then refuses writes carrying a lower epoch of its name. A server without the
   * endpoint (404: a Kubernetes cluster) cannot fence this way: resolves to undefined, and
   * {@link KubeBackend.fencing} says `false` (fence there with the admission policy `converge
   * manifests` generates, see `docs/guide/fencing.md`).
   */
  async announceFence(fence: Fence, signal?: AbortSignal): Promise<Fence | undefined> {
    checkFence(fence);
    let response: KubeResponse;
    try {
      response = await this.#transport.send({
        method: 'POST',
        path: FENCES_PATH,
        body: JSON.stringify({ name: fence.name, holder: fence.holder, epoch: fence.epoch }),
        contentType: 'application/json',
        signal,
      });
    } catch (error) {
      // A Kubernetes API server answers 404 (with RBAC allowing the path) or 403 (without): it does
      // not fence. A stale fence is a 403 too, but decoded as a FencedError: that one is real.
      const unserved = isNotFound(error) || (error instanceof ForbiddenError && !isFenced(error));
      if (!unserved) throw error;
      if (this.#fencing !== false) {
        this.#o.logger.info(
          { server: this.config.server, status: (error as ForbiddenError | NotFoundError).status },
          'The API server does not take fence announcements (not converge serve, or RBAC does not allow POST /converge/fences)',
        );
      }
      this.#fencing = false;
      return undefined;
    }
    const body = await this.#json(response, 'POST fences', signal);
    this.#fencing = true;
    const mark = body as Partial<Fence>;
    return { name: String(mark.name), holder: String(mark.holder), epoch: Number(mark.epoch) };
  }

  /** Whether the server fences writes (known after the first {@link KubeBackend.announceFence}). */
  get fencing(): boolean | undefined {
    return this.#fencing;
  }

  async #object<T extends KubeObject>(
    type: ResourceType,
    request: KubeRequest,
    metadataOnly = false,
  ): Promise<T> {
    const response = await this.#transport.send(
      metadataOnly ? { ...request, accept: METADATA_OBJECT_ACCEPT } : request,
    );
    const what = `${request.method} ${type.plural}`;
    const body = await this.#json(response, what, request.signal);
    const meta = { apiVersion: apiVersionOf(type), kind: type.kind };
    if (metadataOnly) return metadataOnlyObject<T>(body, meta, what, '(body)');
    if (!isObject(body) || !isObject(body.metadata)) {
      throw new ResponseDecodeError(what, '(body)', 'is not an object with metadata');
    }
    return withTypeMeta<T>(body, meta);
  }

  /** Reads and parses a whole response body, with typed errors for aborts and broken connections. */
  async #json(response: KubeResponse, what: string, signal: AbortSignal | undefined): Promise<unknown> {
    let bytes: Buffer;
    try {
      bytes = await readBody(response.body, this.#o.maxResponseBytes, what);
    } catch (error) {
      if (signal?.aborted === true) throw new AbortedError(`${what} aborted`, { cause: error });
      throw isConvergeError(error) ? error : transportError(what, error);
    }
    return parseJson(bytes, what);
  }
}
