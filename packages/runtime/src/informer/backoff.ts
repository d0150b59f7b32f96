import type { Clock } from '../clock/index.ts';
import type { BackoffOptions } from './options.ts';

/**
 * client-go's exponential backoff manager: each call to {@link Backoff.next} is one more error in a
 * row and returns how long to wait. The base delay starts at `initialMs` and grows by `factor` per
 * error up to `maxMs`; the returned delay adds a random extra of up to `jitter × base`. An error
 * more than `resetAfterMs` after the previous one starts over from `initialMs` (the backend was
 * healthy in between).
 *
 * @example
 * const backoff = new Backoff(clock, { initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000, factor: 2, jitter: 1 });
 * await clock.sleep(backoff.next(), signal); // 800–1600 ms, then 1.6–3.2 s, …
 */
export class Backoff {
  readonly #clock: Clock;
  readonly #options: Required<BackoffOptions>;
  #baseMs: number;
  #lastErrorAt: number | undefined;

  constructor(clock: Clock, options: Required<BackoffOptions>) {
    this.#clock = clock;
    this.#options = options;
    this.#baseMs = options.initialMs;
  }

  /** The delay before the next attempt after one more error. */
  next(): number {
    const { initialMs, maxMs, resetAfterMs, factor, jitter } = this.#options;
    const now = this.#clock.now();
    if (this.#lastErrorAt !== undefined && now - this.#lastErrorAt > resetAfterMs) this.#baseMs = initialMs;
    this.#lastErrorAt = now;
    const base = this.#baseMs;
    this.#baseMs = Math.min(base * factor, maxMs);
    return jitter > 0 ? base + this.#clock.random() * jitter * base : base;
  }
}
