import { setImmediate } from 'node:timers/promises';

/** How long decoding may run before it lets the event loop turn. */
export const SLICE_MS = 8;

/**
 * Lets decoding share the event loop: {@link Cooperator.maybeYield} yields with `setImmediate`
 * (timers and I/O run) once `sliceMs` of synchronous work went by since the last yield. Microtask
 * hops are not enough: a stream whose data is buffered resolves `for await` in microtasks only.
 *
 * @example
 * const cooperator = new Cooperator();
 * for (const chunk of chunks) {
 *   decode(chunk);
 *   const pause = cooperator.maybeYield();
 *   if (pause !== undefined) await pause;
 * }
 */
export class Cooperator {
  readonly #sliceMs: number;
  #since = performance.now();

  constructor(sliceMs = SLICE_MS) {
    this.#sliceMs = sliceMs;
  }

  /**
   * A macrotask boundary to await when the current slice is used up; undefined otherwise (no
   * promise per chunk of a stream that keeps within its slice).
   */
  maybeYield(): Promise<void> | undefined {
    if (performance.now() - this.#since < this.#sliceMs) return undefined;
    return setImmediate().then(() => {
      this.#since = performance.now();
    });
  }

  /** Starts a new slice (after the caller waited on I/O anyway). */
  reset(): void {
    this.#since = performance.now();
  }
}
