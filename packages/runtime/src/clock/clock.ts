import { AbortedError } from '../errors.ts';

/** A scheduled callback; `cancel()` is idempotent and safe after the timer fired. */
export interface Timer {
  cancel(): void;
}

/**
 * The source of time, timers and randomness for everything in Converge. Inject a
 * {@link VirtualClock} (from `@converge/runtime/testing`) to run queues, backoff, resync and
 * leases deterministically.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` once after `delayMs` (clamped to >= 0). */
  setTimer(callback: () => void, delayMs: number): Timer;
  /**
   * Resolves after `delayMs`; rejects with an {@link AbortedError} as soon as `signal` aborts
   * (at once if it already has).
   */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
  /** A uniformly distributed number in [0, 1). */
  random(): number;
}

/** The largest delay `setTimeout` accepts; longer delays are chained. */
const MAX_TIMEOUT_MS = 2_147_483_647;

class RealTimer implements Timer {
  #handle: ReturnType<typeof setTimeout> | undefined;
  #cancelled = false;

  constructor(callback: () => void, delayMs: number, now: () => number) {
    if (delayMs <= MAX_TIMEOUT_MS) {
      // The common case, with no closure of its own: clearTimeout keeps a cancelled callback from running.
      this.#handle = setTimeout(callback, delayMs);
      return;
    }
    const deadline = now() + delayMs;
    const arm = (remaining: number): void => {
      this.#handle = setTimeout(
        () => {
          if (this.#cancelled) return;
          const left = deadline - now();
          if (left > 0 && remaining > MAX_TIMEOUT_MS) arm(left);
          else callback();
        },
        Math.min(Math.max(0, remaining), MAX_TIMEOUT_MS),
      );
    };
    arm(delayMs);
  }

  cancel(): void {
    this.#cancelled = true;
    if (this.#handle !== undefined) clearTimeout(this.#handle);
  }
}

/** Sleeps on any clock's timers, honouring an AbortSignal. */
export function sleepOn(
  clock: Pick<Clock, 'setTimer'>,
  delayMs: number,
  signal?: AbortSignal,
): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError('sleep aborted', { cause: signal.reason }));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(new AbortedError('sleep aborted', { cause: signal?.reason }));
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The wall clock: `Date.now`, `setTimeout` (chained past 2^31-1 ms) and `Math.random`. */
export const realClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimer: (callback: () => void, delayMs: number): Timer =>
    new RealTimer(callback, Number.isFinite(delayMs) ? Math.max(0, delayMs) : 0, Date.now),
  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(realClock, delayMs, signal);
  },
  random: () => Math.random(),
});

/**
 * Returns `durationMs` plus a random extra of up to `maxFactor × durationMs` (client-go's
 * `wait.Jitter`). A `maxFactor <= 0` defaults to 1.
 */
export function jitter(clock: Pick<Clock, 'random'>, durationMs: number, maxFactor: number): number {
  const factor = maxFactor > 0 ? maxFactor : 1;
  return durationMs + clock.random() * factor * durationMs;
}

/**
 * Resolves `true` once `work` settles (fulfilled or rejected), or `false` when `timeoutMs` passes
 * on `clock` first; the timer is cancelled either way. For bounded waits such as a graceful stop.
 *
 * @example
 * if (!(await settlesWithin(clock, Promise.all(running), 30_000))) logger.error({}, 'Shutdown timed out');
 */
export async function settlesWithin(
  clock: Clock,
  work: Promise<unknown>,
  timeoutMs: number,
): Promise<boolean> {
  let timer: Timer | undefined;
  const settled = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => {
      timer = clock.setTimer(() => resolve(false), timeoutMs);
    }),
  ]);
  timer?.cancel();
  return settled;
}
