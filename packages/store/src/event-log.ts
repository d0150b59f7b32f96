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
}

/**
 * The events of one type in revision order, addressed by absolute index (the n-th event ever
 * appended is index n), so a watcher's cursor stays valid while old events are dropped from the
 * front. Dropped indexes read as undefined.
 */
export class EventLog {
  #items: StoredEvent[] = [];
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

/**
 * Every event of every type in one global order, with the time it happened: drives compaction by age
 * (`historyWindowMs`) and by count (`maxHistoryEvents`). Dropping an event from the timeline drops it
 * from its type's log too, and raises the compacted revision.
 */
export class Timeline {
  #logs: HistoryOwner[] = [];
  #times: number[] = [];
  #revisions: number[] = [];
  #head = 0;
  #compacted: number;

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

  push(owner: HistoryOwner, revision: number, time: number): void {
    this.#logs.push(owner);
    this.#revisions.push(revision);
    this.#times.push(time);
  }

  /**
   * Drops events older than `oldestTime` and beyond `maxEvents` from their logs, and the versions
   * only they could still show. Returns whether anything was dropped.
   */
  compact(oldestTime: number, maxEvents: number): boolean {
    const before = this.#head;
    while (this.#head < this.#logs.length) {
      const over = this.#logs.length - this.#head > maxEvents;
      if (!over && (this.#times[this.#head] as number) >= oldestTime) break;
      const owner = this.#logs[this.#head] as HistoryOwner;
      this.#compacted = this.#revisions[this.#head] as number;
      this.#logs[this.#head] = undefined as unknown as HistoryOwner;
      this.#head++;
      const event = owner.log.shift();
      if (event !== undefined) owner.compactKey(event.key, this.#compacted);
    }
    const dropped = this.#head > before;
    if (this.#head >= 1024 && this.#head * 2 >= this.#logs.length) {
      this.#logs = this.#logs.slice(this.#head);
      this.#times = this.#times.slice(this.#head);
      this.#revisions = this.#revisions.slice(this.#head);
      this.#head = 0;
    }
    return dropped;
  }
}
