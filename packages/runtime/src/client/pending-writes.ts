import type { Clock } from '../clock/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';

/** What a cache tells the client: its objects and how far it has caught up. */
export interface ObjectReader<T extends KubeObject = KubeObject> {
  get(key: ObjectKey): T | undefined;
  list(options?: { readonly namespace?: string; readonly labelSelector?: string }): readonly T[];
  /** The resourceVersion of the last list or event the cache applied ('' before the first). */
  readonly resourceVersion: string;
  /**
   * True when the reader holds only a shard of the kind (a replica sharded by uid caches its
   * share): a miss is not an absence and a list is not the whole, so the client reads those from
   * the backend. Default false.
   */
  readonly partial?: boolean;
}

type Pending =
  | { readonly kind: 'write'; readonly object: KubeObject; readonly at: number }
  | { readonly kind: 'delete'; readonly uid: string | undefined; readonly at: number };

/**
 * Compares two resourceVersions as numbers (-1, 0 or 1); undefined when they are not both decimal
 * revisions. Any length: digit by digit, leading zeros skipped (every cached read of an object
 * with a write pending compares two; no BigInt, no regular expression).
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (a === undefined || b === undefined || !isDecimal(a) || !isDecimal(b)) return undefined;
  let i = 0;
  while (i < a.length - 1 && a.charCodeAt(i) === 48) i++;
  let j = 0;
  while (j < b.length - 1 && b.charCodeAt(j) === 48) j++;
  const digitsA = a.length - i;
  const digitsB = b.length - j;
  if (digitsA !== digitsB) return digitsA < digitsB ? -1 : 1;
  for (; i < a.length; i++, j++) {
    const d = a.charCodeAt(i) - b.charCodeAt(j);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

function isDecimal(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * Read-your-writes for a cached client. Every object the client writes is remembered until the
 * cache has caught up with it; reads overlay the remembered objects on the cache:
 * - a written object is shown until the cache holds that resourceVersion or a newer one, or the
 *   cache as a whole has applied a resourceVersion at least as new (then the cache is authoritative,
 *   absence included);
 * - a deleted object is hidden until the cache no longer holds it (or holds a new incarnation with
 *   another uid).
 * resourceVersions compare as decimal revisions (the store, Kubernetes over etcd and NATS KV all
 * use them); for other backends a written object is shown until the cache holds exactly its
 * resourceVersion. Entries older than `ttlMs` are dropped, bounding staleness and memory.
 *
 * @internal
 */
export class PendingWrites {
  readonly #entries = new Map<string, Pending>();
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;

  constructor(clock: Clock, ttlMs: number, max: number) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** `now`: the clock read just before, when the caller has it. */
  recordWrite(id: string, object: KubeObject, now: number = this.#clock.now()): void {
    this.#set(id, { kind: 'write', object, at: now });
  }

  recordDelete(id: string, uid: string | undefined): void {
    this.#set(id, { kind: 'delete', uid, at: this.#clock.now() });
  }

  /**
   * The object a read should return given what the cache holds: `undefined` means absent.
   * Clears the entry once the cache caught up.
   */
  resolve<T extends KubeObject>(id: string, cached: T | undefined, cache: ObjectReader): T | undefined {
    const p = this.#entries.get(id);
    if (p === undefined) return cached;
    if (this.#caughtUp(p, cached, cache)) {
      this.#entries.delete(id);
      return cached;
    }
    return p.kind === 'write' ? (p.object as T) : undefined;
  }

  /** Ids with a pending entry whose id starts with `prefix`. */
  *idsWithPrefix(prefix: string): IterableIterator<string> {
    for (const id of this.#entries.keys()) if (id.startsWith(prefix)) yield id;
  }

  #caughtUp(p: Pending, cached: KubeObject | undefined, cache: ObjectReader): boolean {
    if (this.#clock.now() - p.at > this.#ttlMs) return true;
    if (p.kind === 'delete') {
      return cached === undefined || (p.uid !== undefined && cached.metadata.uid !== p.uid);
    }
    const written = p.object.metadata.resourceVersion;
    if (cached !== undefined) {
      const c = compareResourceVersions(cached.metadata.resourceVersion, written);
      if (c !== undefined ? c >= 0 : cached.metadata.resourceVersion === written) return true;
    }
    const whole = compareResourceVersions(cache.resourceVersion, written);
    return whole !== undefined && whole >= 0;
  }

  #set(id: string, entry: Pending): void {
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
