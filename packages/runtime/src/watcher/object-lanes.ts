/** One unit of work in a lane. `run` should not reject; if it does, the rejection goes to `onTaskError`. */
export interface LaneTask {
  run(): Promise<void>;
}

interface Lane<T extends LaneTask> {
  readonly key: string;
  readonly tasks: T[];
  running: boolean;
}

/** Counters of {@link ObjectLanes}. */
export interface ObjectLanesStats {
  /** Tasks running now (at most `workers`). */
  readonly running: number;
  /** Tasks waiting: behind a running task of their lane, or for a worker. */
  readonly queued: number;
  /** Lanes with a running or waiting task. */
  readonly lanes: number;
}

/**
 * Runs tasks on a bounded pool of workers, one lane per object: the tasks of a lane run one at a
 * time in push order, tasks of different lanes run in parallel. Lanes with work wait for a worker
 * in a round-robin ring, one task per turn, so a slow lane holds one worker and delays nothing but
 * its own tasks (no head-of-line blocking, unlike hashing objects onto a fixed set of shard
 * queues). A lane exists only while it has work.
 */
export class ObjectLanes<T extends LaneTask> {
  readonly #workers: number;
  readonly #onTaskError: (error: unknown) => void;
  readonly #lanes = new Map<string, Lane<T>>();
  readonly #ready = new Ring<Lane<T>>();
  readonly #inFlight = new Set<Promise<void>>();
  #queued = 0;

  constructor(workers: number, onTaskError: (error: unknown) => void) {
    this.#workers = workers;
    this.#onTaskError = onTaskError;
  }

  /** Appends `task` to the lane `key`; it runs after the lane's earlier tasks, when a worker is free. */
  push(key: string, task: T): void {
    let lane = this.#lanes.get(key);
    if (lane === undefined) {
      lane = { key, tasks: [], running: false };
      this.#lanes.set(key, lane);
    }
    lane.tasks.push(task);
    this.#queued++;
    if (!lane.running && lane.tasks.length === 1) this.#ready.push(lane);
    this.#pump();
  }

  /** Takes a waiting task out of its lane. False if it is not waiting there (running, done, unknown). */
  remove(key: string, task: T): boolean {
    const lane = this.#lanes.get(key);
    if (lane === undefined) return false;
    const index = lane.tasks.indexOf(task);
    if (index < 0) return false;
    lane.tasks.splice(index, 1);
    this.#queued--;
    if (lane.tasks.length === 0 && !lane.running) {
      this.#ready.delete(lane);
      this.#lanes.delete(key);
    }
    return true;
  }

  /** Drops every waiting task; running tasks finish. Returns how many were dropped. */
  clear(): number {
    const dropped = this.#queued;
    for (const lane of this.#lanes.values()) {
      lane.tasks.length = 0;
      if (!lane.running) this.#lanes.delete(lane.key);
    }
    this.#ready.clear();
    this.#queued = 0;
    return dropped;
  }

  /** Promises of the tasks running now; each resolves when its task has settled. */
  inFlight(): Promise<void>[] {
    return [...this.#inFlight];
  }

  stats(): ObjectLanesStats {
    return { running: this.#inFlight.size, queued: this.#queued, lanes: this.#lanes.size };
  }

  #pump(): void {
    while (this.#inFlight.size < this.#workers) {
      const lane = this.#ready.shift();
      if (lane === undefined) return;
      const task = lane.tasks.shift() as T;
      this.#queued--;
      lane.running = true;
      const run = this.#run(task).then(() => {
        this.#inFlight.delete(run);
        lane.running = false;
        if (lane.tasks.length > 0) this.#ready.push(lane);
        else if (this.#lanes.get(lane.key) === lane) this.#lanes.delete(lane.key);
        this.#pump();
      });
      this.#inFlight.add(run);
    }
  }

  async #run(task: T): Promise<void> {
    try {
      await task.run();
    } catch (error) {
      try {
        this.#onTaskError(error);
      } catch {
        // The pool must survive a broken error hook.
      }
    }
  }
}

/** A FIFO of lanes with O(1) amortised push and shift, and removal of a given lane. */
class Ring<V> {
  #items: (V | undefined)[] = [];
  #head = 0;
  #size = 0;

  push(value: V): void {
    this.#items.push(value);
    this.#size++;
  }

  shift(): V | undefined {
    while (this.#head < this.#items.length) {
      const value = this.#items[this.#head];
      this.#items[this.#head] = undefined;
      this.#head++;
      if (value !== undefined) {
        this.#size--;
        this.#compact();
        return value;
      }
    }
    return undefined;
  }

  delete(value: V): void {
    const index = this.#items.indexOf(value, this.#head);
    if (index < 0) return;
    this.#items[index] = undefined;
    this.#size--;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
    this.#size = 0;
  }

  #compact(): void {
    if (this.#size === 0) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}
