import type { KubeObject } from '../object/index.ts';
import { FieldIndex, type IndexErrorHandler, type IndexFunc, type IndexStats } from './field-index.ts';

/** Index values → functions, as registered on a cache. */
export type IndexDefinitions<T> = ReadonlyMap<string, IndexFunc<T>>;

/** What a {@link Store} holds, for leak checks: nothing of a deleted object may remain. */
export interface StoreStats {
  readonly objects: number;
  readonly namespaces: number;
  readonly indexes: Readonly<Record<string, IndexStats>>;
}

function keyOf(namespace: string, name: string): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

/**
 * The cache's contents: namespace → name → object (so the namespace index is the store itself and
 * costs nothing per object), plus the custom indexes. Objects are stored as given; the writer
 * freezes them first. Empty namespaces are dropped at once.
 */
export class Store<T extends KubeObject> {
  readonly #namespaces = new Map<string, Map<string, T>>();
  readonly #indexes = new Map<string, FieldIndex<T>>();
  readonly #onIndexError: IndexErrorHandler;
  #size = 0;

  constructor(definitions: IndexDefinitions<T>, onIndexError: IndexErrorHandler) {
    this.#onIndexError = onIndexError;
    for (const [name, fn] of definitions) this.#indexes.set(name, new FieldIndex(name, fn, onIndexError));
  }

  get size(): number {
    return this.#size;
  }

  get(namespace: string, name: string): T | undefined {
    return this.#namespaces.get(namespace)?.get(name);
  }

  /** Stores `object` under its namespace and name; returns what it replaced. */
  put(object: T): T | undefined {
    return this.putAt(object.metadata.namespace ?? '', object.metadata.name as string, object);
  }

  /** Stores `object` under `namespace` and `name` (its own, read once by the caller); returns what it replaced. */
  putAt(namespace: string, name: string, object: T): T | undefined {
    let names = this.#namespaces.get(namespace);
    if (names === undefined) {
      names = new Map();
      this.#namespaces.set(namespace, names);
    }
    const previous = names.get(name);
    names.set(name, object);
    if (previous === undefined) this.#size++;
    if (this.#indexes.size > 0) {
      const key = keyOf(namespace, name);
      for (const index of this.#indexes.values()) index.put(key, object);
    }
    return previous;
  }

  /** Removes the object with this namespace and name from the store and every index; returns it. */
  remove(namespace: string, name: string): T | undefined {
    const names = this.#namespaces.get(namespace);
    const previous = names?.get(name);
    if (names === undefined || previous === undefined) return undefined;
    names.delete(name);
    if (names.size === 0) this.#namespaces.delete(namespace);
    this.#size--;
    if (this.#indexes.size > 0) {
      const key = keyOf(namespace, name);
      for (const index of this.#indexes.values()) index.remove(key);
    }
    return previous;
  }

  /** Every object, namespace by namespace. */
  *values(): Generator<T, void, undefined> {
    for (const names of this.#namespaces.values()) yield* names.values();
  }

  /** Calls `fn` with every object (faster than iterating {@link Store.values} on hot paths). */
  forEach(fn: (object: T) => void): void {
    for (const names of this.#namespaces.values()) for (const object of names.values()) fn(object);
  }

  /** The objects of one namespace ('' for cluster-scoped objects). */
  namespace(namespace: string): IterableIterator<T> {
    return (this.#namespaces.get(namespace) ?? new Map<string, T>()).values();
  }

  hasIndex(name: string): boolean {
    return this.#indexes.has(name);
  }

  /** The objects indexed under `value` by the index `name`; undefined if there is no such index. */
  byIndex(name: string, value: string): IterableIterator<T> | undefined {
    return this.#indexes.get(name)?.get(value);
  }

  /** Registers an index and indexes every object already stored. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    const index = new FieldIndex(name, fn, this.#onIndexError);
    for (const [namespace, names] of this.#namespaces) {
      for (const [name, object] of names) index.put(keyOf(namespace, name), object);
    }
    this.#indexes.set(name, index);
  }

  /** Adds the indexes of `definitions` this store lacks (one registered while it was being filled). */
  ensureIndexes(definitions: IndexDefinitions<T>): void {
    for (const [name, fn] of definitions) if (!this.#indexes.has(name)) this.addIndex(name, fn);
  }

  stats(): StoreStats {
    const indexes: Record<string, IndexStats> = {};
    for (const [name, index] of this.#indexes) indexes[name] = index.stats();
    return { objects: this.#size, namespaces: this.#namespaces.size, indexes };
  }
}
