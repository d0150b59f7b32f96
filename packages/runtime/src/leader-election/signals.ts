import type { Clock } from '../clock/index.ts';
import { AbortedError } from '../errors.ts';

/** A signal that aborts when any of its sources does, or at a deadline; `dispose` unhooks it. */
export interface ScopedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Links `sources` into one signal that also aborts `timeoutMs` from now on `clock` (with
 * `onTimeout()` as its reason). Listeners are removed on `dispose()`, so long-lived sources do not
 * collect dead listeners.
 *
 * @internal
 */
export function scopedSignal(
  clock: Clock,
  sources: readonly AbortSignal[],
  timeoutMs: number,
  onTimeout: () => unknown,
): ScopedSignal {
  const controller = new AbortController();
  const hooks: (() => void)[] = [];
  const dispose = (): void => {
    for (const unhook of hooks.splice(0)) unhook();
  };
  for (const source of sources) {
    if (source.aborted) {
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
  const timer = clock.setTimer(() => {
    dispose();
    controller.abort(onTimeout());
  }, timeoutMs);
  hooks.push(() => timer.cancel());
  return { signal: controller.signal, dispose };
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
