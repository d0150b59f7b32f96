import { type Clock, sleepOn, type Timer } from './clock.ts';

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

export interface VirtualClockOptions {
  /** Start time in ms since the epoch. Default 0. */
  readonly startMs?: number;
  /** Seed of the deterministic random generator. Default 1. */
  readonly seed?: number;
}

/** Lets every pending promise continuation run (macrotask boundary). */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock whose time moves only when a test says so. Timers run in deadline order (ties in the
 * order they were set); between two timers every pending promise continuation runs, so async code
 * awaiting a sleep reacts before the next timer fires. `random()` is a seeded generator.
 *
 * @example
 * const clock = new VirtualClock();
 * const slept = clock.sleep(1000);
 * await clock.advance(1000); // `slept` is now resolved
 */
export class VirtualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Scheduled[] = [];
  #rng: number;

  constructor(options: VirtualClockOptions = {}) {
    this.#now = options.startMs ?? 0;
    this.#rng = (options.seed ?? 1) >>> 0 || 1;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    const delay = Number.isFinite(delayMs) ? Math.max(0, delayMs) : 0;
    const entry: Scheduled = { at: this.#now + delay, seq: this.#seq++, callback, cancelled: false };
    this.#insert(entry);
    return {
      cancel: () => {
        if (entry.cancelled) return;
        entry.cancelled = true;
        const i = this.#timers.indexOf(entry);
        if (i >= 0) this.#timers.splice(i, 1);
      },
    };
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }

  /** mulberry32: small, fast and good enough for jitter. */
  random(): number {
    this.#rng = (this.#rng + 0x6d2b79f5) >>> 0;
    let t = this.#rng;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Number of timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Deadline of the next timer, or undefined. */
  nextTimerAt(): number | undefined {
    return this.#timers[0]?.at;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way (including timers those
   * timers set), each at its own deadline, flushing promise continuations after each one.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance: invalid duration ${ms}`);
    await this.advanceTo(this.#now + ms);
  }

  /** Like {@link advance}, to an absolute time. */
  async advanceTo(targetMs: number): Promise<void> {
    await flushMicrotasks();
    for (;;) {
      const next = this.#timers[0];
      if (next === undefined || next.at > targetMs) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.at);
      next.cancelled = true;
      next.callback();
      await flushMicrotasks();
    }
    this.#now = Math.max(this.#now, targetMs);
    await flushMicrotasks();
  }

  /** Fires timers until none is left or `maxTimers` have run; returns how many ran. */
  async runAll(maxTimers = 100_000): Promise<number> {
    let ran = 0;
    await flushMicrotasks();
    while (this.#timers.length > 0 && ran < maxTimers) {
      const next = this.#timers[0] as Scheduled;
      await this.advanceTo(next.at);
      ran++;
    }
    return ran;
  }

  #insert(entry: Scheduled): void {
    // Binary search for the first timer strictly later than (at, seq).
    let lo = 0;
    let hi = this.#timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.#timers[mid] as Scheduled;
      if (t.at < entry.at || (t.at === entry.at && t.seq < entry.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.#timers.splice(lo, 0, entry);
  }
}
