import {
  AlreadyExistsError,
  type Backend,
  ConflictError,
  type DeleteResult,
  ExpiredError,
  type GetOptions,
  type ListOptions,
  metadataOnlyEvents,
  metadataOnlyList,
  metadataProjection,
  NotFoundError,
  type ObjectList,
  type Patch,
  type ResourceType,
  typeId,
  UnsupportedError,
  type WatchEvent,
  type WatchOptions,
} from '../../backend/index.ts';
import { type Clock, realClock } from '../../clock/index.ts';
import type { KubeObject, ObjectKey } from '../../object/index.ts';
import { objectSelector } from '../../selector/index.ts';
import { mergePatch } from './merge-patch.ts';
import { Pager } from './pager.ts';
import { type Change, type Stored, store, VersionedObjects } from './versioned-objects.ts';
import { WatchStream } from './watch-stream.ts';

/** Options of a {@link FakeBackend}. */
export interface FakeBackendOptions {
  /** Runs watch timeouts. Default the real clock. */
  readonly clock?: Clock;
  /** Changes kept for watches; older ones are compacted (410). Default unlimited. */
  readonly historyLimit?: number;
  readonly name?: string;
}

/** A watch open on a {@link FakeBackend}, as the faults see it. */
interface OpenWatch {
  readonly typeId: string;
  readonly stream: WatchStream<KubeObject>;
  readonly selects: (object: KubeObject) => boolean;
  /** A `sendInitialEvents` watch whose end bookmark is held back, with the changes queued behind it. */
  held: { readonly end: WatchEvent; readonly changes: Change[] } | undefined;
}

type Fault = { readonly kind: 'error'; readonly error: Error } | { readonly kind: 'close' };

function parse<T>(stored: Stored): T {
  return JSON.parse(stored.json) as T;
}

function keyOf(object: KubeObject): ObjectKey {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

/**
 * A scripted in-memory {@link Backend} for informer and controller tests, with fault injection.
 * One global revision counter; objects are stored as JSON and every read returns a fresh copy
 * (like a wire backend). Lists paginate from a snapshot (`limit` / `continue`); watches replay the
 * history after their resourceVersion and then stream live changes, honouring namespace and
 * selectors (an object leaving the selection is a DELETED), bookmarks on request and `timeoutMs`
 * on the injected clock. With `sendInitialEvents` a watch starts with an ADDED per current object
 * and a BOOKMARK marked `initialEventsEnd` at the current revision (its resourceVersion, if any, is
 * then only a lower bound the current revision always meets). A watch or continue token older
 * than the compacted history throws an {@link ExpiredError}.
 *
 * Faults: {@link FakeBackend.failNext} (the next list or watch fails), {@link FakeBackend.closeNextWatches}
 * (the next watches end at once), {@link FakeBackend.dropWatches} (open watches end, optionally
 * losing what is in flight), {@link FakeBackend.breakWatches} (open watches fail mid-stream),
 * {@link FakeBackend.inject} (a raw event, malformed or stale, into open watches),
 * {@link FakeBackend.holdInitialEventsEnd} (a streamed list stops before its end bookmark),
 * {@link FakeBackend.compact}, and the `beforeList` / `beforeWatch` hooks for anything else (a
 * `beforeWatch` that throws for `sendInitialEvents` makes a backend that rejects streamed lists).
 * Not modelled: finalizers, generation, status subresources, patch types other than merge.
 *
 * @example
 * const backend = new FakeBackend({ clock });
 * await backend.create(configMaps, { metadata: { name: 'a', namespace: 'default' } });
 * backend.failNext('list', new UnavailableError('down'));
 * backend.dropWatches({ discardQueued: true });
 */
export class FakeBackend implements Backend {
  readonly name: string;
  /** Called before every list page (after the call is recorded); throw to fail that page. */
  beforeList: ((options: ListOptions) => void) | undefined;
  /** Called before every watch is opened; throw to fail it. */
  beforeWatch: ((options: WatchOptions) => void) | undefined;
  /** Every list call's options, oldest first (without the signal). */
  readonly listCalls: ListOptions[] = [];
  /** Every watch call's options, oldest first (without the signal). */
  readonly watchCalls: WatchOptions[] = [];
  readonly #data = new VersionedObjects();
  readonly #clock: Clock;
  readonly #historyLimit: number;
  readonly #watches = new Set<OpenWatch>();
  readonly #faults = { list: [] as Fault[], watch: [] as Fault[] };
  readonly #pager = new Pager();
  #holdEnds = 0;

  constructor(options: FakeBackendOptions = {}) {
    this.name = options.name ?? 'fake';
    this.#clock = options.clock ?? realClock;
    this.#historyLimit = options.historyLimit ?? Number.POSITIVE_INFINITY;
  }

  /** The current revision (the resourceVersion of the last write). */
  get revision(): number {
    return this.#data.revision;
  }

  /** Watches open now. */
  get openWatches(): number {
    return this.#watches.size;
  }

  /** Fresh copies of every current object of `type`, sorted by key. */
  objects<T extends KubeObject = KubeObject>(type: ResourceType): T[] {
    return this.#data.list(typeId(type)).map((stored) => parse<T>(stored));
  }

  // --- Backend reads --------------------------------------------------------------------------

  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: GetOptions = {},
  ): Promise<T> {
    const stored = this.#data.get(typeId(type), key);
    if (stored === undefined) throw new NotFoundError(`${type.plural} "${key.name}" not found`);
    const object = parse<T>(stored);
    return options.metadataOnly === true ? (metadataProjection(type)(object) as T) : object;
  }

  async list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const { signal, ...recorded } = options;
    this.listCalls.push(recorded);
    signal?.throwIfAborted();
    this.beforeList?.(options);
    const fault = this.#faults.list.shift();
    if (fault?.kind === 'error') throw fault.error;
    const page = this.#pager.page(this.#data, typeId(type), options);
    const list = { ...page, items: page.items.map((stored) => parse<T>(stored)) };
    return options.metadataOnly === true ? metadataOnlyList<T>(type, list) : list;
  }

  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    const { signal, ...recorded } = options;
    this.watchCalls.push(recorded);
    const id = typeId(type);
    const selects = objectSelector(options);
    let timer: { cancel(): void } | undefined;
    const onAbort = (): void => stream.end();
    const open: OpenWatch = {
      typeId: id,
      selects,
      held: undefined,
      stream: new WatchStream<KubeObject>(options.allowBookmarks === true, () => {
        this.#watches.delete(open);
        timer?.cancel();
        signal?.removeEventListener('abort', onAbort);
      }),
    };
    const stream = open.stream;
    // Only metadata: each event's object is projected as it is read (bookmarks pass as they are).
    const out = (events: WatchStream<KubeObject>): AsyncIterable<WatchEvent<T>> =>
      options.metadataOnly === true
        ? metadataOnlyEvents<T>(type, events)
        : (events as unknown as AsyncIterable<WatchEvent<T>>);
    try {
      this.beforeWatch?.(options);
      const fault = this.#faults.watch.shift();
      if (fault !== undefined) {
        if (fault.kind === 'error') stream.fail(fault.error);
        else stream.end();
        return out(stream);
      }
      if (options.sendInitialEvents === true) this.#initialEvents(open);
      else this.#replay(open, options.resourceVersion);
    } catch (error) {
      stream.fail(error instanceof Error ? error : new Error(String(error)));
      return out(stream);
    }
    if (signal?.aborted) stream.end();
    if (stream.finished) return out(stream);
    this.#watches.add(open);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== undefined) timer = this.#clock.setTimer(() => stream.end(), options.timeoutMs);
    return out(stream);
  }

  // --- Backend writes -------------------------------------------------------------------------

  async create<T extends KubeObject = KubeObject>(type: ResourceType, object: T): Promise<T> {
    if (this.#data.get(typeId(type), keyOf(object)) !== undefined) {
      throw new AlreadyExistsError(`${type.plural} "${object.metadata.name}" already exists`);
    }
    return this.#write(type, 'ADDED', object, undefined) as T;
  }

  async update<T extends KubeObject = KubeObject>(type: ResourceType, object: T): Promise<T> {
    const previous = this.#data.get(typeId(type), keyOf(object));
    if (previous === undefined) throw new NotFoundError(`${type.plural} "${object.metadata.name}" not found`);
    const expected = object.metadata.resourceVersion;
    if (expected !== undefined && expected !== '' && expected !== previous.object.metadata.resourceVersion) {
      throw new ConflictError(`${type.plural} "${object.metadata.name}": the object has been modified`);
    }
    return this.#write(type, 'MODIFIED', object, previous) as T;
  }

  updateStatus<T extends KubeObject = KubeObject>(type: ResourceType, object: T): Promise<T> {
    return this.update(type, object);
  }

  async patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
  ): Promise<T> {
    if (patch.type !== 'merge')
      throw new UnsupportedError(`the fake backend supports merge patches only, not ${patch.type}`);
    const current = await this.get<T>(type, key);
    return this.update(type, mergePatch(current, patch.patch) as T);
  }

  async delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
  ): Promise<DeleteResult<T>> {
    const previous = this.#data.get(typeId(type), key);
    if (previous === undefined) throw new NotFoundError(`${type.plural} "${key.name}" not found`);
    this.#write(type, 'DELETED', previous.object, previous);
    return { status: 'deleted' };
  }

  // --- Test controls --------------------------------------------------------------------------

  /** Creates or replaces an object without conflict checks; returns it as stored. */
  set<T extends KubeObject>(type: ResourceType, object: T): T {
    const previous = this.#data.get(typeId(type), keyOf(object));
    return this.#write(type, previous === undefined ? 'ADDED' : 'MODIFIED', object, previous) as T;
  }

  /** Deletes an object if it exists; returns whether it did. */
  remove(type: ResourceType, key: ObjectKey): boolean {
    const previous = this.#data.get(typeId(type), key);
    if (previous !== undefined) this.#write(type, 'DELETED', previous.object, previous);
    return previous !== undefined;
  }

  /** The next `times` lists (pages) or watches fail with `error` (a watch: on its first read). */
  failNext(operation: 'list' | 'watch', error: Error, times = 1): void {
    for (let i = 0; i < times; i++) this.#faults[operation].push({ kind: 'error', error });
  }

  /** The next `times` watches end at once, without an event. */
  closeNextWatches(times = 1): void {
    for (let i = 0; i < times; i++) this.#faults.watch.push({ kind: 'close' });
  }

  /** Ends every open watch; with `discardQueued`, events not yet read are lost (a dropped connection). */
  dropWatches(options: { readonly discardQueued?: boolean } = {}): void {
    for (const open of [...this.#watches]) open.stream.end(options.discardQueued === true);
  }

  /** Fails every open watch with `error` after the events already queued (a 410 or a reset mid-stream). */
  breakWatches(error: Error): void {
    for (const open of [...this.#watches]) open.stream.fail(error);
  }

  /** Pushes a raw event (malformed, stale, duplicated, …) into every open watch of `type`; no state changes. */
  inject(type: ResourceType, event: unknown): void {
    for (const open of this.#watches) if (open.typeId === typeId(type)) open.stream.push(event);
  }

  /** Sends a BOOKMARK at the current revision to every open watch that asked for bookmarks (and is past its initial events). */
  bookmark(): void {
    const resourceVersion = String(this.#data.revision);
    for (const open of this.#watches)
      if (open.stream.allowBookmarks && open.held === undefined)
        open.stream.push({ type: 'BOOKMARK', resourceVersion });
  }

  /**
   * The next `times` watches with `sendInitialEvents` send their initial ADDED events but hold back
   * the BOOKMARK that ends them, and every later change, until {@link releaseInitialEventsEnd}
   * (a server still streaming a long list). Faults and {@link inject} still reach them.
   */
  holdInitialEventsEnd(times = 1): void {
    this.#holdEnds += times;
  }

  /** Sends every held end bookmark and the changes queued behind it; holds no more. */
  releaseInitialEventsEnd(): void {
    this.#holdEnds = 0;
    for (const open of [...this.#watches]) {
      const held = open.held;
      if (held === undefined) continue;
      open.held = undefined;
      open.stream.push(held.end);
      for (const change of held.changes) deliver(open, change);
    }
  }

  /** Forgets the history up to `revision` (default all): older watches and continue tokens expire. */
  compact(revision?: number): void {
    this.#data.compact(revision);
  }

  // --- Internals ------------------------------------------------------------------------------

  #write(
    type: ResourceType,
    kind: Change['type'],
    object: KubeObject,
    previous: Stored | undefined,
  ): KubeObject {
    const revision = this.#data.nextRevision();
    const metadata = {
      ...object.metadata,
      uid: previous?.object.metadata.uid ?? object.metadata.uid ?? `uid-${revision}`,
      resourceVersion: String(revision),
    };
    const stored = store({ ...object, metadata });
    const change: Change = { revision, typeId: typeId(type), type: kind, stored, previous };
    this.#data.record(change, keyOf(object));
    this.#data.trim(this.#historyLimit);
    for (const open of [...this.#watches]) if (open.typeId === change.typeId) deliver(open, change);
    return parse(stored);
  }

  #initialEvents(open: OpenWatch): void {
    for (const stored of this.#data.list(open.typeId)) {
      if (open.selects(stored.object)) open.stream.push({ type: 'ADDED', object: parse(stored) });
    }
    const end: WatchEvent = {
      type: 'BOOKMARK',
      resourceVersion: String(this.#data.revision),
      initialEventsEnd: true,
    };
    if (this.#holdEnds > 0) {
      this.#holdEnds--;
      open.held = { end, changes: [] };
    } else open.stream.push(end);
  }

  #replay(open: OpenWatch, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined || resourceVersion === '' || resourceVersion === '0') {
      for (const stored of this.#data.list(open.typeId)) {
        if (open.selects(stored.object)) open.stream.push({ type: 'ADDED', object: parse(stored) });
      }
      return;
    }
    const from = Number(resourceVersion);
    if (!Number.isInteger(from) || from < this.#data.compacted) {
      throw new ExpiredError(`too old resource version: ${resourceVersion} (${this.#data.compacted})`);
    }
    for (const change of this.#data.since(open.typeId, from)) deliver(open, change);
  }
}

/** Pushes a change into a watch as the event its selection sees (entering: ADDED, leaving: DELETED). */
function deliver(open: OpenWatch, change: Change): void {
  if (open.held !== undefined) {
    open.held.changes.push(change);
    return;
  }
  const now = change.type !== 'DELETED' && open.selects(change.stored.object);
  const before = change.previous !== undefined && open.selects(change.previous.object);
  if (change.type === 'DELETED') {
    if (before) open.stream.push({ type: 'DELETED', object: parse(change.stored) });
  } else if (now) {
    open.stream.push({ type: before ? 'MODIFIED' : 'ADDED', object: parse(change.stored) });
  } else if (before) {
    open.stream.push({ type: 'DELETED', object: parse(change.stored) });
  }
}
