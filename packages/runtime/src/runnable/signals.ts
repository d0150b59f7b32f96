import type { Clock } from '../clock/index.ts';
import { AbortedError } from '../errors.ts';

/** A signal that aborts when any of its sources does, or at a deadline; `dispose` unhooks it. */
export interface ScopedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Links `sources` into one signal that aborts, with the same reason, as soon as one of them does.
 * `dispose()` removes its listeners, so long-lived sources do not collect dead ones (unlike
 * `AbortSignal.any`, whose links live until every source is collected).
 *
 * @internal
 */
export function linkSignals(...sources: AbortSignal[]): ScopedSignal {
  const controller = new AbortController();
  const hooks: (() => void)[] = [];
  const dispose = (): void => {
    for (const unhook of hooks.splice(0)) unhook();
  };
  for (const source of sources) {
    if (source.aborted) {
      dispose();
      controller.abort(source.reason);
      return { signal: controller.signal, dispose };
    }
    const onAbort = (): void => {
      dispose();
      controller.abort(source.reason);
    };
    source.addEventListener('abort', onAbort, { once: true });
    hooks.push(() => source.removeEventListener('abort', onAbort));
  }
  return { signal: controller.signal, dispose };
}

/**
 * Links `sources` into one signal that also aborts `timeoutMs` from now on `clock` (with
 * `onTimeout()` as its reason). Listeners and the timer go on `dispose()`.
 *
 * @internal
 */
export function scopedSignal(
  clock: Clock,
  sources: readonly AbortSignal[],
  timeoutMs: number,
  onTimeout: () => unknown,
): ScopedSignal {
  const timeout = new AbortController();
  const linked = linkSignals(...sources, timeout.signal);
  // No timer for an infinite timeout (a real clock would fire a non-finite delay at once).
  if (linked.signal.aborted || timeoutMs === Number.POSITIVE_INFINITY) return linked;
  const timer = clock.setTimer(() => timeout.abort(onTimeout()), timeoutMs);
  return {
    signal: linked.signal,
    dispose: () => {
      timer.cancel();
      linked.dispose();
    },
  };
}

/**
 * Settles like `promise`, or rejects with an {@link AbortedError} as soon as `signal` aborts, for
 * a callee that ignores its signal.
 *
 * @internal
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new AbortedError('aborted', { cause: signal.reason }));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  // race subscribes to both, so neither a late rejection nor a late abort goes unhandled.
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}
