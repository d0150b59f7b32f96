import type { KubeObject } from '@converge/runtime';

/** One write of one object, as kept in the history window. */
export interface StoredEvent {
  readonly revision: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** Internal key (see keys.ts). */
  readonly key: string;
  /** The new state; for DELETED the last state carrying the deletion's resourceVersion. */
  readonly object: KubeObject;
  /** The state before this write (undefined for ADDED). */
  readonly prev: KubeObject | undefined;
  /** Milliseconds since the epoch (store clock) when the write happened. */
  readonly time: number;
  /** Approximate encoded size of `object` in bytes (see object-size.ts): what a watcher is sent. */
  readonly size: number;
}

/**
 * The events of one type in revision order, addressed by absolute index (the n-th event ever
 * appended is index n), so a watcher's cursor stays valid while old events are dropped from the
 * front. Dropped indexes read as undefined.
 */
export class EventLog {
  #items: StoredEvent[] = [];
  /** `#before[i]`: the sizes of every event appended before `#items[i]`, added up. */
  #before: number[] = [];
  /** The sizes of every event ever appended, added up. */
  #total = 0;
  #head = 0;
  /** Absolute index of `#items[#head]`. */
  #start = 0;

  /** Absolute index of the oldest retained event. */
  get start(): number {
    return this.#start;
  }

  /** Absolute index the next appended event will get. */
  get end(): number {
    return this.#start + this.#items.length - this.#head;
  }

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(event: StoredEvent): void {
    this.#items.push(event);
    this.#before.push(this.#total);
    this.#total += event.size;
  }

  /**
   * The sizes of the retained events from absolute index `index` to the end, added up: what a
   * watcher at that cursor has still to read (0 at or past the end; every retained event before
   * `start`).
   */
  bytesFrom(index: number): number {
    if (index >= this.end) return 0;
    const i = this.#head + Math.max(index, this.#start) - this.#start;
    return this.#total - (this.#before[i] as number);
  }

  /** Drops the oldest event and returns it. */
  shift(): StoredEvent | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const event = this.#items[this.#head];
    this.#items[this.#head] = undefined as unknown as StoredEvent;
    this.#head++;
    this.#start++;
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#before = this.#before.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  /** The event at absolute index `index`, undefined if dropped or not yet written. */
  at(index: number): StoredEvent | undefined {
    if (index < this.#start) return undefined;
    return this.#items[this.#head + index - this.#start];
  }

  /** Absolute index of the first retained event with a revision greater than `revision`. */
  indexAfter(revision: number): number {
    let lo = this.#head;
    let hi = this.#items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#items[mid] as StoredEvent).revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return this.#start + lo - this.#head;
  }
}

/** What the timeline drops events from: a type's log and its per-key versions. */
export interface HistoryOwner {
  readonly log: EventLog;
  compactKey(key: string, compacted: number): void;
}

/** What the history window holds now (see {@link Timeline}). */
export interface HistoryStats {
  /** Events retained, across all types. */
  readonly events: number;
  /**
   * Approximate bytes the retained history holds beyond the current objects: the size of every
   * version a retained event superseded or deleted (the versions only watchers and reads at an old
   * resourceVersion can still need).
   */
  readonly bytes: number;
  /** Resuming a watch or a paginated list needs a revision `>=` this one; older ones are 410. */
  readonly compactedRevision: number;
}

/** When the timeline drops its oldest events (see {@link Timeline.compact}). */
export interface HistoryBounds {
  /** Events written before this time (store clock) are dropped. */
  readonly oldestTime: number;
  /** At most this many events are kept. */
  readonly maxEvents: number;
  /** At most this many history bytes are kept, unless one event alone holds more. */
  readonly maxBytes: number;
}

/**
 * Every event of every type in one global order, with the time it happened and the bytes it keeps
 * alive: drives compaction by age (`historyWindowMs`), by count (`maxHistoryEvents`) and by bytes
 * (`maxHistoryBytes`). Dropping an event from the timeline drops it from its type's log too, forgets
 * the versions only it could still show, and raises the compacted revision.
 *
 * An event's bytes are those of the version it superseded (or deleted): that version is what the
 * history holds beyond the current objects. An ADDED event costs nothing (its object is current or
 * is paid for by the event that later replaces it). The oldest events are always dropped first, so
 * everything dropped is older than anything kept: a watcher past the dropped events is unaffected,
 * and one that still needed them gets 410 Expired when it reads on.
 */
export class Timeline {
  #logs: HistoryOwner[] = [];
  #times: number[] = [];
  #revisions: number[] = [];
  #sizes: number[] = [];
  #head = 0;
  #compacted: number;
  #bytes = 0;

  constructor(compactedRevision: number) {
    this.#compacted = compactedRevision;
  }

  /** The highest revision whose events are no longer all retained; resuming from `>=` this works. */
  get compacted(): number {
    return this.#compacted;
  }

  get length(): number {
    return this.#logs.length - this.#head;
  }

  /** The history bytes retained (see {@link HistoryStats.bytes}). */
  get bytes(): number {
    return this.#bytes;
  }

  /** `bytes`: the size of the version this event superseded or deleted (0 for ADDED). */
  push(owner: HistoryOwner, revision: number, time: number, bytes: number): void {
    this.#logs.push(owner);
    this.#revisions.push(revision);
    this.#times.push(time);
    this.#sizes.push(bytes);
    this.#bytes += bytes;
  }

  /**
   * Drops the oldest events while one is older than `oldestTime`, more than `maxEvents` are kept or
   * more than `maxBytes` are held (the newest event is never dropped for bytes alone, so a watcher
   * that has read everything before it is never expired by one large write), and the versions only
   * they could still show. Returns whether anything was dropped.
   */
  compact(bounds: HistoryBounds): boolean {
    const { oldestTime, maxEvents, maxBytes } = bounds;
    const before = this.#head;
    while (this.#head < this.#logs.length) {
      const retained = this.#logs.length - this.#head;
      const over = retained > maxEvents || (this.#bytes > maxBytes && retained > 1);
      if (!over && (this.#times[this.#head] as number) >= oldestTime) break;
      const owner = this.#logs[this.#head] as HistoryOwner;
      this.#compacted = this.#revisions[this.#head] as number;
      this.#bytes -= this.#sizes[this.#head] as number;
      this.#logs[this.#head] = undefined as unknown as HistoryOwner;
      this.#head++;
      const event = owner.log.shift();
      if (event !== undefined) owner.compactKey(event.key, this.#compacted);
    }
    const dropped = this.#head > before;
    if (this.#head === this.#logs.length) this.#bytes = 0;
    if (this.#head >= 1024 && this.#head * 2 >= this.#logs.length) {
      this.#logs = this.#logs.slice(this.#head);
      this.#times = this.#times.slice(this.#head);
      this.#revisions = this.#revisions.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
    return dropped;
  }
}
