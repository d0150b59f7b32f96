import type { KubeObject, ResourceType } from '@converge/runtime';
import { EventLog } from './event-log.ts';
import { SortedKeySet } from './sorted-key-set.ts';

/** One version of one key: the object written at `revision`, or a tombstone (undefined). */
export interface Version {
  readonly revision: number;
  readonly object: KubeObject | undefined;
}

/** Something woken when a type's log grows (a watcher). */
export interface LogListener {
  /** Called after each event appended to the type's log. */
  notify(): void;
  /** Called when the type is unregistered: deliver what is in the log, then end. */
  closeAt(endIndex: number): void;
  /** Called when the store closes: end now. */
  end(): void;
}

/**
 * The MVCC state of one type: per key, its versions within the history window (oldest first, the
 * newest is the current state), a sorted index of every key with a retained version (for snapshot
 * reads), a sorted index of live keys (for counting), the type's event log and its watchers.
 */
export class TypeData {
  readonly id: string;
  /** The registered definition; undefined while the data was loaded but the type is not served. */
  type: ResourceType | undefined;
  readonly #versions = new Map<string, Version[]>();
  readonly allKeys = new SortedKeySet();
  readonly liveKeys = new SortedKeySet();
  readonly log = new EventLog();
  readonly listeners = new Set<LogListener>();

  constructor(id: string, type: ResourceType | undefined) {
    this.id = id;
    this.type = type;
  }

  /** The current object at `key`. */
  latest(key: string): KubeObject | undefined {
    const versions = this.#versions.get(key);
    return versions === undefined ? undefined : (versions[versions.length - 1] as Version).object;
  }

  /** The object at `key` as of `revision` (undefined if absent or deleted then). */
  at(key: string, revision: number): KubeObject | undefined {
    const versions = this.#versions.get(key);
    if (versions === undefined) return undefined;
    for (let i = versions.length - 1; i >= 0; i--) {
      const version = versions[i] as Version;
      if (version.revision <= revision) return version.object;
    }
    return undefined;
  }

  /** Appends a version (a tombstone when `object` is undefined). */
  put(key: string, revision: number, object: KubeObject | undefined): void {
    const versions = this.#versions.get(key);
    if (versions === undefined) {
      if (object === undefined) return;
      this.#versions.set(key, [{ revision, object }]);
      this.allKeys.add(key);
    } else {
      versions.push({ revision, object });
    }
    if (object === undefined) this.liveKeys.delete(key);
    else this.liveKeys.add(key);
  }

  /** Sets the only version of a key (loading from disk, no history). */
  load(key: string, revision: number, object: KubeObject | undefined): void {
    if (object === undefined) {
      if (this.#versions.delete(key)) {
        this.allKeys.delete(key);
        this.liveKeys.delete(key);
      }
      return;
    }
    if (!this.#versions.has(key)) this.allKeys.add(key);
    this.#versions.set(key, [{ revision, object }]);
    this.liveKeys.add(key);
  }

  /**
   * Forgets versions of `key` that no read at a revision `>= compacted` can see: everything older
   * than the newest version `<= compacted`, and that version too if it is a tombstone.
   */
  compactKey(key: string, compacted: number): void {
    const versions = this.#versions.get(key);
    if (versions === undefined) return;
    let keep = -1;
    for (let i = versions.length - 1; i >= 0; i--) {
      if ((versions[i] as Version).revision <= compacted) {
        keep = i;
        break;
      }
    }
    if (keep > 0) versions.splice(0, keep);
    const first = versions[0] as Version;
    if (first.object === undefined && first.revision <= compacted) versions.shift();
    if (versions.length === 0) {
      this.#versions.delete(key);
      this.allKeys.delete(key);
    }
  }

  /** Every current object, in key order. */
  *objects(): Generator<[string, KubeObject]> {
    for (const key of this.liveKeys.keys()) {
      const object = this.latest(key);
      if (object !== undefined) yield [key, object];
    }
  }
}
