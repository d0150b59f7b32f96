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

/**
 * The keys of one partition at one priority, in FIFO order. Copies whose slot is stale are skipped.
 *
 * A lane is in one of three states: idle (no live keys, out of the ring, kept for reuse), in the
 * ring (live keys, served in turn), or parked (live keys of a blocked partition, out of the ring
 * until the partition is unblocked).
 */
export class Lane<E extends ReadyEntry> {
  readonly partition: string;
  readonly entries = new Deque<E>();
  readonly slots = new Deque<number>();
  live = 0;
  inRing = false;
  /** The partition is blocked: this lane's keys are not handed out. */
  blocked = false;

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
  /** Lanes with live keys that are out of the ring (their partition is blocked). */
  parked = 0;

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
 * A partition can be blocked (the queue blocks one that reached its concurrency limit): its keys
 * stay queued, in order, but `shift` passes over them. Its lanes leave the round when `shift`
 * meets them and join the end of the round again when it is unblocked. Nothing of this runs for
 * a set that never blocks a partition, except one flag read per `shift`.
 *
 * @internal
 */
export class ReadySet<E extends ReadyEntry> {
  #levels: Level<E>[] = [];
  #size = 0;
  #slot = 0;
  /** Blocked partitions; lanes created for one of these start blocked. */
  readonly #blocked = new Set<string>();

  get size(): number {
    return this.#size;
  }

  /** Number of priority levels held, empty ones included (at most 16 more than those with keys). */
  get levels(): number {
    return this.#levels.length;
  }

  /** Number of lanes held over all levels, idle ones kept for reuse included. */
  get lanes(): number {
    let n = 0;
    for (const level of this.#levels) n += level.lanes.size;
    return n;
  }

  /** Number of lanes out of the round because their partition is blocked (bookkeeping for the sweep). */
  get parkedLanes(): number {
    let n = 0;
    for (const level of this.#levels) n += level.parked;
    return n;
  }

  /** Number of blocked partitions. */
  get blockedPartitions(): number {
    return this.#blocked.size;
  }

  /** Number of ready entries of one partition, over all priorities (blocked or not). */
  sizeOf(partition: string): number {
    let n = 0;
    for (const level of this.#levels) n += level.lanes.get(partition)?.live ?? 0;
    return n;
  }

  /** Number of ready entries at each priority that has any, highest first. */
  sizeByPriority(): { readonly priority: number; readonly size: number }[] {
    const sizes: { priority: number; size: number }[] = [];
    for (const level of this.#levels)
      if (level.live > 0) sizes.push({ priority: level.priority, size: level.live });
    return sizes.sort((a, b) => b.priority - a.priority);
  }

  /** Stops handing out entries of `partition` (they stay queued, in order). Idempotent. */
  block(partition: string): void {
    if (this.#blocked.has(partition)) return;
    this.#blocked.add(partition);
    // Lanes in the ring leave it when `shift` meets them; no ring is searched here.
    for (const level of this.#levels) {
      const lane = level.lanes.get(partition);
      if (lane !== undefined) lane.blocked = true;
    }
  }

  /**
   * Hands out entries of `partition` again: its parked lanes join the end of the round of their
   * level. Returns false if it was not blocked.
   */
  unblock(partition: string): boolean {
    if (!this.#blocked.delete(partition)) return false;
    for (const level of this.#levels) {
      const lane = level.lanes.get(partition);
      if (lane === undefined) continue;
      lane.blocked = false;
      if (lane.live > 0 && !lane.inRing) {
        level.parked--;
        lane.inRing = true;
        level.ring.push(lane);
      }
    }
    return true;
  }

  /** Appends `entry` at `priority` to its partition's lane. The entry must not be queued. */
  push(entry: E, priority: number): void {
    const level = this.#level(priority);
    let lane = level.lanes.get(entry.partition);
    if (lane === undefined) {
      lane = new Lane<E>(entry.partition);
      if (this.#blocked.size !== 0 && this.#blocked.has(entry.partition)) lane.blocked = true;
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
      if (!lane.blocked) {
        lane.inRing = true;
        level.ring.push(lane);
      } else if (lane.live === 1) {
        level.parked++;
      }
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
    if (lane.live === 0 && !lane.inRing) {
      // A parked lane lost its last key: it is idle now (a lane in the ring is retired by `shift`).
      if (level !== undefined) level.parked--;
      lane.entries.clear();
      lane.slots.clear();
    }
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
        if (lane.blocked) {
          // Park it: out of the ring, its keys kept in order, until `unblock`.
          level.ring.shift();
          lane.inRing = false;
          level.parked++;
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

  /** Number of partitions with ready keys, over all priorities, blocked ones included. */
  get partitions(): number {
    const partitions = new Set<string>();
    for (const level of this.#levels) {
      for (const [partition, lane] of level.lanes) if (lane.live > 0) partitions.add(partition);
    }
    return partitions.size;
  }

  /** Takes the lane at the head of the ring out of it; it stays in `lanes` for reuse. */
  #retire(level: Level<E>, lane: Lane<E>): void {
    level.ring.shift();
    lane.inRing = false;
    lane.entries.clear();
    lane.slots.clear();
    // A partition that empties and refills (one key in, one out) reuses its lane instead of
    // allocating a lane and two deques per key. Idle lanes are swept once they outnumber the busy
    // ones (in the ring or parked), so partitions used once do not pile up.
    const busy = level.ring.length + level.parked;
    if (level.lanes.size > MAX_IDLE_LANES + level.parked && level.lanes.size > 2 * busy) {
      for (const [partition, idle] of level.lanes) {
        if (!idle.inRing && idle.live === 0) level.lanes.delete(partition);
      }
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
