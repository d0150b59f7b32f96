import type { KubeObject, ObjectKey } from '../object/index.ts';
import { type LabelSelectorExpr, parseLabelSelector } from '../selector/index.ts';
import type { CacheCore } from './core.ts';
import { IndexNotFoundError } from './errors.ts';
import type { StoreStats } from './store.ts';

/** The name of the built-in index of objects by namespace ('' for cluster-scoped objects). */
export const NAMESPACE_INDEX = 'namespace';

/** Filters of {@link CacheReader.list}; all given filters must hold. */
export interface CacheListOptions {
  /** Only objects of this namespace; undefined or '' means every namespace. */
  readonly namespace?: string;
  /** A label selector in Kubernetes syntax (`app=web,tier!=db`) or a parsed one. */
  readonly labelSelector?: string | LabelSelectorExpr;
  /** Only objects indexed under `value` by the index `name` (see `indexField`). */
  readonly index?: { readonly name: string; readonly value: string };
}

/**
 * The read side of a cache (kube-rs `reflector::Store`, controller-runtime's cache reader): as many
 * readers as you like, each cheap, all seeing the one writer's latest write.
 *
 * **Objects are shared and frozen.** Every object a reader returns is the cached object itself,
 * deep-frozen once when it was written, never a copy: reads cost nothing per object, and an attempt
 * to change one throws a `TypeError` instead of corrupting the cache. To change an object, copy it
 * (`structuredClone(object)` or a spread of the parts you change) and write the copy to the backend.
 * The arrays `list`, `byIndex` and `keys` return are new on every call and yours to keep.
 *
 * @example
 * const { reader, writer } = createCache<Pod>();
 * writer.indexField('spec.nodeName', (pod) => [pod.spec.nodeName]);
 * await reader.waitForSync(signal);
 * const pod = reader.get({ namespace: 'default', name: 'web-0' });
 * const onNode = reader.byIndex('spec.nodeName', 'node-1');
 * const web = reader.list({ namespace: 'default', labelSelector: 'app=web' });
 */
export interface CacheReader<T extends KubeObject = KubeObject> {
  /** The cache's name, for logs. */
  readonly name: string;
  /** Number of cached objects. */
  readonly size: number;
  /** The resourceVersion of the last write applied (a list's, an object's or a bookmark's); '' before any. */
  readonly resourceVersion: string;
  /** The cached object with this key, or undefined. */
  get(key: ObjectKey): T | undefined;
  /** The cached objects that pass every filter, in no particular order. Throws for an unknown index or a bad selector. */
  list(options?: CacheListOptions): T[];
  /** The objects indexed under `value` by the index `name` (`namespace` is built in); throws {@link IndexNotFoundError} for an unknown index. */
  byIndex(name: string, value: string): T[];
  /** The keys of every cached object. */
  keys(): ObjectKey[];
  /** True once the writer marked the cache synced (the initial list is in). */
  hasSynced(): boolean;
  /**
   * Resolves once the cache has synced. Rejects with a `CacheClosedError` if the writer closes
   * before that, or with an `AbortedError` when `signal` aborts first.
   */
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** What the cache holds: objects, namespaces, and per index the values and objects indexed. */
  stats(): StoreStats;
}

/** A reader over a {@link CacheCore}. It holds no state of its own. */
export class CoreReader<T extends KubeObject> implements CacheReader<T> {
  readonly #core: CacheCore<T>;

  constructor(core: CacheCore<T>) {
    this.#core = core;
  }

  get name(): string {
    return this.#core.name;
  }

  get size(): number {
    return this.#core.store.size;
  }

  get resourceVersion(): string {
    return this.#core.resourceVersion;
  }

  get(key: ObjectKey): T | undefined {
    return this.#core.store.get(key.namespace, key.name);
  }

  list(options: CacheListOptions = {}): T[] {
    const { namespace, labelSelector, index } = options;
    const selector = typeof labelSelector === 'string' ? parseLabelSelector(labelSelector) : labelSelector;
    const inNamespace = namespace !== undefined && namespace !== '';
    const store = this.#core.store;
    let candidates: Iterable<T>;
    if (index !== undefined) candidates = this.#indexed(index.name, index.value);
    else if (inNamespace) candidates = store.namespace(namespace);
    else candidates = store.values();
    const out: T[] = [];
    if (index === undefined && !inNamespace && selector === undefined) {
      store.forEach((object) => {
        out.push(object);
      });
      return out;
    }
    const checkNamespace = inNamespace && index !== undefined;
    for (const object of candidates) {
      if (checkNamespace && (object.metadata.namespace ?? '') !== namespace) continue;
      if (selector !== undefined && !selector.matches(object.metadata.labels ?? {})) continue;
      out.push(object);
    }
    return out;
  }

  byIndex(name: string, value: string): T[] {
    return [...this.#indexed(name, value)];
  }

  keys(): ObjectKey[] {
    const out: ObjectKey[] = [];
    this.#core.store.forEach((object) => {
      out.push({ namespace: object.metadata.namespace ?? '', name: object.metadata.name as string });
    });
    return out;
  }

  hasSynced(): boolean {
    return this.#core.gate.isOpen;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#core.gate.wait(signal);
  }

  stats(): StoreStats {
    return this.#core.store.stats();
  }

  #indexed(name: string, value: string): Iterable<T> {
    const store = this.#core.store;
    if (name === NAMESPACE_INDEX) return store.namespace(value);
    const objects = store.byIndex(name, value);
    if (objects === undefined) throw new IndexNotFoundError(this.#core.name, name);
    return objects;
  }
}
