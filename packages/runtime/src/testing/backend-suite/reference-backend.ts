import {
  type Backend,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type ListOptions,
  metadataProjection,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type ResourceType,
  resourceType,
  UnavailableError,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '../../backend/index.ts';
import { type Clock, realClock, type Timer } from '../../clock/index.ts';
import { AbortedError } from '../../errors.ts';
import type { KubeObject, ObjectKey } from '../../object/index.ts';
import {
  asError,
  clone,
  create,
  Engine,
  GarbageCollector,
  listObjects,
  patch,
  remove,
  startWatch,
  update,
  updateStatus,
  WatchStream,
} from './reference/index.ts';

/** How objects are handed out: deep clones, or (metadata only) a clone of their metadata alone. */
function copyOf(type: ResourceType, metadataOnly: boolean | undefined): (object: KubeObject) => KubeObject {
  if (metadataOnly !== true) return clone;
  const project = metadataProjection(type);
  return (object) => project({ metadata: clone(object.metadata) });
}

/** Options of {@link createReferenceBackend}. */
export interface ReferenceBackendOptions {
  /** The types it serves; others are NotFound. */
  readonly types: readonly ResourceType[];
  /** Time, timers and randomness (timestamps, generateName, watch timeouts, bookmarks). Default `realClock`. */
  readonly clock?: Clock;
  /** How often a watch with `allowBookmarks` gets a BOOKMARK. Default 200 ms. */
  readonly bookmarkIntervalMs?: number;
  /** Name for logs. Default `reference`. */
  readonly name?: string;
}

/**
 * A small in-memory Backend that passes `runBackendSuite`, for people writing their own backend to
 * compare behaviour against. It keeps every version since the last {@link ReferenceBackend.compact}
 * (there is no automatic history window), supports merge and JSON patches (strategic merge and
 * server-side apply are UnsupportedError), and garbage-collects owner references shortly after each
 * write. Not a production store: use `@converge/store`.
 *
 * @example
 * const backend = new ReferenceBackend({ types: [suiteTypes.configMap] });
 * const created = await backend.create(suiteTypes.configMap, {
 *   metadata: { name: 'demo', namespace: 'default' },
 *   data: { a: '1' },
 * });
 * created.metadata.resourceVersion; // '2'
 */
export class ReferenceBackend implements Backend {
  readonly name: string;
  readonly #engine: Engine;
  readonly #gc: GarbageCollector;
  readonly #clock: Clock;
  readonly #bookmarkIntervalMs: number;
  readonly #streams = new Set<WatchStream>();
  #gcTimer: Timer | undefined;
  #closed = false;

  constructor(options: ReferenceBackendOptions) {
    this.name = options.name ?? 'reference';
    this.#clock = options.clock ?? realClock;
    this.#bookmarkIntervalMs = options.bookmarkIntervalMs ?? 200;
    this.#engine = new Engine(options.types.map(resourceType), this.#clock, () => this.#scheduleGc());
    this.#gc = new GarbageCollector(this.#engine);
  }

  #scheduleGc(): void {
    if (this.#gcTimer !== undefined || this.#closed) return;
    this.#gcTimer = this.#clock.setTimer(() => {
      this.#gcTimer = undefined;
      if (!this.#closed) this.#gc.run();
    }, 0);
  }

  #enter(signal: AbortSignal | undefined): void {
    if (this.#closed) throw new UnavailableError(`backend ${this.name} is closed`);
    if (signal?.aborted === true) throw new AbortedError('backend call aborted', { cause: signal.reason });
  }

  resolveType(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#engine.resolve(apiVersion, kind);
  }

  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<T> {
    this.#enter(options?.signal);
    const served = this.#engine.served(type);
    return copyOf(served.type, options?.metadataOnly)(this.#engine.current(served, key)) as T;
  }

  async list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    this.#enter(options.signal);
    const served = this.#engine.served(type);
    return listObjects<T>(this.#engine.store, served.id, options, copyOf(served.type, options.metadataOnly));
  }

  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    return {
      [Symbol.asyncIterator]: () => {
        const host = {
          store: this.#engine.store,
          clock: this.#clock,
          bookmarkIntervalMs: this.#bookmarkIntervalMs,
          track: (stream: WatchStream) => {
            this.#streams.add(stream);
            stream.onEnd(() => this.#streams.delete(stream));
          },
        };
        try {
          this.#enter(undefined);
          const served = this.#engine.served(type);
          return startWatch<T>(host, served.id, options, copyOf(served.type, options.metadataOnly));
        } catch (error) {
          // Errors of a watch surface from its iteration.
          const failed = new WatchStream<T>();
          failed.fail(asError(error));
          return failed;
        }
      },
    };
  }

  async create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    this.#enter(options.signal);
    return clone(create(this.#engine, this.#engine.served(type), object, options.dryRun === true)) as T;
  }

  async update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    this.#enter(options.signal);
    return clone(update(this.#engine, this.#engine.served(type), object, options.dryRun === true)) as T;
  }

  async updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    this.#enter(options.signal);
    return clone(updateStatus(this.#engine, this.#engine.served(type), object, options.dryRun === true)) as T;
  }

  async patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    change: Patch,
    options: PatchOptions = {},
  ): Promise<T> {
    this.#enter(options.signal);
    const served = this.#engine.served(type);
    return clone(patch(this.#engine, served, key, change, options.subresource, options.dryRun === true)) as T;
  }

  async delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: DeleteOptions = {},
  ): Promise<DeleteResult<T>> {
    this.#enter(options.signal);
    const result = remove(this.#engine, this.#engine.served(type), key, options);
    return (
      result.status === 'deleted' ? result : { status: 'pending', object: clone(result.object) }
    ) as DeleteResult<T>;
  }

  /** Forgets all history older than now: older resourceVersions and continue tokens become Expired. */
  async compact(): Promise<void> {
    this.#enter(undefined);
    this.#engine.store.compact();
  }

  /** Ends every watch cleanly and rejects later calls with UnavailableError. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#gcTimer?.cancel();
    this.#gcTimer = undefined;
    for (const stream of [...this.#streams]) stream.end();
  }
}

/**
 * Makes a {@link ReferenceBackend}.
 *
 * @example
 * import { createReferenceBackend, runBackendSuite } from '@converge/runtime/testing';
 *
 * runBackendSuite({
 *   name: 'reference',
 *   makeBackend: async (types) => {
 *     const backend = createReferenceBackend({ types });
 *     return { backend, compact: () => backend.compact(), close: () => backend.close() };
 *   },
 * });
 */
export function createReferenceBackend(options: ReferenceBackendOptions): ReferenceBackend {
  return new ReferenceBackend(options);
}
