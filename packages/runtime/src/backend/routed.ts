import { OptionsError } from '../errors.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import type {
  Backend,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  ListOptions,
  ObjectList,
  Patch,
  PatchOptions,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from './backend.ts';
import type { Fence, FencedError } from './fence.ts';
import type { ResourceType } from './resource-type.ts';

/** A kind's identity for routing: every version of a group and plural lives in one backend. */
function routeKey(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${type.group}/${type.plural}`;
}

/**
 * A {@link Backend} that sends each kind to the backend that holds it: the kinds given to
 * {@link RoutedBackend.route} to theirs, every other kind to the default. A manager's backend is
 * one, so that `manager.client`, `manager.controller(type)` and the shared informers pick the
 * backend from the kind (a NATS KV primary beside Kubernetes secondaries) with no `backend` option
 * at each call. Every version of a group and plural goes to the same backend.
 *
 * @example
 * const backend = new RoutedBackend(kube);
 * backend.route(nats, [applicationType]);
 * await backend.get(applicationType, key); // from NATS
 * await backend.get(configMapType, key); // from Kubernetes
 */
export class RoutedBackend implements Backend {
  /** Where kinds without a route go. */
  readonly fallback: Backend;
  readonly #routes = new Map<string, { readonly backend: Backend; readonly type: ResourceType }>();

  constructor(fallback: Backend) {
    if (typeof fallback?.get !== 'function') throw new OptionsError('fallback', fallback, 'a Backend');
    this.fallback = fallback;
  }

  /**
   * Announces `fence` to the default backend and to every routed backend that fences: resolves to
   * the default backend's mark, undefined when the default backend does not fence; rejects with
   * the first {@link FencedError}.
   */
  async announceFence(fence: Fence, signal?: AbortSignal): Promise<Fence | undefined> {
    const others = new Set<Backend>();
    for (const { backend } of this.#routes.values()) if (backend !== this.fallback) others.add(backend);
    for (const backend of others) await backend.announceFence?.(fence, signal);
    return this.fallback.announceFence?.(fence, signal);
  }

  /** The default backend's name, then each routed backend's (`store+nats:127.0.0.1:4222`). */
  get name(): string {
    const others = new Set<string>();
    for (const { backend } of this.#routes.values()) others.add(backend.name);
    return [this.fallback.name, ...others].join('+');
  }

  /**
   * Sends `types` to `backend` from now on. A kind routed to another backend already is an
   * OptionsError (one kind, one home); routing it to the same backend again is a no-op.
   */
  route(backend: Backend, types: readonly ResourceType[]): void {
    if (typeof backend?.get !== 'function') throw new OptionsError('backend', backend, 'a Backend');
    if (!Array.isArray(types)) throw new OptionsError('types', types, 'an array of resource types');
    for (const [i, type] of types.entries()) {
      if (typeof type?.group !== 'string' || typeof type.plural !== 'string' || type.plural === '')
        throw new OptionsError(`types[${i}]`, type, 'a resource type with a group and a plural');
      const existing = this.#routes.get(routeKey(type));
      if (existing !== undefined && existing.backend !== backend) {
        throw new OptionsError(
          `types[${i}]`,
          `${type.plural}.${type.group}`,
          `a kind not routed already (it goes to ${existing.backend.name})`,
        );
      }
    }
    for (const type of types) this.#routes.set(routeKey(type), { backend, type });
  }

  /** The backend that holds `type`. */
  backendFor(type: Pick<ResourceType, 'group' | 'plural'>): Backend {
    return this.#routes.get(routeKey(type))?.backend ?? this.fallback;
  }

  resolveType(apiVersion: string, kind: string): ResourceType | undefined {
    const slash = apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    for (const { backend, type } of this.#routes.values()) {
      if (type.group !== group || type.kind !== kind) continue;
      return backend.resolveType?.(apiVersion, kind) ?? (type.version === version ? type : undefined);
    }
    return this.fallback.resolveType?.(apiVersion, kind);
  }

  /** A routed kind's type (from its backend when it knows more), else the default backend's answer. */
  async findResource(
    resource: { readonly group: string; readonly version: string; readonly resource: string },
    signal?: AbortSignal,
  ): Promise<ResourceType | undefined> {
    const route = this.#routes.get(routeKey({ group: resource.group, plural: resource.resource }));
    if (route !== undefined) {
      const found = await route.backend.findResource?.(resource, signal);
      if (found !== undefined) return found;
      return route.type.version === resource.version ? route.type : undefined;
    }
    return this.fallback.findResource?.(resource, signal);
  }

  get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<T> {
    return this.backendFor(type).get<T>(type, key, options);
  }

  list<T extends KubeObject = KubeObject>(type: ResourceType, options?: ListOptions): Promise<ObjectList<T>> {
    return this.backendFor(type).list<T>(type, options);
  }

  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options?: WatchOptions,
  ): AsyncIterable<WatchEvent<T>> {
    return this.backendFor(type).watch<T>(type, options);
  }

  create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.backendFor(type).create<T>(type, object, options);
  }

  update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.backendFor(type).update<T>(type, object, options);
  }

  updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.backendFor(type).updateStatus<T>(type, object, options);
  }

  patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.backendFor(type).patch<T>(type, key, patch, options);
  }

  delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<T>> {
    return this.backendFor(type).delete<T>(type, key, options);
  }
}
