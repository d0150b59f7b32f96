import { type Clock, realClock, type Timer } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { rememberLastKey, requestKey } from '../object/index.ts';
import { func, integer, nonEmptyString } from '../options.ts';
import {
  addToSlot,
  type Cause,
  CauseList,
  type CauseSet,
  causeOption,
  joinSlots,
  manualCause,
  noCauses,
  requeueAfterCause,
  retryCause,
  slotCauses,
} from './cause.ts';
import { DelayHeap } from './delay-heap.ts';

/** What names the write a cause echoes (a controller's `WriteLedger`). @internal */
export interface CauseAttributor {
  /** `cause`, or a copy of it with `writtenBy`. */
  attributeOnce(cause: Cause, now: number): Cause;
}

import { Deque } from './deque.ts';
import { type Entry, NO_EVENT, type Waiter } from './entry.ts';
import { joinHooks, type WorkQueueKeyInfo, type WorkQueueMetrics, type WorkQueueStats } from './metrics.ts';
import {
  type AddAfterOptions,
  type AddOptions,
  booleanOption,
  delayOption,
  Priority,
  partitionLimitOption,
  partitionLimitsOption,
  priorityOption,
  type RateLimitedOptions,
  type RequeueOptions,
  type WorkQueueOptions,
} from './queue-options.ts';
import { defaultRateLimiter, type RateLimiter } from './rate-limiter.ts';
import { ReadySet } from './ready-set.ts';

/** Released entries kept for reuse, per queue. */
const ENTRY_POOL_SIZE = 1024;

/** The concurrency limit of one partition and its keys processing now. */
interface PartitionSlots {
  limit: number;
  processing: number;
}

/**
 * A work queue with client-go's contract and more:
 * - **dedupe**: a key queued several times is handed out once, at the position of its first add;
 * - **exclusivity**: a key is never handed to two workers at once; a key added while it is
 *   processing runs exactly once more after `done`;
 * - **delays**: `addAfter` with earliest-deadline-wins, or openclarity's hold semantics;
 * - **rate limiting**: `addRateLimited`, `forget`, `numRequeues`;
 * - **priorities and fairness**: highest priority first, round-robin across partitions;
 * - **partition limits**: at most N keys of a partition processing at once (`partitionLimits`,
 *   `setPartitionLimit`). The ready keys of a partition at its limit stay queued in their order
 *   and are passed over: `get` hands out the next key of another partition (by priority, then
 *   round-robin), and the partition's next key once one of its keys is done or requeued. A
 *   partition without a limit costs nothing extra;
 * - **shutdown**: `shutDown()` stops intake and timers; queued keys are not handed out any more,
 *   `get` resolves `undefined`, adds are ignored and counted;
 * - **causes**: every add may say why (`{ cause }`). The causes of the adds a key absorbs are
 *   collected with it and handed out with it: `causesOf(key)` during a run gives the causes that
 *   arrived since the key's previous hand-out (the most recent `maxCausesPerKey` distinct ones,
 *   and how many were let go). Causes never change dedupe, order, priorities or exclusivity.
 *
 * The add side (`add`, `addAfter`, `addRateLimited`) may be called from anywhere; the get side
 * (`get`, `done`, `requeueAfter`, `requeueRateLimited`) belongs to the workers.
 *
 * @example
 * const queue = new WorkQueue<string>();
 * queue.add('default/web');
 * const key = await queue.get(signal); // 'default/web'
 * try { await work(key); queue.forget(key); } finally { queue.done(key); }
 *
 * @example
 * // Why did it run? The causes of the adds it absorbed since it last ran.
 * queue.add('default/web', { cause: { type: 'modified', source: 'webs' } });
 * const key = await queue.get(signal);
 * queue.causesOf(key); // { causes: [{ type: 'modified', source: 'webs' }], dropped: 0 }
 *
 * @example
 * // One queue for many kinds: each kind may hold at most 2 of the shared workers.
 * const shared = new WorkQueue<{ kind: string; name: string }>({
 *   keyOf: (k) => `${k.kind}/${k.name}`,
 *   partitionOf: (k) => k.kind,
 * });
 * shared.setPartitionLimit('Deployment', 2);
 */
export class WorkQueue<K> {
  readonly name: string;
  readonly #keyOf: (key: K) => string;
  readonly #partitionOf: ((key: K) => string) | undefined;
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #hold: boolean;
  readonly #coalesce: boolean;
  #metrics: WorkQueueMetrics | undefined;
  /** The `onEventLatency` hook is set: object-event adds are timed. */
  #timeEvents: boolean;
  /** Causes are stamped with the time they arrive (see `timeCauses`). */
  #timeCauses = false;
  readonly #maxCauses: number;
  /** Limited partitions only: a partition without a limit has no entry (see #started). */
  readonly #limits = new Map<string, PartitionSlots>();

  readonly #entries = new Map<string, Entry<K>>();
  readonly #ready = new ReadySet<Entry<K>>();
  /** Processing entries, as an intrusive doubly-linked list (no hashing, no allocation). */
  #processingHead: Entry<K> | undefined;
  #processingCount = 0;
  /** Released entries kept for reuse (see #release). */
  readonly #pool: Entry<K>[] = [];
  readonly #waiters = new Deque<Waiter<K>>();
  #abortedWaiters = 0;
  /** The signals of `get`s this queue listens to (once each). */
  readonly #watchedSignals = new WeakSet<AbortSignal>();
  readonly #delayed = new DelayHeap<Entry<K>>();
  #waiting = 0;
  #timer: Timer | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #seq = 0;
  #shutDown = false;
  #adds = 0;
  #retries = 0;
  #dropped = 0;

  constructor(options: WorkQueueOptions<K> = {}) {
    this.name = nonEmptyString('name', options.name, 'workqueue');
    this.#keyOf = rememberLastKey(func('keyOf', options.keyOf, requestKey as (key: K) => string));
    this.#partitionOf = func('partitionOf', options.partitionOf, undefined);
    this.#clock = options.clock ?? realClock;
    this.#limiter = options.rateLimiter ?? defaultRateLimiter();
    this.#hold = booleanOption('hold', options.hold, false);
    this.#coalesce = booleanOption('coalesceWhileProcessing', options.coalesceWhileProcessing, true);
    this.#metrics = options.metrics;
    this.#timeEvents = options.metrics?.onEventLatency !== undefined;
    this.#maxCauses = integer('maxCausesPerKey', options.maxCausesPerKey, 8, 0);
    for (const { partition, limit } of partitionLimitsOption(options.partitionLimits)) {
      this.#limits.set(partition, { limit, processing: 0 });
    }
  }

  /**
   * Queued (ready, not processing) keys. Processing and waiting keys are not counted; ready keys
   * of a partition at its limit are (they are queued, only not handed out yet).
   */
  get length(): number {
    return this.#ready.size;
  }

  /** Queued (ready, not processing) keys of one partition, whether or not it is at its limit. */
  lengthIn(partition: string): number {
    return this.#ready.sizeOf(partition);
  }

  /**
   * Keys of one partition handed out and not yet done. Constant time for a partition with a
   * limit; walks the processing keys for one without.
   */
  processingIn(partition: string): number {
    const slots = this.#limits.get(partition);
    return slots === undefined ? this.#countProcessing(partition) : slots.processing;
  }

  /**
   * Sets or removes (`undefined`) the concurrency limit of a partition: at most `limit` of its
   * keys processing at once (handed out and not yet `done` or requeued). Its other ready keys
   * wait in their order while other partitions are served. Lowering a limit below the keys
   * processing only stops new hand-outs until enough are done; raising or removing one hands
   * keys to pending `get`s at once. The limit applies to the partition named by `partitionOf`
   * (without it every key is in the partition `''`).
   *
   * @throws OptionsError if `limit` is not an integer >= 1 or undefined.
   */
  setPartitionLimit(partition: string, limit: number | undefined): void {
    if (typeof partition !== 'string') throw new OptionsError('partition', partition, 'a string');
    partitionLimitOption('limit', limit, true);
    const slots = this.#limits.get(partition);
    if (limit === undefined) {
      if (slots === undefined) return;
      this.#limits.delete(partition);
      if (this.#ready.unblock(partition)) this.#dispatch();
      return;
    }
    if (slots === undefined) {
      const processing = this.#countProcessing(partition);
      this.#limits.set(partition, { limit, processing });
      if (processing >= limit) this.#ready.block(partition);
      return;
    }
    slots.limit = limit;
    if (slots.processing >= limit) this.#ready.block(partition);
    else if (this.#ready.unblock(partition)) this.#dispatch();
  }

  /** Keys handed out and not yet done. */
  get processingCount(): number {
    return this.#processingCount;
  }

  /** Keys waiting on a delayed add. */
  get waitingCount(): number {
    return this.#waiting;
  }

  get isShuttingDown(): boolean {
    return this.#shutDown;
  }

  /** True if the key is queued, processing or waiting on a delayed add. */
  has(key: K): boolean {
    const e = this.#entries.get(this.#keyOf(key));
    return e !== undefined && (e.lane !== undefined || e.processing || e.waiting);
  }

  /** Adds a key: queued once however often it is added; if processing, it runs once more after `done`. */
  add(key: K, options?: AddOptions): void {
    const priority = priorityOption(options?.priority);
    const cause = options === undefined ? manualCause : (causeOption(options.cause) ?? manualCause);
    if (this.#shutDown) {
      this.#drop();
      return;
    }
    this.#adds++;
    const m = this.#metrics;
    if (m?.onAdd !== undefined) {
      try {
        m.onAdd(this.name, priority);
      } catch {
        // A broken metrics adapter must never break the queue.
      }
    }
    const id = this.#keyOf(key);
    const e = this.#entries.get(id);
    if (e === undefined) {
      const created = this.#newEntry(key, id);
      if (this.#timeEvents) this.#stampEvent(created, cause);
      this.#note(created, cause);
      this.#enqueue(created, priority);
      return;
    }
    if (e.waiting && e.waitHold) return;
    if (this.#timeEvents && (e.lane !== undefined || !e.processing || this.#coalesce))
      this.#stampEvent(e, cause);
    this.#readd(e, priority, cause);
  }

  /**
   * Adds a key after `delayMs` (<= 0: at once). If the key already waits, the earlier deadline
   * wins, unless one of the two is a hold (then the first wins).
   */
  addAfter(key: K, delayMs: number, options?: AddAfterOptions): void {
    this.#addAfter(key, delayMs, options, false);
  }

  #addAfter(key: K, delayMs: number, options: AddAfterOptions | undefined, retry: boolean): void {
    const delay = delayOption(delayMs);
    const priority = priorityOption(options?.priority);
    const hold = booleanOption('hold', options?.hold, this.#hold);
    const cause = causeOption(options?.cause) ?? manualCause;
    if (this.#shutDown) {
      this.#drop();
      return;
    }
    if (delay <= 0) {
      this.add(key, options);
      return;
    }
    const id = this.#keyOf(key);
    let e = this.#entries.get(id);
    if (e !== undefined) {
      if (hold && (e.lane !== undefined || e.processing || e.waiting)) return;
      if (e.waiting && e.waitHold) return;
    } else {
      e = this.#newEntry(key, id);
    }
    this.#schedule(e, this.#clock.now() + delay, priority, hold, retry);
    this.#noteWait(e, cause);
  }

  /**
   * Adds a key after the rate limiter's delay for it (which counts one more requeue). Default
   * cause `{ type: 'retry' }`.
   */
  addRateLimited(key: K, options?: RateLimitedOptions): void {
    const delayMs = options?.delayMs === undefined ? undefined : delayOption(options.delayMs);
    priorityOption(options?.priority);
    const cause = causeOption(options?.cause) ?? retryCause;
    if (this.#shutDown) {
      this.#drop();
      return;
    }
    const delay = this.#limit(key, delayMs);
    this.#addAfter(
      key,
      delay,
      options?.priority === undefined ? { cause } : { priority: options.priority, cause },
      true,
    );
  }

  /**
   * Cancels the key's pending rate-limited retry: a delayed add made only by `addRateLimited` or
   * `requeueRateLimited` (any other delayed add merged into it keeps it). For a controller whose
   * run succeeded after a failure had scheduled a retry (an event ran the key early): the retry
   * would reconcile again for nothing, for an object that may be gone. Its causes go with it.
   * Returns whether one was cancelled.
   */
  cancelRetry(key: K): boolean {
    const e = this.#entries.get(this.#keyOf(key));
    if (e === undefined || !e.waiting || !e.waitRetry || e.waitHold) return false;
    e.waiting = false;
    e.waitRetry = false;
    this.#waiting--;
    this.#clearWait(e);
    this.#release(e);
    this.#depth();
    this.#arm();
    return true;
  }

  /**
   * The causes a processing key was handed out with: those of the adds it absorbed since its
   * previous hand-out, oldest first (the most recent `maxCausesPerKey` distinct ones), and how
   * many were let go. Causes that arrive while it runs belong to its next run. Empty for a key
   * that is not processing. A fresh frozen copy on every call.
   */
  causesOf(key: K): CauseSet {
    const e = this.#entries.get(this.#keyOf(key));
    if (e === undefined || !e.processing) return noCauses;
    return slotCauses(e.runCauses);
  }

  /**
   * {@link WorkQueue.causesOf}, each cause passed through `by.attributeOnce(cause, now)` first (a
   * controller names the write a cause echoes: its `WriteLedger`). What it changes is kept in the
   * key's causes: a run that is retried with `keepCauses` hands out the very same cause objects
   * again, and they come back already attributed. `id`: the key's string (the queue's `keyOf`),
   * when the caller has it already. @internal
   */
  attributedCausesOf(key: K, by: CauseAttributor, now: number, id: string = this.#keyOf(key)): CauseSet {
    const e = this.#entries.get(id);
    if (e === undefined || !e.processing) return noCauses;
    const slot = e.runCauses;
    if (slot === undefined) return noCauses;
    if (slot instanceof CauseList) {
      const items = slot.items;
      for (let i = 0; i < items.length; i++) {
        const cause = items[i] as Cause;
        const attributed = by.attributeOnce(cause, now);
        if (attributed !== cause) items[i] = attributed;
      }
      return slotCauses(slot);
    }
    const attributed = by.attributeOnce(slot, now);
    if (attributed !== slot) e.runCauses = attributed;
    return slotCauses(attributed);
  }

  /** Clears the rate limiter's memory of a key (after success, or when giving up). */
  forget(key: K): void {
    this.#limiter.forget(this.#keyOf(key));
  }

  /** Consecutive rate-limited requeues of a key since it was last forgotten. */
  numRequeues(key: K): number {
    return this.#limiter.numRequeues(this.#keyOf(key));
  }

  /**
   * The next key to work on. Resolves as soon as a key is ready; resolves `undefined` when the
   * queue shuts down or `signal` aborts (a signal that has already aborted takes no key). The caller owns the key until it calls `done` (or one of
   * the `requeue*` methods).
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    const key = this.tryGet();
    if (key !== undefined || this.#shutDown) return Promise.resolve(key);
    return new Promise<K | undefined>((resolve) => {
      if (signal !== undefined && !this.#watchedSignals.has(signal)) {
        // One listener per signal, not one added and removed per wait: a worker that waits for
        // every key (a queue that keeps up) would otherwise pay for both on each.
        this.#watchedSignals.add(signal);
        signal.addEventListener('abort', () => this.#abortWaiters(signal), { once: true });
      }
      this.#waiters.push({ settled: false, resolve, signal });
    });
  }

  /** Ends the waits of `signal`, which aborted. */
  #abortWaiters(signal: AbortSignal): void {
    for (const w of this.#waiters) {
      if (w.settled || w.signal !== signal) continue;
      w.settled = true;
      w.resolve(undefined);
      this.#abortedWaiters++;
    }
    this.#pruneWaiters();
  }

  /**
   * The next ready key without waiting, or undefined (also when every ready key is of a partition
   * at its limit).
   */
  tryGet(): K | undefined {
    if (this.#shutDown) return undefined;
    const e = this.#ready.shift();
    if (e === undefined) return undefined;
    this.#start(e);
    return e.key;
  }

  /** Drops aborted waiters once they make up most of the list, so polling with timeouts cannot leak. */
  #pruneWaiters(): void {
    if (this.#abortedWaiters < 64 || this.#abortedWaiters * 2 < this.#waiters.length) return;
    const live = [...this.#waiters].filter((w) => !w.settled);
    this.#waiters.clear();
    for (const w of live) this.#waiters.push(w);
    this.#abortedWaiters = 0;
  }

  /** Marks a key's processing finished; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    const e = this.#entries.get(this.#keyOf(key));
    if (e === undefined || !e.processing) return;
    this.#finish(e);
    this.#endRun(e);
    if (e.dirty && !this.#shutDown) {
      e.dirty = false;
      this.#enqueue(e, e.dirtyPriority);
    } else {
      e.dirty = false;
      this.#release(e);
    }
  }

  /**
   * Finishes a processing key and schedules it again after `delayMs`, in one step so nothing can
   * slip in between (openclarity `RequeueAfter`, controller-runtime Forget+AddAfter). With `hold`,
   * adds that arrive while it waits are ignored, including one that arrived while it was
   * processing. A key that is not processing is simply added after `delayMs`. After `shutDown` it
   * only finishes the key, and the requeue counts as dropped.
   *
   * Causes: the requeue's own (default `{ type: 'requeue-after' }`) goes with the run it leads to;
   * with `keepCauses` the finishing run's causes go first. An add that arrived while the key was
   * processing runs at once with its causes (unless a hold supersedes it, and its causes with it).
   */
  requeueAfter(key: K, delayMs: number, options?: RequeueOptions): void {
    this.#requeueAfter(key, delayMs, options, false);
  }

  #requeueAfter(key: K, delayMs: number, options: RequeueOptions | undefined, retry: boolean): void {
    const delay = delayOption(delayMs);
    const priority = priorityOption(options?.priority);
    const hold = booleanOption('hold', options?.hold, this.#hold);
    const keep = booleanOption('keepCauses', options?.keepCauses, false);
    const cause = causeOption(options?.cause) ?? requeueAfterCause;
    const e = this.#entries.get(this.#keyOf(key));
    if (e === undefined || !e.processing) {
      this.#addAfter(key, delay, options?.cause === undefined ? { ...options, cause } : options, retry);
      return;
    }
    this.#finish(e);
    const wasDirty = e.dirty;
    e.dirty = false;
    if (this.#shutDown) {
      this.#endRun(e);
      this.#release(e);
      this.#drop();
      return;
    }
    // Causes are settled before any enqueue: `#enqueue` may hand the key out at once.
    if (hold) {
      // openclarity: the requested interval is not superseded, not even by an add that arrived
      // while the key was processing.
      if (delay <= 0) {
        this.#carryRun(e, keep, false);
        this.#note(e, cause);
        this.#endRun(e);
        this.#enqueue(e, priority);
        return;
      }
      this.#clearNext(e);
      this.#schedule(e, this.#clock.now() + delay, priority, true, retry);
      this.#carryRun(e, keep, true);
      this.#noteWait(e, cause);
      this.#endRun(e);
      return;
    }
    if (delay <= 0) {
      // One enqueue only: `#enqueue` may hand the key to a waiting worker at once, so a second
      // one would queue a key that is processing again.
      this.#carryRun(e, keep, false);
      this.#note(e, cause);
      this.#endRun(e);
      this.#enqueue(e, wasDirty ? Math.max(priority, e.dirtyPriority) : priority);
      return;
    }
    if (!(e.waiting && e.waitHold)) {
      this.#schedule(e, this.#clock.now() + delay, priority, false, retry);
      this.#carryRun(e, keep, true);
      this.#noteWait(e, cause);
    }
    this.#endRun(e);
    if (wasDirty) this.#enqueue(e, e.dirtyPriority);
  }

  /**
   * Finishes a processing key and requeues it after the rate limiter's delay (or `delayMs`), in
   * one step. Used by controllers for retryable errors. Default cause `{ type: 'retry' }`.
   */
  requeueRateLimited(
    key: K,
    options?: RateLimitedOptions & Pick<RequeueOptions, 'hold' | 'keepCauses'>,
  ): void {
    const delayMs = options?.delayMs === undefined ? undefined : delayOption(options.delayMs);
    priorityOption(options?.priority);
    booleanOption('hold', options?.hold, this.#hold);
    booleanOption('keepCauses', options?.keepCauses, false);
    const cause = causeOption(options?.cause) ?? retryCause;
    if (this.#shutDown) {
      this.done(key);
      this.#drop();
      return;
    }
    const delay = this.#limit(key, delayMs);
    const next: RequeueOptions = {
      cause,
      ...(options?.priority === undefined ? {} : { priority: options.priority }),
      ...(options?.hold === undefined ? {} : { hold: options.hold }),
      ...(options?.keepCauses === undefined ? {} : { keepCauses: options.keepCauses }),
    };
    this.#requeueAfter(key, delay, next, true);
  }

  /**
   * Removes every queued or waiting key for which `predicate` is true (for example all keys of a
   * kind that stopped being served). A matching key that is processing is not run again after
   * `done`, and holds its place under its partition's limit until then. Returns the number of keys
   * removed from the queue or the delay heap.
   */
  removeWhere(predicate: (key: K) => boolean): number {
    let removed = 0;
    for (const e of [...this.#entries.values()]) {
      if (!predicate(e.key)) continue;
      let hit = false;
      if (e.lane !== undefined) {
        this.#ready.unlink(e);
        hit = true;
      }
      if (e.waiting) {
        e.waiting = false;
        e.waitHold = false;
        this.#waiting--;
        hit = true;
      }
      e.dirty = false;
      this.#clearNext(e);
      this.#clearWait(e);
      if (hit) removed++;
      this.#release(e);
    }
    this.#depth();
    this.#arm();
    return removed;
  }

  /**
   * Stops the queue: later adds are ignored (and counted), timers and delayed keys are cancelled,
   * queued keys are never handed out, pending `get`s resolve `undefined`. Keys being processed
   * stay owned by their workers until `done`. Idempotent.
   */
  shutDown(): void {
    if (this.#shutDown) return;
    this.#shutDown = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#delayed.clear();
    this.#ready.clear();
    this.#waiting = 0;
    for (const e of [...this.#entries.values()]) {
      e.lane = undefined;
      e.waiting = false;
      e.dirty = false;
      this.#clearNext(e);
      this.#clearWait(e);
      this.#release(e);
    }
    for (;;) {
      const w = this.#waiters.shift();
      if (w === undefined) break;
      if (w.settled) continue;
      w.settled = true;
      w.resolve(undefined);
    }
    this.#depth();
  }

  /** Total milliseconds of processing not yet done, over all processing keys. */
  unfinishedWorkMs(): number {
    const now = this.#clock.now();
    let total = 0;
    for (let e = this.#processingHead; e !== undefined; e = e.nextProcessing) total += now - e.startedAt;
    return total;
  }

  /** Milliseconds the longest-running processing key has been running, or 0. */
  longestRunningMs(): number {
    const now = this.#clock.now();
    let longest = 0;
    for (let e = this.#processingHead; e !== undefined; e = e.nextProcessing) {
      longest = Math.max(longest, now - e.startedAt);
    }
    return longest;
  }

  /**
   * Adds metric hooks after construction (an adapter instrumenting a queue it did not create);
   * they run after those given in the options, and earlier `observe` calls.
   */
  observe(metrics: WorkQueueMetrics): void {
    if (typeof metrics !== 'object' || metrics === null)
      throw new OptionsError('metrics', metrics, 'an object');
    this.#metrics = joinHooks(this.#metrics, metrics);
    this.#timeEvents = this.#metrics.onEventLatency !== undefined;
  }

  /**
   * From now on, stamps each cause added with the time it arrives (`at`, clock milliseconds) unless
   * it has one, so that a run can tell when each of its events came (a tracing adapter's links).
   * Costs a copy of each cause kept; off by default.
   */
  timeCauses(): void {
    this.#timeCauses = true;
  }

  /** Queued (ready) keys at each priority that has any, highest first. */
  depthByPriority(): { readonly priority: number; readonly size: number }[] {
    return this.#ready.sizeByPriority();
  }

  /**
   * Every key the queue holds (queued, processing or waiting), at most `limit` of them, processing
   * keys first, then waiting ones by due time, then queued ones: a snapshot for a debug view. Walks
   * the keys; costs nothing until called.
   */
  inspect(limit = Number.POSITIVE_INFINITY): WorkQueueKeyInfo<K>[] {
    if (typeof limit !== 'number' || Number.isNaN(limit) || limit < 0) {
      throw new OptionsError('limit', limit, 'a number >= 0');
    }
    // Order first on a few numbers per key, then build the (costlier) infos of the keys shown only:
    // a page of 50 out of 100 000 keys copies 50 keys' causes, not 100 000.
    const rows: {
      readonly e: Entry<K>;
      readonly rank: number;
      readonly at: number;
      readonly since: number;
    }[] = [];
    for (const e of this.#entries.values()) {
      const queued = e.lane !== undefined;
      if (!queued && !e.processing && !e.waiting) continue;
      rows.push({
        e,
        rank: e.processing ? 0 : e.waiting ? 1 : 2,
        at: e.waiting ? e.waitAt : 0,
        since: e.processing ? e.startedAt : 0,
      });
    }
    rows.sort(
      (a, b) =>
        a.rank - b.rank ||
        a.at - b.at ||
        a.since - b.since ||
        (a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0),
    );
    const shown = rows.length > limit ? rows.slice(0, limit) : rows;
    return shown.map(({ e }) => {
      const queued = e.lane !== undefined;
      const next = queued || e.dirty ? e.causes : e.waiting ? e.waitCauses : e.causes;
      return {
        key: e.key,
        id: e.id,
        partition: e.partition,
        queued,
        processing: e.processing,
        dirty: e.processing && e.dirty,
        ...(e.processing ? { processingSince: e.startedAt, runCauses: slotCauses(e.runCauses) } : {}),
        ...(e.waiting ? { waitingUntil: e.waitAt } : {}),
        priority: queued ? e.priority : e.waiting ? e.waitPriority : e.dirty ? e.dirtyPriority : e.priority,
        requeues: this.#limiter.numRequeues(e.id),
        causes: slotCauses(next),
      };
    });
  }

  /** Counters and gauges of the queue. */
  stats(): WorkQueueStats {
    return {
      adds: this.#adds,
      retries: this.#retries,
      droppedAfterShutdown: this.#dropped,
      depth: this.#ready.size,
      processing: this.#processingCount,
      waiting: this.#waiting,
      getters: this.#waiters.length,
      limitedPartitions: this.#limits.size,
      saturatedPartitions: this.#ready.blockedPartitions,
    };
  }

  #newEntry(key: K, id: string): Entry<K> {
    const partition = this.#partitionOf === undefined ? '' : this.#partitionOf(key);
    let e = this.#pool.pop();
    if (e === undefined) {
      e = {
        key,
        id,
        partition,
        lane: undefined,
        slot: 0,
        priority: 0,
        readyAt: 0,
        processing: false,
        startedAt: 0,
        dirty: false,
        dirtyPriority: Priority.low,
        waiting: false,
        waitAt: 0,
        waitTicket: 0,
        waitHold: false,
        waitPriority: 0,
        waitRetry: false,
        prevProcessing: undefined,
        nextProcessing: undefined,
        causes: undefined,
        runCauses: undefined,
        waitCauses: undefined,
        eventAt: NO_EVENT,
      };
    } else {
      // A pooled entry is in no state (see #release). Stale copies of it in lanes or in the delay
      // heap carry an older slot or ticket; those are never reused, so the copies stay stale.
      e.key = key;
      e.id = id;
      e.partition = partition;
      e.dirtyPriority = Priority.low;
    }
    this.#entries.set(id, e);
    return e;
  }

  /**
   * An add of a known entry that is not hold-waiting. `cause` (if any) joins the key's next run
   * unless the add is ignored.
   */
  #readd(e: Entry<K>, priority: number, cause: Cause | undefined): void {
    if (e.lane !== undefined) {
      if (cause !== undefined) this.#note(e, cause);
      if (priority > e.priority) {
        this.#ready.unlink(e);
        this.#ready.push(e, priority);
      }
      return;
    }
    if (e.processing) {
      if (!this.#coalesce) return;
      if (cause !== undefined) this.#note(e, cause);
      e.dirtyPriority = e.dirty ? Math.max(e.dirtyPriority, priority) : priority;
      e.dirty = true;
      return;
    }
    if (cause !== undefined) this.#note(e, cause);
    this.#enqueue(e, priority);
  }

  /** Adds a cause to the key's next run. */
  #note(e: Entry<K>, cause: Cause): void {
    const slot = e.causes;
    if (slot === cause || this.#maxCauses === 0) return;
    const c = this.#timeCauses ? this.#stamp(cause) : cause;
    e.causes = slot === undefined ? c : addToSlot(slot, c, this.#maxCauses);
  }

  /** `cause` with the time it arrived, unless it has one. */
  #stamp(cause: Cause): Cause {
    return cause.at === undefined ? Object.freeze({ ...cause, at: this.#clock.now() }) : cause;
  }

  /** Adds a cause to the delayed add the key waits on. */
  #noteWait(e: Entry<K>, cause: Cause): void {
    if (this.#maxCauses === 0) return;
    e.waitCauses = addToSlot(e.waitCauses, this.#timeCauses ? this.#stamp(cause) : cause, this.#maxCauses);
  }

  /**
   * With `keep`, puts the finishing run's causes before those of the next run (`toWait` false)
   * or of the delayed add (`toWait` true), so the newest stay last.
   */
  #carryRun(e: Entry<K>, keep: boolean, toWait: boolean): void {
    if (!keep || e.runCauses === undefined) return;
    // The run is over: its slot may be changed in place.
    if (toWait) e.waitCauses = joinSlots(e.runCauses, e.waitCauses, this.#maxCauses);
    else e.causes = joinSlots(e.runCauses, e.causes, this.#maxCauses);
    e.runCauses = undefined;
  }

  /** The run is over: its causes are let go. */
  #endRun(e: Entry<K>): void {
    e.runCauses = undefined;
  }

  #clearNext(e: Entry<K>): void {
    e.causes = undefined;
    e.eventAt = NO_EVENT;
  }

  #clearWait(e: Entry<K>): void {
    e.waitCauses = undefined;
  }

  #enqueue(e: Entry<K>, priority: number): void {
    // Only the queue-latency metric reads readyAt: no clock read per key without it.
    if (this.#metrics?.onQueueLatency !== undefined) e.readyAt = this.#clock.now();
    this.#ready.push(e, priority);
    this.#depth();
    this.#dispatch();
  }

  /** Hands ready keys to pending `get`s, oldest first, while both are left. */
  #dispatch(): void {
    while (this.#waiters.length > 0 && this.#ready.size > 0) {
      const w = this.#waiters.peek() as Waiter<K>;
      if (w.settled) {
        this.#waiters.shift();
        continue;
      }
      // Undefined when every ready key is of a partition at its limit: the waiter stays.
      const next = this.#ready.shift();
      if (next === undefined) return;
      this.#waiters.shift();
      this.#start(next);
      w.settled = true;
      w.resolve(next.key);
    }
  }

  #start(e: Entry<K>): void {
    const now = this.#clock.now();
    // The causes collected so far go with this run; new ones belong to the next.
    e.runCauses = e.causes;
    e.causes = undefined;
    e.processing = true;
    e.startedAt = now;
    e.prevProcessing = undefined;
    e.nextProcessing = this.#processingHead;
    if (this.#processingHead !== undefined) this.#processingHead.prevProcessing = e;
    this.#processingHead = e;
    this.#processingCount++;
    if (this.#limits.size !== 0) this.#started(e.partition);
    if (this.#metrics !== undefined) {
      this.#depth();
      this.#report(this.#metrics.onQueueLatency, now - e.readyAt);
      if (e.eventAt !== NO_EVENT) {
        const latency = now - e.eventAt;
        e.eventAt = NO_EVENT;
        this.#report(this.#metrics.onEventLatency, latency);
      }
    }
  }

  #finish(e: Entry<K>): void {
    e.processing = false;
    if (e.prevProcessing === undefined) this.#processingHead = e.nextProcessing;
    else e.prevProcessing.nextProcessing = e.nextProcessing;
    if (e.nextProcessing !== undefined) e.nextProcessing.prevProcessing = e.prevProcessing;
    e.prevProcessing = undefined;
    e.nextProcessing = undefined;
    this.#processingCount--;
    if (this.#metrics?.onWorkDuration) {
      const ms = this.#clock.now() - e.startedAt;
      this.#report(this.#metrics.onWorkDuration, ms);
    }
    if (this.#limits.size !== 0) this.#finished(e.partition);
  }

  /** A key of `partition` was handed out: at its limit, the partition's other keys wait. */
  #started(partition: string): void {
    const slots = this.#limits.get(partition);
    if (slots !== undefined && ++slots.processing >= slots.limit) this.#ready.block(partition);
  }

  /**
   * A key of `partition` finished: below its limit again, the partition's next key goes to a
   * pending `get` at once. The finishing key is out of the ready set and not processing, so it
   * cannot be the one handed out.
   */
  #finished(partition: string): void {
    const slots = this.#limits.get(partition);
    if (slots === undefined) return;
    slots.processing--;
    if (slots.processing < slots.limit && this.#ready.unblock(partition)) this.#dispatch();
  }

  #countProcessing(partition: string): number {
    let n = 0;
    for (let e = this.#processingHead; e !== undefined; e = e.nextProcessing) {
      if (e.partition === partition) n++;
    }
    return n;
  }

  /** Forgets an entry that is in no state any more. */
  #release(e: Entry<K>): void {
    // A live entry is always the one its id maps to (entries are created only on a miss and
    // removed only here), so no lookup is needed before the delete.
    if (e.lane !== undefined || e.processing || e.waiting) return;
    this.#entries.delete(e.id);
    // Most keys live only from add to done; reusing the object saves an allocation (and the boxes
    // of its number fields) per key.
    if (this.#pool.length < ENTRY_POOL_SIZE) {
      e.key = undefined as K;
      e.id = '';
      e.dirty = false;
      e.waitHold = false;
      this.#clearNext(e);
      this.#clearWait(e);
      this.#endRun(e);
      this.#pool.push(e);
    }
  }

  #limit(key: K, delayMs: number | undefined): number {
    const limited = this.#limiter.when(this.#keyOf(key));
    this.#retries++;
    if (this.#metrics?.onRetry) this.#hook(() => this.#metrics?.onRetry?.(this.name));
    return delayMs ?? limited;
  }

  #schedule(e: Entry<K>, at: number, priority: number, hold: boolean, retry: boolean): void {
    if (e.waiting) {
      // A waiting key keeps the highest priority it was given, whichever deadline wins; it is a
      // retry only while every delayed add merged into it was one.
      e.waitPriority = Math.max(e.waitPriority, priority);
      e.waitRetry &&= retry;
      if (at >= e.waitAt) return;
    } else {
      e.waiting = true;
      this.#waiting++;
      e.waitPriority = priority;
      e.waitRetry = retry;
    }
    e.waitAt = at;
    e.waitHold = hold;
    e.waitTicket = ++this.#seq;
    this.#delayed.push({ at, seq: this.#seq, value: e, ticket: e.waitTicket });
    this.#arm();
  }

  /** Keeps one clock timer armed for the earliest live deadline. */
  #arm(): void {
    for (;;) {
      const top = this.#delayed.peek();
      if (top === undefined) break;
      if (top.value.waiting && top.value.waitTicket === top.ticket) break;
      this.#delayed.pop();
    }
    const top = this.#delayed.peek();
    if (top === undefined || this.#shutDown) {
      this.#timer?.cancel();
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (top.at === this.#timerAt && this.#timer !== undefined) return;
    this.#timer?.cancel();
    this.#timerAt = top.at;
    this.#timer = this.#clock.setTimer(() => this.#fire(), top.at - this.#clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    if (this.#shutDown) return;
    const now = this.#clock.now();
    for (;;) {
      const top = this.#delayed.peek();
      if (top === undefined || top.at > now) break;
      this.#delayed.pop();
      const e = top.value;
      if (!e.waiting || e.waitTicket !== top.ticket) continue;
      e.waiting = false;
      e.waitHold = false;
      this.#waiting--;
      this.#adds++;
      if (this.#metrics?.onAdd) {
        const priority = e.waitPriority;
        this.#hook(() => this.#metrics?.onAdd?.(this.name, priority));
      }
      // The delayed add's causes join the next run, unless the add is ignored (processing
      // without coalescing).
      if (e.lane !== undefined || !e.processing || this.#coalesce) this.#joinWait(e);
      this.#clearWait(e);
      this.#readd(e, e.waitPriority, undefined);
    }
    this.#arm();
  }

  /** Notes when the first object event of the key's next run arrived. */
  #stampEvent(e: Entry<K>, cause: Cause): void {
    if (e.eventAt !== NO_EVENT) return;
    const t = cause.type;
    if (t === 'added' || t === 'modified' || t === 'deleted' || t === 'generic')
      e.eventAt = this.#clock.now();
  }

  /** Moves the causes of the delayed add into the next run's. */
  #joinWait(e: Entry<K>): void {
    e.causes = joinSlots(e.causes, e.waitCauses, this.#maxCauses);
  }

  #drop(): void {
    this.#dropped++;
    if (this.#metrics?.onDroppedAfterShutdown)
      this.#hook(() => this.#metrics?.onDroppedAfterShutdown?.(this.name));
  }

  #depth(): void {
    if (this.#metrics?.onDepth) {
      const depth = this.#ready.size;
      this.#hook(() => this.#metrics?.onDepth?.(this.name, depth));
    }
  }

  /** Calls a metrics hook that takes the queue's name and a number; a hook that throws is ignored. */
  #report(hook: ((queue: string, value: number) => void) | undefined, value: number): void {
    if (hook === undefined) return;
    try {
      hook.call(this.#metrics, this.name, value);
    } catch {
      // A broken metrics adapter must never break the queue.
    }
  }

  #hook(call: () => void): void {
    try {
      call();
    } catch {
      // A broken metrics adapter must never break the queue.
    }
  }
}
