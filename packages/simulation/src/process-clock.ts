import { type Clock, sleepOn, type Timer } from '@converge/runtime';
import type { VirtualClock } from '@converge/runtime/testing';
import type { Random } from './random.ts';

/**
 * One simulated process's view of the world's virtual clock. Time is shared; the process's timers
 * are not: while it is paused (a SIGSTOP) its timers that come due wait until it resumes, and once
 * it is dead they never fire.
 */
export class ProcessClock implements Clock {
  readonly #world: VirtualClock;
  readonly #random: Random;
  #paused = false;
  #dead = false;
  #deferred: (() => void)[] = [];

  constructor(world: VirtualClock, random: Random) {
    this.#world = world;
    this.#random = random;
  }

  now(): number {
    return this.#world.now();
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    let cancelled = false;
    const timer = this.#world.setTimer(() => {
      if (cancelled || this.#dead) return;
      if (this.#paused) this.#deferred.push(() => !cancelled && callback());
      else callback();
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

  random(): number {
    return this.#random.next();
  }

  get paused(): boolean {
    return this.#paused;
  }

  get dead(): boolean {
    return this.#dead;
  }

  pause(): void {
    this.#paused = true;
  }

  /** Runs the timers that came due while paused, in the order they came due. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    const due = this.#deferred;
    this.#deferred = [];
    for (const run of due) if (!this.#dead) run();
  }

  kill(): void {
    this.#dead = true;
    this.#deferred = [];
  }
}
