import { Deque } from './deque.ts';

/** What the ready set needs to know of a queued entry. */
export interface ReadyEntry {
  partition: string;
  /** The lane holding the live copy of this entry, or undefined when not queued. */
  lane: Lane<ReadyEntry> | undefined;
  /** Sequence number of the live copy in its lane. */
  slot: number;
  priority: number;
}

/** The keys of one partition at one priority, in FIFO order. Copies whose slot is stale are skipped. */
export class Lane<E extends ReadyEntry> {
  readonly partition: string;
  readonly entries = new Deque<E>();
  readonly slots = new Deque<number>();
  live = 0;
  inRing = false;

  constructor(partition: string) {
    this.partition = partition;
  }
}

/** Empty priority levels kept for reuse; past this many levels, empty ones are dropped. */
const MAX_LEVELS = 16;

/** Idle lanes kept per level for reuse before they are swept. */
const MAX_IDLE_LANES = 64;

class Level<E extends ReadyEntry> {
  readonly priority: number;
  readonly lanes = new Map<string, Lane<E>>();
  readonly ring = new Deque<Lane<E>>();
  live = 0;

  constructor(priority: number) {
    this.priority = priority;
  }
}

/**
 * The ready keys of a queue: the highest priority first; within a priority, round-robin among
 * partitions that have ready keys; within a partition, FIFO by the time the key became ready.
 * A storm of keys in one partition therefore delays a key of another partition by at most one
 * key per busy partition.
 *
 * @internal
 */
export class ReadySet<E extends ReadyEntry> {
  #levels: Level<E>[] = [];
  #size = 0;
  #slot = 0;

  get size(): number {
    return this.#size;
  }

  /** Number of priority levels held, empty ones included (at most 16 more than those with keys). */
  get levels(): number {
    return this.#levels.length;
  }

  /** Appends `entry` at `priority` to its partition's lane. The entry must not be queued. */
  push(entry: E, priority: number): void {
    const level = this.#level(priority);
    let lane = level.lanes.get(entry.partition);
    if (lane === undefined) {
      lane = new Lane<E>(entry.partition);
      level.lanes.set(entry.partition, lane);
    }
    const slot = ++this.#slot;
    lane.entries.push(entry);
    lane.slots.push(slot);
    lane.live++;
    level.live++;
    this.#size++;
    entry.lane = lane as unknown as Lane<ReadyEntry>;
    entry.slot = slot;
    entry.priority = priority;
    if (!lane.inRing) {
      lane.inRing = true;
      level.ring.push(lane);
    }
  }

  /** Removes the live copy of a queued entry (it leaves a stale copy behind). */
  unlink(entry: E): void {
    const lane = entry.lane as unknown as Lane<E> | undefined;
    if (lane === undefined) return;
    lane.live--;
    const level = this.#findLevel(entry.priority);
    if (level !== undefined) level.live--;
    this.#size--;
    entry.lane = undefined;
  }

  /** Takes the next entry, or undefined when none is ready. */
  shift(): E | undefined {
    if (this.#size === 0) return undefined;
    for (const level of this.#levels) {
      if (level.live === 0) continue;
      for (;;) {
        const lane = level.ring.peek();
        if (lane === undefined) break;
        if (lane.live === 0) {
          this.#retire(level, lane);
          continue;
        }
        let entry: E | undefined;
        for (;;) {
          const candidate = lane.entries.shift() as E;
          const slot = lane.slots.shift() as number;
          if ((candidate.lane as unknown) === lane && candidate.slot === slot) {
            entry = candidate;
            break;
          }
        }
        lane.live--;
        level.live--;
        this.#size--;
        entry.lane = undefined;
        if (lane.live === 0) this.#retire(level, lane);
        else if (level.ring.length > 1) {
          level.ring.shift();
          level.ring.push(lane);
        }
        return entry;
      }
    }
    return undefined;
  }

  /** Drops everything. */
  clear(): void {
    this.#levels = [];
    this.#size = 0;
  }

  /** Number of partitions with ready keys, over all priorities. */
  get partitions(): number {
    let n = 0;
    for (const level of this.#levels) for (const lane of level.ring) if (lane.live > 0) n++;
    return n;
  }

  /** Takes the lane at the head of the ring out of it; it stays in `lanes` for reuse. */
  #retire(level: Level<E>, lane: Lane<E>): void {
    level.ring.shift();
    lane.inRing = false;
    lane.entries.clear();
    lane.slots.clear();
    // A partition that empties and refills (one key in, one out) reuses its lane instead of
    // allocating a lane and two deques per key. Idle lanes are swept once they outnumber the busy
    // ones, so partitions used once do not pile up.
    if (level.lanes.size > MAX_IDLE_LANES && level.lanes.size > 2 * level.ring.length) {
      for (const [partition, idle] of level.lanes) if (!idle.inRing) level.lanes.delete(partition);
    }
  }

  #findLevel(priority: number): Level<E> | undefined {
    for (const level of this.#levels) if (level.priority === priority) return level;
    return undefined;
  }

  #level(priority: number): Level<E> {
    const found = this.#findLevel(priority);
    if (found !== undefined) return found;
    // Keep empty levels for reuse (a queue that drains and refills keeps its level), but not
    // without bound: priorities used once must not pile up, since every `shift` walks the levels.
    if (this.#levels.length >= MAX_LEVELS) this.#levels = this.#levels.filter((l) => l.live > 0);
    const level = new Level<E>(priority);
    let i = 0;
    while (i < this.#levels.length && (this.#levels[i] as Level<E>).priority > priority) i++;
    this.#levels.splice(i, 0, level);
    return level;
  }
}
