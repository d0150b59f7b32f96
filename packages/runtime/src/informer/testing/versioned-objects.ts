import type { KubeObject, ObjectKey } from '../../object/index.ts';

/** One stored version of an object: its JSON (handed out as fresh copies) and a frozen parse (for selectors). */
export interface Stored {
  readonly json: string;
  readonly object: KubeObject;
}

/** One change in the history of the fake backend. */
export interface Change {
  readonly revision: number;
  readonly typeId: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The object after the change (for DELETED: the last state, with the deletion's resourceVersion). */
  readonly stored: Stored;
  /** The object before the change (undefined for ADDED). */
  readonly previous: Stored | undefined;
}

function keyString(key: ObjectKey): string {
  return key.namespace === '' ? key.name : `${key.namespace}/${key.name}`;
}

/** Serialises and freezes an object for storage. */
export function store(object: KubeObject): Stored {
  const json = JSON.stringify(object);
  return { json, object: Object.freeze(JSON.parse(json) as KubeObject) };
}

/**
 * The fake backend's data: current objects per type, one global revision counter, and a history
 * of changes that can be compacted (a watch or continue token older than the compaction expires).
 */
export class VersionedObjects {
  readonly #types = new Map<string, Map<string, Stored>>();
  /** Each type's objects in key order, until the type's next write. */
  readonly #sorted = new Map<string, readonly Stored[]>();
  /** Changes from `#head` on are retained; the ones before it are compacted and dropped lazily. */
  #history: Change[] = [];
  #head = 0;
  #revision = 0;
  #compacted = 0;

  get revision(): number {
    return this.#revision;
  }

  /** Changes at or below this revision are gone. */
  get compacted(): number {
    return this.#compacted;
  }

  /** Allocates the next revision. */
  nextRevision(): number {
    return ++this.#revision;
  }

  get(typeId: string, key: ObjectKey): Stored | undefined {
    return this.#types.get(typeId)?.get(keyString(key));
  }

  /** Current objects of a type, sorted by key (namespace, then name). Do not change the array. */
  list(typeId: string): readonly Stored[] {
    const cached = this.#sorted.get(typeId);
    if (cached !== undefined) return cached;
    const objects = this.#types.get(typeId);
    if (objects === undefined) return [];
    const sorted = [...objects.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, stored]) => stored);
    this.#sorted.set(typeId, sorted);
    return sorted;
  }

  /** Records a change made at `revision` and applies it. */
  record(change: Change, key: ObjectKey): void {
    let objects = this.#types.get(change.typeId);
    if (objects === undefined) {
      objects = new Map();
      this.#types.set(change.typeId, objects);
    }
    this.#sorted.delete(change.typeId);
    if (change.type === 'DELETED') objects.delete(keyString(key));
    else objects.set(keyString(key), change.stored);
    this.#history.push(change);
  }

  /** Changes of `typeId` after `revision`, oldest first. */
  since(typeId: string, revision: number): Change[] {
    const out: Change[] = [];
    for (let i = this.#head; i < this.#history.length; i++) {
      const change = this.#history[i] as Change;
      if (change.revision > revision && change.typeId === typeId) out.push(change);
    }
    return out;
  }

  /** Forgets the history up to `revision` (default: all of it). */
  compact(revision = this.#revision): void {
    const upTo = Math.min(revision, this.#revision);
    if (upTo <= this.#compacted) return;
    this.#compacted = upTo;
    while (this.#head < this.#history.length && (this.#history[this.#head] as Change).revision <= upTo)
      this.#head++;
    if (this.#head > 1_024 && this.#head * 2 > this.#history.length) {
      this.#history = this.#history.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Keeps at most `limit` changes in the history, compacting the oldest. */
  trim(limit: number): void {
    const excess = this.#history.length - this.#head - limit;
    if (excess > 0) this.compact((this.#history[this.#head + excess - 1] as Change).revision);
  }
}
