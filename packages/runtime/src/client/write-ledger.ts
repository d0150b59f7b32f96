import { type Clock, realClock } from '../clock/index.ts';
import { durationMs, integer } from '../options.ts';
import type { Cause, CauseObject, CauseSet, CauseWriter } from '../workqueue/index.ts';

/** Options of a {@link WriteLedger}. */
export interface WriteLedgerOptions {
  readonly clock?: Clock;
  /** How long a write is remembered (its echo must arrive and run within it). Default 60 000. */
  readonly ttlMs?: number;
  /**
   * Objects whose writes are remembered at most (each with its last 4 versions); when full, the
   * least recently written tenth go. Default 10 000.
   */
  readonly maxEntries?: number;
}

/**
 * Which reconcile wrote which version of an object, so that the event that echoes a write can
 * name it (`Cause.writtenBy`). A client records every object a write returns while it runs inside
 * a reconcile (see `runAsWriter`); a controller looks up the `added`, `modified` and `deleted`
 * causes of each run by uid (else kind, namespace and name) and resourceVersion. Bounded like the
 * client's read-your-writes: entries expire after `ttlMs`, and past `maxEntries` the oldest go.
 *
 * A manager shares one ledger between its client and the controllers it builds
 * (`manager.writeLedger`), so that a chain crosses controllers; a controller built by hand has a
 * ledger of its own unless given one.
 *
 * @example
 * const ledger = new WriteLedger({ clock });
 * const controller = new Controller({ name: 'websites', reconciler, writeLedger: ledger });
 */
export class WriteLedger {
  /**
   * The recent writes of each object, by uid (else kind, namespace and name): the keys are the
   * objects, not their versions, so a busy object updates its entry in place (a Map that churns
   * through fresh string keys costs far more).
   */
  readonly #objects = new Map<string, ObjectWrites>();
  /** The attributed copy of each cause attributed, for as long as the cause lives. */
  readonly #attributed = new WeakMap<Cause, Cause>();
  readonly #clock: Clock;
  /**
   * The clock's time when the ledger was made: entries keep their times as milliseconds since, a
   * small whole number that V8 keeps in the entry itself, where the clock's own reading (~1.7e12)
   * would be a number in a box of its own (one more read of memory, and a cache miss, per write).
   */
  readonly #epoch: number;
  readonly #ttlMs: number;
  readonly #max: number;
  /** When it last swept, in milliseconds since its epoch. */
  #sweptAt = 0;

  constructor(options: WriteLedgerOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#epoch = this.#clock.now();
    this.#ttlMs = durationMs('ttlMs', options.ttlMs, 60_000);
    this.#max = integer('maxEntries', options.maxEntries, 10_000, 1);
  }

  /** Objects with writes remembered now (expired ones included until they are swept). */
  get size(): number {
    return this.#objects.size;
  }

  /** The clock the ledger's times are read from. @internal */
  get clock(): Clock {
    return this.#clock;
  }

  /**
   * Remembers that `writer` wrote `object` (as the backend returned it). Objects without a
   * resourceVersion are ignored. `now`: the ledger's clock read just before, when the caller has
   * it (a client reads it once per write for its read-your-writes too).
   */
  record(object: unknown, writer: CauseWriter, now: number = this.#clock.now()): void {
    if (typeof object !== 'object' || object === null) return;
    const { kind, metadata } = object as { kind?: unknown; metadata?: unknown };
    if (typeof metadata !== 'object' || metadata === null) return;
    const { namespace, name, uid, resourceVersion } = metadata as Record<string, unknown>;
    if (typeof resourceVersion !== 'string' || resourceVersion === '') return;
    const id =
      typeof uid === 'string' && uid !== ''
        ? uid
        : objectId(
            typeof kind === 'string' ? kind : undefined,
            typeof namespace === 'string' ? namespace : undefined,
            typeof name === 'string' ? name : undefined,
          );
    const at = now - this.#epoch;
    let writes = this.#objects.get(id);
    if (writes === undefined) {
      if (this.#objects.size >= this.#max) this.#makeRoom(at);
      writes = new ObjectWrites(resourceVersion, writer, at);
      this.#objects.set(id, writes);
    } else {
      writes.push();
      writes.version = resourceVersion;
      writes.writer = writer;
      // Writes may return out of order (two in flight at once): the latest is not always the last.
      if (isAfter(resourceVersion, writes.latest)) writes.latest = resourceVersion;
    }
    writes.at = at;
    if (at - this.#sweptAt > this.#ttlMs) this.#sweep(at);
  }

  /** The reconcile that wrote this version of the object, if remembered (at `now`, the clock's). */
  writerOf(object: CauseObject, now?: number): CauseWriter | undefined {
    const rv = object.resourceVersion;
    if (rv === undefined || rv === '' || this.#objects.size === 0) return undefined;
    const id =
      object.uid !== undefined && object.uid !== ''
        ? object.uid
        : objectId(object.kind, object.namespace, object.name);
    const writes = this.#objects.get(id);
    if (writes === undefined) return undefined;
    // Newest first: an echo is most often of the last write, and the newest is kept in the entry
    // itself (one object read, not the ring of older ones too). A version after every write
    // remembered is someone else's (the common miss: an edit by another writer): no need to read
    // the older versions kept.
    const writer =
      writes.version === rv
        ? writes.writer
        : isAfter(rv, writes.latest)
          ? undefined
          : writes.olderWriterOf(rv);
    // The age is read only for a writer found: a miss is a miss whatever the age, and the time
    // (a number in a box of its own) is one more read of memory no other step touches.
    if (writer === undefined) return undefined;
    if ((now ?? this.#clock.now()) - this.#epoch - writes.at > this.#ttlMs) {
      this.#objects.delete(id);
      return undefined;
    }
    return writer;
  }

  /**
   * `cause` with `writtenBy` when it is an echo of a remembered write (an `added` not from an
   * initial list, a `modified` or a `deleted`, of an object with a resourceVersion); else `cause`.
   */
  attribute(cause: Cause): Cause {
    if (cause.writtenBy !== undefined || this.#objects.size === 0) return cause;
    // The same copy every time: a cause keeps its identity from call to call, and observers key
    // on it (the tracing adapter links every run a cause led to to one span).
    const kept = this.#attributed.get(cause);
    if (kept !== undefined) return kept;
    const attributed = this.attributeOnce(cause, this.#clock.now());
    if (attributed !== cause) this.#attributed.set(cause, attributed);
    return attributed;
  }

  /**
   * {@link WriteLedger.attribute} at `now`, without remembering the copy: for a caller that keeps
   * the copy itself (a controller's queue keeps it with the key's causes, so a retried run gets
   * the same one). A run's causes go through this once per run: no map of copies to grow and
   * collect. @internal
   */
  attributeOnce(cause: Cause, now: number): Cause {
    if (cause.writtenBy !== undefined) return cause;
    const object = cause.object;
    if (object === undefined || object.resourceVersion === undefined || !isEcho(cause)) return cause;
    const writer = this.writerOf(object, now);
    return writer === undefined ? cause : Object.freeze({ ...cause, writtenBy: writer });
  }

  /** {@link WriteLedger.attribute} over a run's causes; the set itself when none changes. */
  attributeSet(set: CauseSet): CauseSet {
    if (this.#objects.size === 0 || set.causes.length === 0) return set;
    let out: Cause[] | undefined;
    for (let i = 0; i < set.causes.length; i++) {
      const c = set.causes[i] as Cause;
      const a = this.attribute(c);
      if (a !== c) {
        out ??= set.causes.slice();
        out[i] = a;
      }
    }
    return out === undefined ? set : Object.freeze({ causes: Object.freeze(out), dropped: set.dropped });
  }

  /**
   * Drops the objects not written for `ttlMs` (a walk, at most once per `ttlMs`). `at`: now, in
   * milliseconds since the ledger's epoch.
   */
  #sweep(at: number): void {
    this.#sweptAt = at;
    for (const [id, writes] of this.#objects) if (at - writes.at > this.#ttlMs) this.#objects.delete(id);
  }

  /** Full: drops expired objects, else the least recently written tenth. */
  #makeRoom(at: number): void {
    this.#sweep(at);
    if (this.#objects.size < this.#max) return;
    const oldest = [...this.#objects].sort(([, a], [, b]) => a.at - b.at);
    const count = Math.ceil(oldest.length / 10);
    for (let i = 0; i < count; i++) this.#objects.delete((oldest[i] as [string, ObjectWrites])[0]);
  }
}

/**
 * Versions of one object remembered: a reconcile that writes an object twice (its spec, then its
 * status), an echo that lags a write or two behind. Every version kept holds its writer, and the
 * writer the causes of its run, past the young generation's collections: eight cost the steady
 * loop of `npm run bench:cause-chains` measurably more scavenging than four.
 */
const VERSIONS_PER_OBJECT = 4;
const OLDER = VERSIONS_PER_OBJECT - 1;

/**
 * The recent writes of one object. The versions before the newest are a ring of three slots in
 * fields of the entry itself, not an array beside it: an array is one more object to reach (a
 * cache miss on a write, in `npm run bench:cause-chains`) and to collect.
 */
class ObjectWrites {
  /** The newest version written, and its writer. */
  version: string;
  writer: CauseWriter;
  /** When it was last written, in milliseconds since the ledger's epoch. */
  at: number;
  /** The latest version written (by {@link isAfter}). */
  latest: string;
  /** The slot the version pushed out of `version` goes to next (0–2). */
  next = 0;
  v0: string | undefined = undefined;
  w0: CauseWriter | undefined = undefined;
  v1: string | undefined = undefined;
  w1: CauseWriter | undefined = undefined;
  v2: string | undefined = undefined;
  w2: CauseWriter | undefined = undefined;

  constructor(version: string, writer: CauseWriter, at: number) {
    this.version = version;
    this.writer = writer;
    this.at = at;
    this.latest = version;
  }

  /** Moves the newest version to the ring of older ones (the oldest there goes). */
  push(): void {
    const slot = this.next;
    if (slot === 0) {
      this.v0 = this.version;
      this.w0 = this.writer;
    } else if (slot === 1) {
      this.v1 = this.version;
      this.w1 = this.writer;
    } else {
      this.v2 = this.version;
      this.w2 = this.writer;
    }
    this.next = slot === OLDER - 1 ? 0 : slot + 1;
  }

  /** The writer of `version` among the older ones, the newest first. */
  olderWriterOf(version: string): CauseWriter | undefined {
    for (let k = 1; k <= OLDER; k++) {
      const slot = (this.next - k + OLDER) % OLDER;
      if (slot === 0 ? this.v0 === version : slot === 1 ? this.v1 === version : this.v2 === version)
        return slot === 0 ? this.w0 : slot === 1 ? this.w1 : this.w2;
    }
    return undefined;
  }
}

function objectId(kind: string | undefined, namespace: string | undefined, name: string | undefined): string {
  return `${kind ?? ''}|${namespace ?? ''}/${name ?? ''}`;
}

/**
 * A strict total order on resourceVersions that is their numeric order when they are decimal
 * without leading zeros (etcd's, the store's, NATS KV's): the longer one is later, then the
 * greater by characters. For other backends' opaque versions it is still a total order, so a
 * version after the latest written is never one of those written; it just rejects less often.
 */
function isAfter(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

function isEcho(cause: Cause): boolean {
  const type = cause.type;
  if (type === 'added') return cause.initialList !== true;
  return type === 'modified' || type === 'deleted';
}
