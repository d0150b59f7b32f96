import {
  type Clock,
  OptionsError,
  type Runnable,
  realClock,
  type Timer,
  whenAborted,
} from '@converge/runtime';
import { EventLoopStalledError } from './errors.ts';

export interface EventLoopMonitorOptions {
  /** Where time and timers come from. Default the real clock. */
  readonly clock?: Clock;
  /** How often the heartbeat timer is due. Default 1 000. */
  readonly intervalMs?: number;
  /**
   * How late a heartbeat may be before the loop counts as stalled (the `event-loop` health check
   * fails). Default 10 000: above a GC pause or a big list's parse, below a lease's renew deadline.
   */
  readonly thresholdMs?: number;
}

/**
 * Tells whether the event loop is stalled, by a heartbeat on the clock's timers: each beat is
 * due `intervalMs` after the previous one, and a beat that comes later than `thresholdMs` past
 * due means the loop could not run timers for that long. `check()` (the `event-loop` health
 * check) fails while a beat is overdue past the threshold, and after a late beat until the next
 * beat comes on time: a liveness probe sees the stall once the loop answers again, and the
 * process recovers on its own when the stall ends. `lastDelayMs` is the lateness of the last beat.
 *
 * Nothing runs until `start(signal)`; the timer stops when `signal` aborts.
 *
 * @example
 * const loop = new EventLoopMonitor({ thresholdMs: 5_000 });
 * manager.add(loop, { group: 'servers' });
 * manager.addHealthCheck('event-loop', () => loop.check());
 */
export class EventLoopMonitor implements Runnable {
  readonly needLeaderElection = false;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #thresholdMs: number;
  #dueAt = Number.NaN;
  #lastDelayMs = 0;
  #timer: Timer | undefined;

  constructor(options: EventLoopMonitorOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    this.#clock = options.clock ?? realClock;
    this.#intervalMs = positive('intervalMs', options.intervalMs, 1_000);
    this.#thresholdMs = positive('thresholdMs', options.thresholdMs, 10_000);
  }

  get thresholdMs(): number {
    return this.#thresholdMs;
  }

  /** How late the last heartbeat came, in milliseconds (0 before the first). */
  get lastDelayMs(): number {
    return this.#lastDelayMs;
  }

  /** How late the pending heartbeat is now (0 when it is not due yet, or before `start`). */
  overdueMs(): number {
    if (Number.isNaN(this.#dueAt)) return 0;
    return Math.max(0, this.#clock.now() - this.#dueAt);
  }

  /** Throws an {@link EventLoopStalledError} while the loop is (or just was) stalled past the threshold. */
  check(): void {
    const overdue = this.overdueMs();
    if (overdue > this.#thresholdMs) throw new EventLoopStalledError(overdue, this.#thresholdMs, true);
    if (this.#lastDelayMs > this.#thresholdMs) {
      throw new EventLoopStalledError(this.#lastDelayMs, this.#thresholdMs, false);
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#arm();
    try {
      await whenAborted(signal);
    } finally {
      this.#timer?.cancel();
      this.#timer = undefined;
      this.#dueAt = Number.NaN;
    }
  }

  #arm(): void {
    this.#dueAt = this.#clock.now() + this.#intervalMs;
    this.#timer = this.#clock.setTimer(() => {
      this.#lastDelayMs = Math.max(0, this.#clock.now() - this.#dueAt);
      this.#arm();
    }, this.#intervalMs);
  }
}

function positive(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a positive number of milliseconds');
  }
  return value;
}
