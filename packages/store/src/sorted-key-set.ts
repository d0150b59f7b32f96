/** Elements per chunk before a chunk splits in two. */
const MAX_CHUNK = 1024;

/**
 * A sorted set of strings kept as a list of sorted chunks (like Python's `sortedcontainers`):
 * insert and delete touch one chunk (O(log n + chunk)), a range walk starts with two binary searches
 * and then reads keys in order, and `rank` sums chunk sizes (O(n / chunk)). It backs the per-type key
 * index, so a page of a list never scans the whole type.
 */
export class SortedKeySet {
  #chunks: string[][] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  has(key: string): boolean {
    const ci = this.#chunkFor(key);
    const chunk = this.#chunks[ci];
    if (chunk === undefined) return false;
    return chunk[lowerBound(chunk, key)] === key;
  }

  /** Adds `key`; false if it was there. */
  add(key: string): boolean {
    if (this.#chunks.length === 0) {
      this.#chunks.push([key]);
      this.#size = 1;
      return true;
    }
    const ci = Math.min(this.#chunkFor(key), this.#chunks.length - 1);
    const chunk = this.#chunks[ci] as string[];
    const at = lowerBound(chunk, key);
    if (chunk[at] === key) return false;
    if (at === chunk.length) chunk.push(key);
    else chunk.splice(at, 0, key);
    this.#size++;
    if (chunk.length > MAX_CHUNK) this.#chunks.splice(ci + 1, 0, chunk.splice(chunk.length >>> 1));
    return true;
  }

  /** Removes `key`; false if it was not there. */
  delete(key: string): boolean {
    const ci = this.#chunkFor(key);
    const chunk = this.#chunks[ci];
    if (chunk === undefined) return false;
    const at = lowerBound(chunk, key);
    if (chunk[at] !== key) return false;
    chunk.splice(at, 1);
    this.#size--;
    if (chunk.length === 0) this.#chunks.splice(ci, 1);
    return true;
  }

  /** How many keys are `< key`. */
  rank(key: string): number {
    const ci = this.#chunkFor(key);
    let n = 0;
    for (let i = 0; i < ci; i++) n += (this.#chunks[i] as string[]).length;
    const chunk = this.#chunks[ci];
    return chunk === undefined ? n : n + lowerBound(chunk, key);
  }

  /** How many keys are in `[lo, hi)` (`hi` undefined: no upper bound). */
  countRange(lo: string, hi: string | undefined): number {
    return (hi === undefined ? this.#size : this.rank(hi)) - this.rank(lo);
  }

  /**
   * Calls `visit` for each key in `[lo, hi)` in order until it returns false. The set must not be
   * modified during the walk.
   */
  walk(lo: string, hi: string | undefined, visit: (key: string) => boolean): void {
    let ci = this.#chunkFor(lo);
    const first = this.#chunks[ci];
    if (first === undefined) return;
    let at = lowerBound(first, lo);
    for (; ci < this.#chunks.length; ci++, at = 0) {
      const chunk = this.#chunks[ci] as string[];
      for (; at < chunk.length; at++) {
        const key = chunk[at] as string;
        if (hi !== undefined && key >= hi) return;
        if (!visit(key)) return;
      }
    }
  }

  /** The keys in `[lo, hi)` as an array (safe to modify the set while using it). */
  keys(lo = '', hi?: string): string[] {
    const out: string[] = [];
    this.walk(lo, hi, (key) => {
      out.push(key);
      return true;
    });
    return out;
  }

  /** Index of the first chunk whose last key is `>= key` (chunks.length when none is). */
  #chunkFor(key: string): number {
    let lo = 0;
    let hi = this.#chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.#chunks[mid] as string[];
      if ((chunk[chunk.length - 1] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** First index in sorted `array` whose element is `>= key`. */
function lowerBound(array: readonly string[], key: string): number {
  let lo = 0;
  let hi = array.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((array[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
