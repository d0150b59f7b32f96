/**
 * Validation helpers for options objects. Every constructor validates its options once and throws
 * an {@link OptionsError} naming the field, so bad configuration fails at construction time.
 *
 * @module
 */
import type { Clock } from './clock/index.ts';
import { OptionsError } from './errors.ts';

/** A finite duration in milliseconds, >= 0. */
export function durationMs(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new OptionsError(field, value, 'a finite number of milliseconds >= 0');
  }
  return value;
}

/** While caches or sources have not synced, a warning every this long says which, and why. */
export const SYNC_PROGRESS_MS = 30_000;

/**
 * Calls `report(waitedMs)` every {@link SYNC_PROGRESS_MS} on `clock` while a sync is awaited, when
 * `timeoutMs` leaves room for one; `cancel()` once the wait is over.
 */
export function syncProgress(
  clock: Pick<Clock, 'now' | 'setTimer'>,
  timeoutMs: number,
  report: (waitedMs: number) => void,
): { cancel(): void } {
  const started = clock.now();
  let timer: { cancel(): void } | undefined;
  const tick = (): void => {
    report(clock.now() - started);
    timer = clock.setTimer(tick, SYNC_PROGRESS_MS);
  };
  if (SYNC_PROGRESS_MS < timeoutMs) timer = clock.setTimer(tick, SYNC_PROGRESS_MS);
  return { cancel: () => timer?.cancel() };
}

/**
 * How long to wait for something to sync: a finite number of milliseconds >= 0 (0 gives up at once
 * when it is not synced already), or `Infinity` to wait for as long as it takes (the seeds' way:
 * log and keep trying).
 */
export function syncTimeoutMs(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new OptionsError(field, value, 'a number of milliseconds >= 0, or Infinity to wait for ever');
  }
  return value;
}

/** A finite positive duration in milliseconds, > 0. */
export function positiveDurationMs(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a finite number of milliseconds > 0');
  }
  return value;
}

/** An integer >= min. */
export function integer(field: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new OptionsError(field, value, `an integer >= ${min}`);
  }
  return value;
}

/** A finite number > 0 (rates, factors). */
export function positiveNumber(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a finite number > 0');
  }
  return value;
}

/** A number in [0, 1]. */
export function fraction(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new OptionsError(field, value, 'a number between 0 and 1');
  }
  return value;
}

/** A function. */
export function func<F>(field: string, value: F | undefined, fallback: F): F {
  if (value === undefined) return fallback;
  if (typeof value !== 'function') throw new OptionsError(field, value, 'a function');
  return value;
}

/** A non-empty string. */
export function nonEmptyString(field: string, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.length === 0) {
    throw new OptionsError(field, value, 'a non-empty string');
  }
  return value;
}
