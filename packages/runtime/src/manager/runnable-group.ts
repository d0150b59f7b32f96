import type { Logger } from '../log/index.ts';
import type { Runnable } from '../runnable/index.ts';

/** A runnable with a name for logs and error messages. */
export interface NamedRunnable {
  readonly name: string;
  readonly runnable: Runnable;
}

interface Running {
  readonly name: string;
  readonly stop: AbortController;
  readonly done: Promise<void>;
}

/**
 * Runs a set of runnables that start together and stop together. Each gets its own AbortSignal so
 * groups can be stopped in order. A runnable that rejects is reported to `onExit`; one that
 * resolves while the group still runs is logged and left alone (app-sdk's Operator ignores it too).
 *
 * @internal
 */
export class RunnableGroup {
  readonly name: string;
  readonly #logger: Logger;
  readonly #onExit: (name: string, error: unknown) => void;
  readonly #running: Running[] = [];
  #pending: NamedRunnable[] = [];
  #started = false;
  #stopped = false;

  constructor(name: string, logger: Logger, onExit: (name: string, error: unknown) => void) {
    this.name = name;
    this.#logger = logger;
    this.#onExit = onExit;
  }

  get size(): number {
    return this.#pending.length + this.#running.length;
  }

  /** Adds a runnable; if the group already started, it starts at once. Returns false once stopped. */
  add(entry: NamedRunnable): boolean {
    if (this.#stopped) return false;
    if (this.#started) this.#launch(entry);
    else this.#pending.push(entry);
    return true;
  }

  /** Starts every runnable added so far. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const pending = this.#pending;
    this.#pending = [];
    for (const entry of pending) this.#launch(entry);
  }

  /** Aborts every runnable's signal and resolves when all have returned. */
  async stop(reason?: unknown): Promise<void> {
    this.#stopped = true;
    this.#pending = [];
    for (const r of this.#running) r.stop.abort(reason);
    await Promise.all(this.#running.map((r) => r.done));
  }

  /** Names of runnables that have not returned yet. */
  runningNames(): string[] {
    return this.#running.map((r) => r.name);
  }

  #launch(entry: NamedRunnable): void {
    const stop = new AbortController();
    let running: Running | undefined;
    // Started in a microtask so the entry is registered before the runnable can settle.
    const done = Promise.resolve().then(async () => {
      try {
        await entry.runnable.start(stop.signal);
        if (!stop.signal.aborted) {
          this.#logger.info({ group: this.name, runnable: entry.name }, 'Runnable returned before stop');
        }
      } catch (error) {
        if (!stop.signal.aborted) this.#onExit(entry.name, error);
        else
          this.#logger.error(
            { group: this.name, runnable: entry.name, err: error },
            'Runnable failed while stopping',
          );
      } finally {
        const i = running === undefined ? -1 : this.#running.indexOf(running);
        if (i >= 0) this.#running.splice(i, 1);
      }
    });
    running = { name: entry.name, stop, done };
    this.#running.push(running);
  }
}
