import type { EventData } from './event-data.ts';

/** Where an entry is in the write pipeline. */
export type EntryState =
  /** Nothing to write, or waiting for its heartbeat. */
  | 'idle'
  /** In the buffer, waiting for the writer. */
  | 'queued'
  /** Being written now. */
  | 'writing';

/**
 * One Event object and its series: the first occurrence and every repeat within the series
 * window. Writes read `count` and `lastObservedAt` when they run, so repeats that arrive while a
 * write waits are carried by that write.
 */
export interface SeriesEntry {
  readonly key: string;
  readonly data: EventData;
  /** The Event's name; changed only when a create finds the name taken. */
  name: string;
  /** When the first occurrence was recorded (epoch ms). */
  readonly firstAt: number;
  /** Occurrences so far. */
  count: number;
  /** When the last occurrence was recorded (epoch ms). */
  lastObservedAt: number;
  /** Whether the Event exists in the backend, as far as the recorder knows. */
  stored: boolean;
  /** The `count` the last successful write carried (0: none yet). */
  writtenCount: number;
  /** When the last write attempt ended (epoch ms), successful or not. */
  lastWriteAt: number;
  state: EntryState;
}

/**
 * The recorder's memory of recent Events, bounded: at most `maxEntries`, least recently observed
 * evicted first, and an entry whose last occurrence is `windowMs` old has ended its series.
 */
export class SeriesCache {
  readonly maxEntries: number;
  readonly windowMs: number;
  /** Insertion order is observation order: the first entry was observed least recently. */
  readonly #entries = new Map<string, SeriesEntry>();

  constructor(maxEntries: number, windowMs: number) {
    this.maxEntries = maxEntries;
    this.windowMs = windowMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `key` if its series is still open at `now`. */
  lookup(key: string, now: number): SeriesEntry | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && this.#open(entry, now) ? entry : undefined;
  }

  /** Records a repeat of `entry` at `now`: one more occurrence, observed most recently. */
  observe(entry: SeriesEntry, now: number): void {
    entry.count++;
    entry.lastObservedAt = Math.max(entry.lastObservedAt, now);
    if (this.#entries.get(entry.key) === entry) {
      this.#entries.delete(entry.key);
      this.#entries.set(entry.key, entry);
    }
  }

  /**
   * Adds `entry`, replacing an ended series with the same key; returns the entries that left
   * the cache (the replaced one, and the least recently observed past `maxEntries`).
   */
  add(entry: SeriesEntry): SeriesEntry[] {
    const left: SeriesEntry[] = [];
    const replaced = this.#entries.get(entry.key);
    if (replaced !== undefined) {
      this.#entries.delete(entry.key);
      left.push(replaced);
    }
    this.#entries.set(entry.key, entry);
    for (const oldest of this.#entries.values()) {
      if (this.#entries.size <= this.maxEntries) break;
      this.#entries.delete(oldest.key);
      left.push(oldest);
    }
    return left;
  }

  /** Removes and returns the entries whose series ended by `now`. */
  expire(now: number): SeriesEntry[] {
    const ended: SeriesEntry[] = [];
    for (const entry of this.#entries.values()) {
      if (this.#open(entry, now)) break;
      this.#entries.delete(entry.key);
      ended.push(entry);
    }
    return ended;
  }

  /** Whether `entry` is still the cached entry of its key. */
  has(entry: SeriesEntry): boolean {
    return this.#entries.get(entry.key) === entry;
  }

  values(): IterableIterator<SeriesEntry> {
    return this.#entries.values();
  }

  #open(entry: SeriesEntry, now: number): boolean {
    return now - entry.lastObservedAt < this.windowMs;
  }
}
