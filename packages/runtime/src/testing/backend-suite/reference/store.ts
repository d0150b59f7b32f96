import type { KubeObject, ObjectKey } from '../../../object/index.ts';
import { deepFreeze } from './json.ts';

/** One committed change: `next` undefined is a deletion. Objects are frozen and carry their revision. */
export interface LogEntry {
  readonly rev: number;
  readonly typeId: string;
  readonly prev: KubeObject | undefined;
  readonly next: KubeObject | undefined;
}

interface Version {
  readonly rev: number;
  /** undefined: deleted at this revision. */
  readonly object: KubeObject | undefined;
}

/** The storage key of an object: sorts by namespace, then name. */
export function storageKey(key: ObjectKey): string {
  return `${key.namespace}\u0000${key.name}`;
}

/** Sets `metadata.resourceVersion` and freezes. */
function stamp(object: KubeObject, rev: number): KubeObject {
  return deepFreeze({ ...object, metadata: { ...object.metadata, resourceVersion: String(rev) } });
}

/**
 * An etcd-like multi-version store: one global revision, every version of every key since the last
 * compaction, and an event log for watches. Everything is synchronous, so a read and a subscription
 * made in one turn see a consistent cut.
 */
export class VersionedStore {
  #revision = 1;
  #compacted = 0;
  readonly #data = new Map<string, Map<string, Version[]>>();
  #log: LogEntry[] = [];
  readonly #listeners = new Set<(entry: LogEntry) => void>();

  /** The revision of the last write (1 for an empty store). */
  get revision(): number {
    return this.#revision;
  }

  /** Reads and watches at revisions below this are expired. */
  get compacted(): number {
    return this.#compacted;
  }

  #versions(typeId: string, key: string): Version[] {
    let keys = this.#data.get(typeId);
    if (keys === undefined) {
      keys = new Map();
      this.#data.set(typeId, keys);
    }
    let versions = keys.get(key);
    if (versions === undefined) {
      versions = [];
      keys.set(key, versions);
    }
    return versions;
  }

  /** The current object under `key`. */
  latest(typeId: string, key: ObjectKey): KubeObject | undefined {
    return this.#data.get(typeId)?.get(storageKey(key))?.at(-1)?.object;
  }

  /** The live objects of a type at revision `rev`, in key order. */
  snapshot(typeId: string, rev: number): { key: string; object: KubeObject }[] {
    const out: { key: string; object: KubeObject }[] = [];
    for (const [key, versions] of this.#data.get(typeId) ?? []) {
      let found: Version | undefined;
      for (const version of versions) if (version.rev <= rev) found = version;
      if (found?.object !== undefined) out.push({ key, object: found.object });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Every current object of every type. */
  *all(): Generator<{ typeId: string; object: KubeObject }> {
    for (const [typeId, keys] of this.#data) {
      for (const versions of keys.values()) {
        const object = versions.at(-1)?.object;
        if (object !== undefined) yield { typeId, object };
      }
    }
  }

  /** Writes `object` (its resourceVersion is replaced) and returns it as stored. */
  put(typeId: string, key: ObjectKey, object: KubeObject): KubeObject {
    const versions = this.#versions(typeId, storageKey(key));
    const prev = versions.at(-1)?.object;
    const rev = ++this.#revision;
    const stored = stamp(object, rev);
    versions.push({ rev, object: stored });
    this.#commit({ rev, typeId, prev, next: stored });
    return stored;
  }

  /** Deletes `key` and returns its last state with the deletion's resourceVersion. */
  remove(typeId: string, key: ObjectKey): KubeObject {
    const versions = this.#versions(typeId, storageKey(key));
    const prev = versions.at(-1)?.object;
    if (prev === undefined) throw new Error(`reference store: nothing to delete at ${storageKey(key)}`);
    const rev = ++this.#revision;
    versions.push({ rev, object: undefined });
    this.#commit({ rev, typeId, prev, next: undefined });
    return stamp(prev, rev);
  }

  #commit(entry: LogEntry): void {
    this.#log.push(entry);
    for (const listener of [...this.#listeners]) listener(entry);
  }

  /** Log entries after `rev` (call only with rev >= compacted). */
  entriesAfter(rev: number): LogEntry[] {
    return this.#log.filter((e) => e.rev > rev);
  }

  /** Calls `listener` synchronously for every later commit; returns the unsubscribe function. */
  subscribe(listener: (entry: LogEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Forgets every version and log entry older than the current revision. */
  compact(): void {
    const at = this.#revision;
    this.#compacted = at;
    for (const keys of this.#data.values()) {
      for (const [key, versions] of keys) {
        let keep = 0;
        versions.forEach((v, i) => {
          if (v.rev <= at) keep = i;
        });
        const kept = versions.slice(keep);
        if (kept.length === 1 && kept[0]?.object === undefined) keys.delete(key);
        else keys.set(key, kept);
      }
    }
    this.#log = this.#log.filter((e) => e.rev > at);
  }
}
