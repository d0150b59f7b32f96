import { AbortedError, BadRequestError, ExpiredError, TimeoutError } from '@converge/runtime';
import type { StoreCore } from './core.ts';

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Parses a resourceVersion (a decimal revision); anything else is a {@link BadRequestError}. */
export function parseResourceVersion(value: unknown): number {
  if (typeof value !== 'string' || !DECIMAL.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new BadRequestError(`invalid resource version: ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** `too old resource version: N (oldest)` (410), for watches starting before the history window. */
export function tooOld(requested: number, compacted: number): ExpiredError {
  return new ExpiredError(`too old resource version: ${requested} (${compacted})`);
}

/** `Timeout: Too large resource version: N, current: M` (504), after waiting for the store to catch up. */
export function tooLarge(requested: number, current: number): TimeoutError {
  return new TimeoutError(`Timeout: Too large resource version: ${requested}, current: ${current}`, {
    details: {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version', field: '' }],
      retryAfterSeconds: 1,
    },
  });
}

/**
 * Resolves once the store's revision reaches `revision`; rejects with {@link tooLarge} after
 * `tooLargeResourceVersionWaitMs` on the clock, or with an AbortedError when `signal` aborts.
 */
export function waitForRevision(core: StoreCore, revision: number, signal?: AbortSignal): Promise<void> {
  if (core.revision >= revision) return Promise.resolve();
  if (signal?.aborted === true)
    return Promise.reject(new AbortedError('wait aborted', { cause: signal.reason }));
  return new Promise<void>((resolve, reject) => {
    const cleanup = (): void => {
      core.revisionListeners.delete(onRevision);
      timer.cancel();
      signal?.removeEventListener('abort', onAbort);
    };
    const onRevision = (): void => {
      if (core.revision < revision) return;
      cleanup();
      resolve();
    };
    const onAbort = (): void => {
      cleanup();
      reject(new AbortedError('wait aborted', { cause: signal?.reason }));
    };
    const timer = core.options.clock.setTimer(() => {
      cleanup();
      reject(tooLarge(revision, core.revision));
    }, core.options.tooLargeResourceVersionWaitMs);
    core.revisionListeners.add(onRevision);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
