import { isAlreadyExists, isConflict, isNotFound } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import { isConvergeError } from '../errors.ts';
import type { SeriesEntry } from './series-cache.ts';
import type { EventSink } from './sink.ts';

/** How a write retries. */
export interface RetryPolicy {
  /** Attempts before a write is given up (>= 1). */
  readonly maxAttempts: number;
  /** Wait before the first retry; doubled after each one. */
  readonly retryDelayMs: number;
  /** Cap on the wait. */
  readonly maxRetryDelayMs: number;
}

/** How a write ended: `attempts` counts the tries that reached the backend and failed or succeeded. */
export type WriteOutcome =
  | { readonly ok: true; readonly attempts: number }
  | { readonly ok: false; readonly attempts: number; readonly error: unknown };

/**
 * Whether retrying may help: backend errors say so themselves (Conflict, Unavailable, Timeout,
 * TooManyRequests, InternalError do); other Converge errors (aborted, …) do not; anything else is
 * a transport failure of a custom backend and is retried, as client-go retries them.
 */
function retryable(error: unknown): boolean {
  if (isConvergeError(error)) return (error as { retryable?: unknown }).retryable === true;
  return true;
}

function retryAfterMs(error: unknown): number {
  const seconds = (error as { details?: { retryAfterSeconds?: unknown } } | null)?.details?.retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

/**
 * Writes `entry`'s Event: a create when it is not stored yet, else a patch of its series. Each
 * try reads the entry's count afresh, so repeats recorded meanwhile ride along.
 *
 * - NotFound on a patch: the Event is gone (expired, deleted); create it again, at once.
 * - NotFound on a create: if `events.k8s.io/v1` is not served, the sink falls back to core/v1
 *   and the create is repeated at once; otherwise the write fails.
 * - AlreadyExists on a create: another writer took the name; pick a new one (or, when the
 *   create was re-creating a vanished series, patch again), at once.
 * - Conflict: the patch is re-applied at once to the object as it is now.
 * - Other retryable errors: wait `retryDelayMs`, doubling up to `maxRetryDelayMs` (at least a
 *   TooManyRequests' Retry-After, within that cap), on the clock.
 * - Anything else, or `maxAttempts` tries used: the write fails.
 */
export async function writeEntry(
  sink: EventSink,
  entry: SeriesEntry,
  policy: RetryPolicy,
  clock: Clock,
  rename: () => string,
  signal: AbortSignal,
): Promise<WriteOutcome> {
  let attempts = 0;
  let delay = policy.retryDelayMs;
  let recreating = false;
  let lastError: unknown;
  // Free repeats (fallback, re-create) are bounded too, so a confused backend cannot spin.
  for (let tries = 0; tries < policy.maxAttempts * 4; tries++) {
    if (signal.aborted) return { ok: false, attempts, error: lastError ?? signal.reason };
    const series = { count: entry.count, lastObservedAt: entry.lastObservedAt };
    const patching = entry.stored;
    attempts++;
    try {
      if (patching) await sink.patch(entry, series, signal);
      else await sink.create(entry, series, signal);
      entry.stored = true;
      entry.writtenCount = series.count;
      return { ok: true, attempts };
    } catch (error) {
      lastError = error;
      if (signal.aborted) return { ok: false, attempts, error };
      if (isNotFound(error) && patching) {
        entry.stored = false;
        recreating = true;
        continue;
      }
      if (isNotFound(error)) {
        let switched: boolean;
        try {
          switched = await sink.fallBack(entry.data.namespace, signal);
        } catch (probeError) {
          if (!retryable(probeError) || attempts >= policy.maxAttempts) {
            return { ok: false, attempts, error: probeError };
          }
          await sleep(clock, delay, signal);
          delay = Math.min(delay * 2, policy.maxRetryDelayMs);
          continue;
        }
        if (switched) {
          attempts--;
          continue;
        }
        return { ok: false, attempts, error };
      }
      if (isAlreadyExists(error)) {
        if (recreating) entry.stored = true;
        else entry.name = rename();
        recreating = false;
        if (attempts >= policy.maxAttempts) return { ok: false, attempts, error };
        continue;
      }
      if (!retryable(error) || attempts >= policy.maxAttempts) return { ok: false, attempts, error };
      if (isConflict(error)) continue;
      await sleep(clock, Math.min(Math.max(delay, retryAfterMs(error)), policy.maxRetryDelayMs), signal);
      delay = Math.min(delay * 2, policy.maxRetryDelayMs);
    }
  }
  return { ok: false, attempts, error: lastError };
}

/** Sleeps on the clock; an abort ends the sleep early (the caller checks the signal). */
async function sleep(clock: Clock, delayMs: number, signal: AbortSignal): Promise<void> {
  try {
    await clock.sleep(delayMs, signal);
  } catch {
    // Aborted: the loop sees the signal and stops.
  }
}
