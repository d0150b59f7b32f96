import {
  type Backend,
  type DeleteOptions,
  type DeleteResult,
  NotFoundError,
  type Patch,
  type PatchOptions,
  qualifiedResource,
  type ResourceType,
  typeId,
  type WriteOptions,
} from '../backend/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { type KubeObject, keyToString, type ObjectKey } from '../object/index.ts';
import { durationMs, integer } from '../options.ts';
import { objectSelector } from '../selector/index.ts';
import { type ObjectReader, PendingWrites } from './pending-writes.ts';

/** Gives the client a synced cache of a type (a shared informer's), creating it on first use. */
export type CacheProvider = (type: ResourceType, signal?: AbortSignal) => Promise<ObjectReader>;

export interface ClientOptions {
  /** Where writes (and uncached reads) go. */
  readonly backend: Backend;
  /** Where reads come from. Default: none, every read goes to the backend. */
  readonly cache?: CacheProvider;
  /** Field manager recorded on writes that do not name one. */
  readonly fieldManager?: string;
  readonly clock?: Clock;
  /** How long a written object may be shown ahead of a lagging cache. Default 60 000. */
  readonly readYourWritesTtlMs?: number;
  /** Bound on remembered writes. Default 10 000. */
  readonly maxPendingWrites?: number;
}

export interface ClientListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly signal?: AbortSignal;
}

/**
 * Reads from the cache, writes to the backend (controller-runtime's default client), with
 * read-your-writes: after a write returns resourceVersion X, reading that object never returns
 * an older version, even while the cache lags (see {@link PendingWrites}).
 *
 * @example
 * const site = await client.get<Website>(websiteType, { namespace, name });
 * await client.updateStatus(websiteType, { ...site, status: { ready: true } });
 */
export class Client {
  readonly backend: Backend;
  readonly #cache: CacheProvider | undefined;
  readonly #fieldManager: string | undefined;
  readonly #pending: PendingWrites;

  constructor(options: ClientOptions) {
    if (typeof options?.backend?.get !== 'function')
      throw new OptionsError('backend', options?.backend, 'a Backend');
    if (options.cache !== undefined && typeof options.cache !== 'function') {
      throw new OptionsError('cache', options.cache, 'a function (type) => Promise<ObjectReader>');
    }
    this.backend = options.backend;
    this.#cache = options.cache;
    this.#fieldManager = options.fieldManager;
    this.#pending = new PendingWrites(
      options.clock ?? realClock,
      durationMs('readYourWritesTtlMs', options.readYourWritesTtlMs, 60_000),
      integer('maxPendingWrites', options.maxPendingWrites, 10_000, 1),
    );
  }

  /** The object, from the cache when there is one. Throws NotFoundError when it does not exist. */
  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: { signal?: AbortSignal },
  ): Promise<T> {
    if (this.#cache === undefined) return this.backend.get<T>(type, key, options);
    const reader = await this.#cache(type, options?.signal);
    const found = this.#pending.resolve(this.#id(type, key), reader.get(key) as T | undefined, reader);
    if (found === undefined) {
      throw new NotFoundError(`${qualifiedResource(type)} "${key.name}" not found`, {
        details: { name: key.name, group: type.group, kind: type.plural },
      });
    }
    return found;
  }

  /** Objects of a type, from the cache when there is one, in key order. */
  async list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ClientListOptions = {},
  ): Promise<T[]> {
    if (this.#cache === undefined) {
      const items: T[] = [];
      let token: string | undefined;
      do {
        const page = await this.backend.list<T>(type, {
          ...options,
          limit: 500,
          ...(token ? { continue: token } : {}),
        });
        items.push(...page.items);
        token = page.continue;
      } while (token);
      return items;
    }
    const reader = await this.#cache(type, options.signal);
    const matches = objectSelector(options);
    const byKey = new Map<string, T>();
    for (const o of reader.list(options)) {
      if (matches(o))
        byKey.set(
          keyToString({ namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' }),
          o as T,
        );
    }
    const prefix = `${typeId(type)}|`;
    for (const id of [...this.#pending.idsWithPrefix(prefix)]) {
      const keyText = id.slice(prefix.length);
      const slash = keyText.indexOf('/');
      const key = { namespace: keyText.slice(0, slash), name: keyText.slice(slash + 1) };
      const resolved = this.#pending.resolve(id, reader.get(key) as T | undefined, reader);
      const k = keyToString(key);
      if (resolved !== undefined && matches(resolved)) byKey.set(k, resolved);
      else byKey.delete(k);
    }
    return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  async create<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.#remember(type, await this.backend.create(type, object, this.#write(options)), options);
  }

  async update<T extends KubeObject>(type: ResourceType, object: T, options?: WriteOptions): Promise<T> {
    return this.#remember(type, await this.backend.update(type, object, this.#write(options)), options);
  }

  async updateStatus<T extends KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.#remember(type, await this.backend.updateStatus(type, object, this.#write(options)), options);
  }

  async patch<T extends KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.#remember(type, await this.backend.patch<T>(type, key, patch, this.#write(options)), options);
  }

  async delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<T>> {
    let uid: string | undefined;
    if (this.#cache !== undefined) {
      try {
        uid = (await this.get(type, key)).metadata.uid;
      } catch {
        uid = undefined;
      }
    }
    const result = await this.backend.delete<T>(type, key, options);
    if (options?.dryRun) return result;
    if (result.status === 'pending') this.#pending.recordWrite(this.#id(type, key), result.object);
    else this.#pending.recordDelete(this.#id(type, key), uid);
    return result;
  }

  #write<O extends WriteOptions>(options: O | undefined): O | undefined {
    if (this.#fieldManager === undefined || options?.fieldManager !== undefined) return options;
    return { ...(options ?? {}), fieldManager: this.#fieldManager } as O;
  }

  #remember<T extends KubeObject>(type: ResourceType, object: T, options: WriteOptions | undefined): T {
    if (!options?.dryRun && this.#cache !== undefined) {
      const key = { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
      this.#pending.recordWrite(this.#id(type, key), object);
    }
    return object;
  }

  #id(type: ResourceType, key: ObjectKey): string {
    return `${typeId(type)}|${key.namespace}/${key.name}`;
  }
}
