/**
 * The open watches of a server, so they can all be ended cleanly at once (server close, or the
 * fault-injection "drop all watches").
 */
export class WatchTracker {
  readonly #open = new Set<AbortController>();

  /** Registers a watch; returns its controller (abort it to end the watch cleanly). */
  open(): AbortController {
    const controller = new AbortController();
    this.#open.add(controller);
    return controller;
  }

  /** Forgets a finished watch. */
  closed(controller: AbortController): void {
    this.#open.delete(controller);
  }

  /** How many watches are open. */
  get size(): number {
    return this.#open.size;
  }

  /** Ends every open watch with a clean chunked EOF; returns how many were open. */
  dropAll(): number {
    const count = this.#open.size;
    for (const controller of [...this.#open]) controller.abort();
    this.#open.clear();
    return count;
  }
}
