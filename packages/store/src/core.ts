import {
  apiVersionOf,
  type Fence,
  InternalError,
  type KubeObject,
  type OwnerReference,
  type ResourceType,
  resourceType,
  statusError,
  typeId,
  UnavailableError,
} from '@converge/runtime';
import { TypeConflictError } from './errors.ts';
import { Timeline } from './event-log.ts';
import { deepFreeze, type JsonObject, withMutableMeta } from './json.ts';
import { encodeKey } from './keys.ts';
import { estimateSize } from './object-size.ts';
import { Persistence, type PersistenceStatus, type SnapshotData } from './persistence/index.ts';
import type { ResolvedStoreOptions } from './store-options.ts';
import { TypeData } from './type-data.ts';

/** A type whose definition is registered (served). */
export type ServedType = TypeData & { type: ResourceType };

/** Where an object with a given uid lives. */
export interface UidEntry {
  readonly td: TypeData;
  readonly key: string;
}

/** Called after every committed write (the garbage collector listens). */
export type CommitHook = (
  td: TypeData,
  key: string,
  prev: KubeObject | undefined,
  next: KubeObject | undefined,
) => void;

/**
 * The store's state and its single write path. Every write goes through {@link StoreCore.commit}:
 * one new revision, logged to disk first (if persistent), then applied to the type's versions, its
 * event log and the global timeline, the uid and owner indexes, and fanned out to watchers.
 */
export class StoreCore {
  readonly options: ResolvedStoreOptions;
  readonly timeline: Timeline;
  /** Woken after every commit (lists and watches waiting for a future resourceVersion). */
  readonly revisionListeners = new Set<() => void>();
  onCommit: CommitHook | undefined;
  #revision: number;
  readonly #types = new Map<string, TypeData>();
  readonly #byGvk = new Map<string, ServedType>();
  readonly #byUid = new Map<string, UidEntry>();
  readonly #dependents = new Map<string, Set<string>>();
  readonly #persistence: Persistence | undefined;
  /** The fence marks the data directory held when the store opened. */
  readonly loadedFences: readonly Fence[];
  #namespaceType: ServedType | undefined;
  #closed = false;

  constructor(options: ResolvedStoreOptions) {
    this.options = options;
    // Like etcd, an empty store is at revision 1: "0" means "any" in list and watch requests.
    let revision = 1;
    let fences: readonly Fence[] = [];
    if (options.dataDir !== undefined) {
      const opened = Persistence.open(options.dataDir, {
        fsync: options.fsync,
        snapshotEveryRecords: options.snapshotEveryRecords,
        ...options.persistence,
        clock: options.clock,
        logger: options.logger,
        keyOf: (o) => encodeKey(o.metadata.namespace ?? '', o.metadata.name ?? ''),
      });
      this.#persistence = opened.persistence;
      revision = Math.max(revision, opened.state.revision);
      fences = opened.state.fences;
      try {
        for (const [id, objects] of opened.state.types) {
          const td = this.#data(id);
          for (const [key, object] of objects) {
            const frozen = deepFreeze(object);
            td.load(key, Number(frozen.metadata.resourceVersion), frozen);
            this.#index(td, key, undefined, frozen);
          }
        }
      } catch (error) {
        // No store comes of it: its data directory's lock must not outlive the failure.
        opened.persistence.close();
        throw error;
      }
    }
    this.#revision = revision;
    this.loadedFences = fences;
    this.timeline = new Timeline(revision);
    // The compaction policy is evaluated at start too: a log grown over many short runs shrinks.
    this.#persistence?.maybeSnapshot(() => this.#snapshotData());
  }

  /** The revision of the last write. */
  get revision(): number {
    return this.#revision;
  }

  get closed(): boolean {
    return this.#closed;
  }

  checkOpen(): void {
    if (this.#closed) throw new UnavailableError(`${this.options.name}: the store is closed`);
  }

  /** The served data of `type`, or a NotFoundError (`the server could not find the requested resource`). */
  resolve(type: ResourceType): ServedType {
    this.checkOpen();
    const td =
      typeof type === 'object' && type !== null && typeof type.plural === 'string'
        ? this.#types.get(typeId(type))
        : undefined;
    if (td?.type === undefined) throw statusError.unknownResource();
    return td as ServedType;
  }

  /** The served type of `apiVersion` + `kind`. */
  byKind(apiVersion: string, kind: string): ServedType | undefined {
    return this.#byGvk.get(`${apiVersion}\u0000${kind}`);
  }

  served(): ServedType[] {
    return [...this.#byGvk.values()];
  }

  /** The served core `Namespace` type, if any. */
  get namespaceType(): ServedType | undefined {
    return this.#namespaceType;
  }

  /** Registers (or redefines) a type; its data (possibly loaded from disk) becomes served. */
  register(input: ResourceType): ServedType {
    this.checkOpen();
    const type = resourceType(input);
    const id = typeId(type);
    const gvk = `${apiVersionOf(type)}\u0000${type.kind}`;
    const other = this.#byGvk.get(gvk);
    if (other !== undefined && other.id !== id) {
      throw new TypeConflictError(`${apiVersionOf(type)} ${type.kind} is already served as ${other.id}`);
    }
    const existing = this.#types.get(id);
    if (existing?.type !== undefined && existing.type.kind !== type.kind) {
      throw new TypeConflictError(`${id} already serves kind ${existing.type.kind}, not ${type.kind}`);
    }
    const td = this.#data(id);
    td.type = type;
    this.#byGvk.set(gvk, td as ServedType);
    if (type.group === '' && type.kind === 'Namespace') this.#namespaceType = td as ServedType;
    return td as ServedType;
  }

  /** Stops serving a type: deletes its objects (one revision each), then ends its watchers. */
  unregister(input: ResourceType): void {
    this.checkOpen();
    const td = this.#types.get(typeId(input));
    if (td?.type === undefined) return;
    for (const key of td.liveKeys.keys()) this.commit(td, key, td.latest(key), undefined);
    this.#byGvk.delete(`${apiVersionOf(td.type)}\u0000${td.type.kind}`);
    if (this.#namespaceType === td) this.#namespaceType = undefined;
    td.type = undefined;
    this.#types.delete(td.id);
    for (const listener of [...td.listeners]) listener.closeAt(td.log.end);
  }

  /** The object with `uid`, and where it lives. */
  byUid(uid: string): (UidEntry & { object: KubeObject }) | undefined {
    const entry = this.#byUid.get(uid);
    const object = entry?.td.latest(entry.key);
    return entry === undefined || object === undefined ? undefined : { ...entry, object };
  }

  /** Uids of the objects that have an owner reference to `uid`. */
  dependentsOf(uid: string): string[] {
    return [...(this.#dependents.get(uid) ?? [])];
  }

  /**
   * Commits one write at a new revision: `draft` becomes the stored (frozen) object, or, when
   * `draft` is undefined, the key is deleted and the DELETED event carries `final` (default: `prev`)
   * with the deletion's resourceVersion. Returns the stored or final object.
   */
  commit(
    td: TypeData,
    key: string,
    prev: KubeObject | undefined,
    draft: JsonObject | undefined,
    final?: JsonObject,
  ): KubeObject {
    this.checkOpen();
    const revision = this.#revision + 1;
    let object: KubeObject;
    if (draft !== undefined) {
      // Rebuilt as fresh literals: the write pipeline deletes server-owned fields from the draft,
      // which leaves V8 objects in slow dictionary mode; readers of every stored object pay for that.
      const metadata: JsonObject = { ...(draft.metadata as JsonObject), resourceVersion: String(revision) };
      object = deepFreeze({ ...draft, metadata }) as unknown as KubeObject;
    } else {
      const last = final ?? withMutableMeta(prev as KubeObject);
      (last.metadata as JsonObject).resourceVersion = String(revision);
      object = deepFreeze(last) as unknown as KubeObject;
    }
    const stored = draft === undefined ? undefined : object;
    if (this.#persistence !== undefined) {
      try {
        this.#persistence.append({ revision, typeId: td.id, key, object: stored });
      } catch (cause) {
        throw new InternalError(
          `${this.options.name}: failed to persist the write: ${(cause as Error).message}`,
          {
            cause,
          },
        );
      }
    }
    this.#revision = revision;
    td.put(key, revision, stored);
    const time = this.options.clock.now();
    const type = stored === undefined ? 'DELETED' : prev === undefined ? 'ADDED' : 'MODIFIED';
    const size = estimateSize(object);
    td.log.push({ revision, type, key, object, prev, time, size });
    this.timeline.push(td, revision, time, prev === undefined ? 0 : estimateSize(prev));
    this.#index(td, key, prev, stored);
    this.compact();
    for (const listener of td.listeners) listener.notify();
    for (const listener of this.revisionListeners) listener();
    // After the write is committed and published: a failed snapshot never fails it (it is
    // logged, counted in persistenceStatus() and retried with backoff).
    this.#persistence?.maybeSnapshot(() => this.#snapshotData());
    this.onCommit?.(td, key, prev, stored);
    return object;
  }

  /** Drops history older than the window or beyond the event and byte bounds. */
  compact(): void {
    const { clock, historyWindowMs, maxHistoryEvents, maxHistoryBytes } = this.options;
    this.timeline.compact({
      oldestTime: clock.now() - historyWindowMs,
      maxEvents: maxHistoryEvents,
      maxBytes: maxHistoryBytes,
    });
  }

  /** Resolves when every committed write is durable. */
  async durable(): Promise<void> {
    if (this.#persistence === undefined) return;
    try {
      await this.#persistence.flushed();
    } catch (cause) {
      throw new InternalError(`${this.options.name}: failed to persist the write`, { cause });
    }
  }

  /**
   * Keeps `marks` as the data directory's fence marks, durably, before a raised mark is used (no-op
   * without a data directory); throws a StorePersistError if it fails.
   */
  saveFences(marks: readonly Fence[]): void {
    this.#persistence?.saveFences(marks);
  }

  /** Writes a snapshot of every object now (no-op without a data directory); throws if it fails. */
  snapshot(): void {
    this.#persistence?.snapshot(this.#snapshotData());
  }

  /** The data directory's health (undefined without one). */
  persistenceStatus(): PersistenceStatus | undefined {
    return this.#persistence?.status();
  }

  #snapshotData(): SnapshotData {
    const types = new Map<string, Iterable<KubeObject>>();
    for (const td of this.#types.values()) {
      types.set(
        td.id,
        (function* () {
          for (const [, object] of td.objects()) yield object;
        })(),
      );
    }
    return { revision: this.#revision, types };
  }

  /** Ends every watcher and closes the data directory. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const td of this.#types.values()) for (const listener of [...td.listeners]) listener.end();
    this.revisionListeners.clear();
    this.#persistence?.close();
  }

  #data(id: string): TypeData {
    let td = this.#types.get(id);
    if (td === undefined) {
      td = new TypeData(id, undefined);
      this.#types.set(id, td);
    }
    return td;
  }

  #index(td: TypeData, key: string, prev: KubeObject | undefined, next: KubeObject | undefined): void {
    const prevUid = prev?.metadata.uid;
    const nextUid = next?.metadata.uid;
    const prevRefs = prev?.metadata.ownerReferences;
    const nextRefs = next?.metadata.ownerReferences;
    if (prevUid !== undefined && prevUid !== nextUid) this.#byUid.delete(prevUid);
    if (nextUid !== undefined) this.#byUid.set(nextUid, { td, key });
    if (prevRefs === nextRefs && prevUid === nextUid) return;
    if (prevUid !== undefined) this.#unlink(prevUid, prevRefs);
    if (nextUid !== undefined) this.#link(nextUid, nextRefs);
  }

  #link(uid: string, refs: readonly OwnerReference[] | undefined): void {
    for (const ref of refs ?? []) {
      let set = this.#dependents.get(ref.uid);
      if (set === undefined) {
        set = new Set();
        this.#dependents.set(ref.uid, set);
      }
      set.add(uid);
    }
  }

  #unlink(uid: string, refs: readonly OwnerReference[] | undefined): void {
    for (const ref of refs ?? []) {
      const set = this.#dependents.get(ref.uid);
      if (set === undefined) continue;
      set.delete(uid);
      if (set.size === 0) this.#dependents.delete(ref.uid);
    }
  }
}
