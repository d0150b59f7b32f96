import { type Clock, sleepOn, type Timer } from './clock.ts';
import { flushMicrotasks } from './virtual-clock.ts';

/**
 * A clock over another (a `VirtualClock` in tests) for one process that is paused or whose
 * clock is stepped, while the others go on: give each replica its own `PausableClock` over the
 * shared virtual clock.
 *
 * - `pause()` holds every timer that comes due, as a SIGSTOP, a long GC pause or a frozen VM does:
 *   time keeps passing (`now()` follows the base clock), nothing of the process runs on a timer.
 * - `resume()` runs the held timers in due order, letting promise continuations run after each,
 *   as Node runs overdue timers when a blocked loop unblocks: the process wakes up believing what
 *   it believed before the pause, with its lease long expired.
 * - `jump(ms)` steps `now()` by `ms` (backwards if negative), as NTP or a VM restore steps a
 *   wall clock; timers keep their delays.
 *
 * @example
 * const clock = new VirtualClock();
 * const paused = new PausableClock(clock);
 * // … a leader elector on `paused`, a standby on `clock` …
 * paused.pause();
 * await clock.advance(30_000); // the standby takes over; the paused one renews nothing
 * await paused.resume(); // the former leader finds its lease gone
 */
export class PausableClock implements Clock {
  readonly #base: Clock;
  #held: (() => void)[] | undefined;
  #offset = 0;

  constructor(base: Clock) {
    this.#base = base;
  }

  /** Whether timers are being held. */
  get paused(): boolean {
    return this.#held !== undefined;
  }

  now(): number {
    return this.#base.now() + this.#offset;
  }

  random(): number {
    return this.#base.random();
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    let cancelled = false;
    const run = (): void => {
      if (!cancelled) callback();
    };
    const timer = this.#base.setTimer(() => {
      if (this.#held === undefined) run();
      else this.#held.push(run);
    }, delayMs);
    return {
      cancel: () => {
        cancelled = true;
        timer.cancel();
      },
    };
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }

  /** From now on, timers that come due are held (a no-op while paused). */
  pause(): void {
    this.#held ??= [];
  }

  /**
   * Stops holding and runs the held timers in due order, letting promise continuations run after
   * each. Timers cancelled meanwhile do not run.
   */
  async resume(): Promise<void> {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const run of held) {
      run();
      await flushMicrotasks();
    }
  }

  /** Steps `now()` by `ms` (backwards if negative); timers keep their delays. */
  jump(ms: number): void {
    if (!Number.isFinite(ms))
      throw new RangeError(`PausableClock.jump: ms must be a finite number, got ${ms}`);
    this.#offset += ms;
  }
}
