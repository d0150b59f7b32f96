import { OptionsError } from '../errors.ts';
import { durationMs, integer } from '../options.ts';
import type { Cause } from '../workqueue/index.ts';
import { chainReaches, chainWriterOf, followedEcho } from '../workqueue/index.ts';
import { streakStartOf } from './reconcile-writer.ts';

/**
 * Options of hot-loop detection (`ControllerOptions.hotLoop`). The rule: a run is **self-caused**
 * when it has causes and every one echoes a write of the key's own chain — a write by a reconcile
 * of this key of this controller, or by any reconcile that ran (up to three links up) because of
 * such a write (two controllers ping-ponging an object). A key is flagged when `threshold`
 * self-caused runs follow each other within `windowMs`, without a change of its primary object's
 * `metadata.generation` in between. Any other run (an event no reconcile of the chain wrote, a
 * retry, a requeue, a manual add) and a generation change start the count again. A flagged key
 * is cleared when no self-caused run came for `windowMs`.
 *
 * One corner: a key's first self-caused run is remembered in the writes it makes, not in a state
 * per key (most keys stop there: a reconcile that converges after its own echo). So its second
 * self-caused run counts as the second when the nearest write of its own in its causes' chains is
 * one the first made (within `windowMs`, same generation), whatever other runs came in between;
 * from the second on the count is kept per key, exactly as above.
 */
export interface HotLoopOptions {
  /** Self-caused runs in a row that flag a key. Default 10. */
  readonly threshold?: number;
  /**
   * The `threshold` runs must fall within this long; a flag clears after this long without a
   * self-caused run. Default 30 000.
   */
  readonly windowMs?: number;
  /**
   * The brake: self-caused runs of a flagged key wait, doubling from `brakeBaseMs` up to
   * `brakeMaxMs` after each one (other runs do not wait). Default false.
   */
  readonly brake?: boolean;
  /** First wait of the brake. Default 1 000. */
  readonly brakeBaseMs?: number;
  /** Longest wait of the brake. Default 300 000. */
  readonly brakeMaxMs?: number;
  /** Keys whose count is kept at most (the first counted go first when full). Default 10 000. */
  readonly maxKeys?: number;
}

/** A flagged key, as `inspect` shows it. */
export interface HotLoopInfo {
  /** When it was flagged (clock milliseconds). */
  readonly since: number;
  /** Self-caused runs counted: the `threshold` that flagged it and every one since. */
  readonly selfCausedRuns: number;
  /** The chain of its latest self-caused run (`causeChain`). */
  readonly chain: readonly string[];
}

/** What the detector makes of a run about to start. @internal */
export interface HotLoopVerdict {
  readonly selfCaused: boolean;
  /** The key was flagged by this run: log it once. */
  readonly flagged: boolean;
  /** The brake holds this run back this long (0: run now). */
  readonly deferMs: number;
  /**
   * The first self-caused run of a streak, for a key with no state kept: its writes carry the
   * streak (`ReconcileWriter`'s `streakStart`), so that the next one can count as the second.
   */
  readonly first: boolean;
}

interface KeyState {
  /**
   * Self-caused runs in a row. The time of the first is `first`; from the second on, the times of
   * the latest `threshold` are in the ring `times`, `count` of its slots used, the oldest at
   * `oldest` (a streak that breaks sets `count` to 0: the ring is kept for the next). Most keys
   * never have two in a row (a run that converges after its own echo): they get no ring, and a
   * run reads no more than this object.
   */
  count: number;
  first: number;
  times: number[] | undefined;
  oldest: number;
  generation: number | undefined;
  lastSelfCausedAt: number;
  flag: { since: number; runs: number; cause: Cause } | undefined;
  /** The brake: when the next self-caused run may start, and how many waited. */
  allowedAt: number;
  braked: number;
}

const NOT_SELF: HotLoopVerdict = Object.freeze({
  selfCaused: false,
  flagged: false,
  deferMs: 0,
  first: false,
});
const SELF: HotLoopVerdict = Object.freeze({ selfCaused: true, flagged: false, deferMs: 0, first: false });
const SELF_FIRST: HotLoopVerdict = Object.freeze({
  selfCaused: true,
  flagged: false,
  deferMs: 0,
  first: true,
});

/** Settings of a detector, checked. @internal */
export interface HotLoopSettings {
  readonly threshold: number;
  readonly windowMs: number;
  readonly brake: boolean;
  readonly brakeBaseMs: number;
  readonly brakeMaxMs: number;
  readonly maxKeys: number;
}

/** Checks `ControllerOptions.hotLoop`; undefined when detection is off. @internal */
export function hotLoopSettings(value: boolean | HotLoopOptions | undefined): HotLoopSettings | undefined {
  if (value === false) return undefined;
  if (value !== undefined && value !== true && (typeof value !== 'object' || value === null)) {
    throw new OptionsError('hotLoop', value, 'a boolean or HotLoopOptions');
  }
  const o: HotLoopOptions = typeof value === 'object' ? value : {};
  if (o.brake !== undefined && typeof o.brake !== 'boolean')
    throw new OptionsError('hotLoop.brake', o.brake, 'a boolean');
  return {
    threshold: integer('hotLoop.threshold', o.threshold, 10, 1),
    windowMs: durationMs('hotLoop.windowMs', o.windowMs, 30_000),
    brake: o.brake ?? false,
    brakeBaseMs: durationMs('hotLoop.brakeBaseMs', o.brakeBaseMs, 1_000),
    brakeMaxMs: durationMs('hotLoop.brakeMaxMs', o.brakeMaxMs, 300_000),
    maxKeys: integer('hotLoop.maxKeys', o.maxKeys, 10_000, 1),
  };
}

/**
 * Counts self-caused runs per key and flags hot loops (the rule is on {@link HotLoopOptions}).
 * Keeps a small state per key from its second self-caused run in a row, at most `maxKeys`; a run
 * of a controller with no such key costs no lookup, and a key's first self-caused run is carried
 * by its writes (a converging key never gets a state). @internal
 */
export class HotLoopDetector {
  readonly #controller: string;
  readonly #s: HotLoopSettings;
  readonly #keys = new Map<string, KeyState>();
  readonly #flagged = new Set<string>();

  constructor(controller: string, settings: HotLoopSettings) {
    this.#controller = controller;
    this.#s = settings;
  }

  /** Counts a run of `key` with `causes` starting at `now`. */
  observe(key: string, causes: readonly Cause[], now: number): HotLoopVerdict {
    const s = this.#s;
    // Most runs of most controllers: no key with a streak of two, nothing to look up (the map
    // lookup of a key's state was ~30 % of what the feature cost per run: memory latency).
    let state = this.#keys.size === 0 ? undefined : this.#keys.get(key);
    if (state !== undefined) this.#expire(key, state, now);
    const selfCaused = isSelfCaused(causes, this.#controller, key);
    const generation = primaryGeneration(causes);
    if (!selfCaused) {
      // The state stays (a key that loops now and then keeps one, reused): the map does not
      // churn, and `maxKeys` bounds it.
      if (state === undefined) return NOT_SELF;
      state.count = 0;
      if (generation !== undefined) state.generation = generation;
      return NOT_SELF;
    }
    if (state === undefined) {
      let first: number | undefined;
      if (s.threshold > 1) {
        const previous = streakBefore(causes, this.#controller, key, now, s.windowMs, generation);
        // No first run of a streak behind this one: it is the first, carried by its writes.
        if (previous === undefined) return SELF_FIRST;
        first = previous;
      }
      state = {
        count: first === undefined ? 0 : 1,
        first: first ?? 0,
        times: undefined,
        oldest: 0,
        generation,
        lastSelfCausedAt: now,
        flag: undefined,
        allowedAt: 0,
        braked: 0,
      };
      this.#keys.set(key, state);
      if (this.#keys.size > s.maxKeys) this.#evict();
    } else {
      if (generation !== undefined && state.generation !== undefined && generation !== state.generation)
        state.count = 0;
      if (generation !== undefined) state.generation = generation;
    }
    const flag = state.flag;
    if (flag !== undefined && s.brake && now < state.allowedAt) {
      return { selfCaused: true, flagged: false, deferMs: state.allowedAt - now, first: false };
    }
    state.lastSelfCausedAt = now;
    const cause = followedEcho(causes, this.#controller, key) ?? lastCause(causes);
    if (flag !== undefined) {
      flag.runs++;
      flag.cause = cause;
      this.#brake(state, now);
      return SELF;
    }
    const oldest = oldestOfStreak(state, now, s.threshold);
    if (state.count < s.threshold || now - oldest > s.windowMs) return SELF;
    state.flag = { since: now, runs: state.count, cause };
    this.#flagged.add(key);
    this.#brake(state, now);
    return { selfCaused: true, flagged: true, deferMs: 0, first: false };
  }

  /** Keys with a state kept (a streak of two or more, or a flag), expired ones included. */
  get trackedKeys(): number {
    return this.#keys.size;
  }

  /** The key's flag, if it is flagged at `now`; `chain` is left to the caller to format. */
  flagOf(key: string, now: number): { since: number; runs: number; cause: Cause } | undefined {
    const state = this.#keys.get(key);
    if (state === undefined) return undefined;
    this.#expire(key, state, now);
    return state.flag;
  }

  /** Keys flagged at `now`. */
  flaggedCount(now: number): number {
    for (const key of this.#flagged) {
      const state = this.#keys.get(key);
      if (state === undefined) this.#flagged.delete(key);
      else this.#expire(key, state, now);
    }
    return this.#flagged.size;
  }

  /** Flagged keys at `now`, with their flags. */
  *flagged(now: number): IterableIterator<[string, { since: number; runs: number; cause: Cause }]> {
    this.flaggedCount(now);
    for (const key of this.#flagged) {
      const flag = this.#keys.get(key)?.flag;
      if (flag !== undefined) yield [key, flag];
    }
  }

  /** Forgets everything (the controller stopped). */
  clear(): void {
    this.#keys.clear();
    this.#flagged.clear();
  }

  #brake(state: KeyState, now: number): void {
    if (!this.#s.brake) return;
    const wait = Math.min(this.#s.brakeBaseMs * 2 ** state.braked, this.#s.brakeMaxMs);
    state.braked++;
    state.allowedAt = now + wait;
  }

  /** No self-caused run for the window: the count starts again and a flag clears. */
  #expire(key: string, state: KeyState, now: number): void {
    if (now - state.lastSelfCausedAt < this.#s.windowMs) return;
    if (state.flag !== undefined && now < state.allowedAt) return;
    state.count = 0;
    state.flag = undefined;
    state.braked = 0;
    state.allowedAt = 0;
    this.#flagged.delete(key);
  }

  #evict(): void {
    const oldest = this.#keys.keys().next().value;
    if (oldest === undefined) return;
    this.#keys.delete(oldest);
    this.#flagged.delete(oldest);
  }
}

/**
 * Counts a self-caused run at `now` in the key's streak; the time of the oldest of its latest
 * `size` runs.
 */
function oldestOfStreak(state: KeyState, now: number, size: number): number {
  const count = state.count;
  if (count === 0 || size === 1) {
    state.first = now;
    state.count = 1;
    return now;
  }
  let times = state.times;
  if (times === undefined) {
    times = new Array<number>(size).fill(0);
    state.times = times;
  }
  if (count === 1) {
    times[0] = state.first;
    times[1] = now;
    state.oldest = 0;
    state.count = 2;
  } else if (count < size) {
    times[(state.oldest + count) % size] = now;
    state.count = count + 1;
  } else {
    // Full: the newest takes the oldest's slot.
    times[state.oldest] = now;
    state.oldest = (state.oldest + 1) % size;
  }
  return times[state.oldest] as number;
}

/**
 * Every cause echoes a write of the chain of `key` of `controller` (and there is one). Here and in
 * the chain walks below, indexed loops: `for…of` over a run's frozen causes array made an iterator
 * and a result object per step (~300 B a run in `npm run bench:cause-chains`, found with a sampling
 * heap profile).
 */
function isSelfCaused(causes: readonly Cause[], controller: string, key: string): boolean {
  if (causes.length === 0) return false;
  for (let i = 0; i < causes.length; i++)
    if (!chainReaches(causes[i] as Cause, controller, key)) return false;
  return true;
}

/**
 * For a self-caused run of `key` with no state kept: when the first run of its streak started, if
 * the write of the key's own in each cause's chain (`chainWriterOf`) includes one made by such a
 * first run less than `windowMs` before `now`, at the same
 * `generation` (either unknown counts as the same); the latest of those. Undefined otherwise.
 */
function streakBefore(
  causes: readonly Cause[],
  controller: string,
  key: string,
  now: number,
  windowMs: number,
  generation: number | undefined,
): number | undefined {
  let latest: number | undefined;
  for (let i = 0; i < causes.length; i++) {
    const own = chainWriterOf(causes[i] as Cause, controller, key);
    if (own === undefined) continue;
    const start = streakStartOf(own);
    if (start === undefined || now - start >= windowMs) continue;
    const before = primaryGeneration(own.causes);
    if (generation !== undefined && before !== undefined && generation !== before) continue;
    if (latest === undefined || start > latest) latest = start;
  }
  return latest;
}

/** The generation of the run's primary object, from its own (not secondary) object causes. */
function primaryGeneration(causes: readonly Cause[]): number | undefined {
  let generation: number | undefined;
  for (let i = 0; i < causes.length; i++) {
    const c = causes[i] as Cause;
    if (c.secondary !== true && c.object?.generation !== undefined) generation = c.object.generation;
  }
  return generation;
}

function lastCause(causes: readonly Cause[]): Cause {
  return causes[causes.length - 1] as Cause;
}
