/**
 * Computes the values an object is indexed under (controller-runtime's `IndexerFunc`). It must be a
 * pure function of the (frozen) object and return strings; duplicates are ignored.
 *
 * @example
 * const byOwner: IndexFunc<Pod> = (pod) => pod.metadata.ownerReferences?.map((ref) => ref.uid) ?? [];
 */
export type IndexFunc<T> = (object: T) => readonly string[];

/** Counters of one index, to check that nothing outlives the objects it points to. */
export interface IndexStats {
  /** Distinct index values with at least one object. */
  readonly values: number;
  /** Objects indexed under at least one value. */
  readonly objects: number;
}

/** Reports an index function failure for the object with `key`; the write goes on without it. */
export type IndexErrorHandler = (index: string, key: string, reason: string, error: unknown) => void;

const NONE: readonly string[] = Object.freeze([]);

/**
 * One custom index: value → (object key → object), plus object key → the values it was indexed
 * under. Keeping the values of each object makes removal exact even if the index function is not
 * as pure as it should be, so a deleted object leaves nothing behind. An object indexed under no
 * value takes no space.
 */
export class FieldIndex<T> {
  readonly name: string;
  readonly fn: IndexFunc<T>;
  readonly #onError: IndexErrorHandler;
  readonly #forward = new Map<string, Map<string, T>>();
  readonly #reverse = new Map<string, readonly string[]>();

  constructor(name: string, fn: IndexFunc<T>, onError: IndexErrorHandler) {
    this.name = name;
    this.fn = fn;
    this.#onError = onError;
  }

  /** Indexes `object` under `key`, replacing what the key was indexed under before. */
  put(key: string, object: T): void {
    const values = this.#compute(key, object);
    const previous = this.#reverse.get(key);
    if (previous !== undefined) {
      for (const value of previous) if (!values.includes(value)) this.#unlink(value, key);
    }
    for (const value of values) {
      let objects = this.#forward.get(value);
      if (objects === undefined) {
        objects = new Map();
        this.#forward.set(value, objects);
      }
      objects.set(key, object);
    }
    if (values.length > 0) this.#reverse.set(key, values);
    else this.#reverse.delete(key);
  }

  /** Forgets `key` entirely. */
  remove(key: string): void {
    const previous = this.#reverse.get(key);
    if (previous === undefined) return;
    for (const value of previous) this.#unlink(value, key);
    this.#reverse.delete(key);
  }

  /** The objects indexed under `value`, in no particular order. */
  get(value: string): IterableIterator<T> {
    return (this.#forward.get(value) ?? new Map<string, T>()).values();
  }

  /** Whether `key` is indexed under `value`. */
  has(value: string, key: string): boolean {
    return this.#forward.get(value)?.has(key) ?? false;
  }

  stats(): IndexStats {
    return { values: this.#forward.size, objects: this.#reverse.size };
  }

  #unlink(value: string, key: string): void {
    const objects = this.#forward.get(value);
    if (objects === undefined) return;
    objects.delete(key);
    if (objects.size === 0) this.#forward.delete(value);
  }

  #compute(key: string, object: T): readonly string[] {
    let values: unknown;
    try {
      values = this.fn(object);
    } catch (error) {
      this.#onError(this.name, key, 'threw', error);
      return NONE;
    }
    if (!Array.isArray(values) || values.some((value) => typeof value !== 'string')) {
      this.#onError(this.name, key, 'returned something other than an array of strings', undefined);
      return NONE;
    }
    if (values.length === 0) return NONE;
    if (values.length === 1) return Object.freeze([...(values as string[])]);
    return Object.freeze([...new Set(values as string[])]);
  }
}
