import type { Logger } from '@converge/runtime';

/**
 * Runs garbage-collection passes on demand, coalesced: a request while a pass runs makes exactly
 * one more pass afterwards, however many requests came in. A pass starts after the current turn of
 * the event loop, so the write that asked for it has returned first (as with a controller). A
 * failed pass is logged; the next request runs a new one.
 */
export class CollectionScheduler {
  readonly #pass: (signal: AbortSignal) => Promise<unknown>;
  readonly #signal: AbortSignal;
  readonly #logger: Logger;
  #running: Promise<void> | undefined;
  #again = false;

  constructor(pass: (signal: AbortSignal) => Promise<unknown>, signal: AbortSignal, logger: Logger) {
    this.#pass = pass;
    this.#signal = signal;
    this.#logger = logger;
  }

  /** Asks for a pass. */
  request(): void {
    if (this.#signal.aborted) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = this.#loop().finally(() => {
      this.#running = undefined;
      if (this.#again) this.request();
    });
  }

  /** Resolves when no pass is running or asked for. */
  async settled(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#signal.aborted) return;
      try {
        await this.#pass(this.#signal);
      } catch (error) {
        if (!this.#signal.aborted) this.#logger.warn({ err: error }, 'Garbage collection pass failed');
      }
    } while (this.#again && !this.#signal.aborted);
  }
}
