import type { Clock, Timer } from '@converge/runtime';

/** How a call with a deadline ended. */
export type Settled<T> =
  | { readonly kind: 'done'; readonly value: T }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'timeout' };

/**
 * Runs `work` with a signal that aborts after `timeoutMs` (on `clock`) or when `stop` aborts, and
 * reports how it ended without ever rejecting: a synchronous throw or a rejection is `threw`, the
 * deadline passing first is `timeout` (the work is abandoned: its signal is aborted with `reason`,
 * its late result ignored).
 */
export async function settle<T>(
  work: (signal: AbortSignal) => T | Promise<T>,
  options: {
    readonly timeoutMs: number;
    readonly clock: Clock;
    readonly stop: AbortSignal;
    /** The abort reason on timeout; made only then (an Error captures a stack: not per request). */
    readonly reason: () => Error;
  },
): Promise<Settled<T>> {
  const controller = new AbortController();
  const onStop = (): void => controller.abort(options.stop.reason);
  if (options.stop.aborted) onStop();
  else options.stop.addEventListener('abort', onStop, { once: true });
  let timer: Timer | undefined;
  const timedOut = new Promise<Settled<T>>((resolve) => {
    timer = options.clock.setTimer(() => {
      controller.abort(options.reason());
      resolve({ kind: 'timeout' });
    }, options.timeoutMs);
  });
  const ran = (async (): Promise<Settled<T>> => {
    try {
      return { kind: 'done', value: await work(controller.signal) };
    } catch (error) {
      return { kind: 'threw', error };
    }
  })();
  try {
    return await Promise.race([ran, timedOut]);
  } finally {
    timer?.cancel();
    options.stop.removeEventListener('abort', onStop);
  }
}

/** The message of anything thrown, without throwing itself. */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
    if (typeof error === 'string') return error;
    return JSON.stringify(error) ?? String(error);
  } catch {
    return 'a value that cannot be printed';
  }
}
