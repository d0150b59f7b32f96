import type { ServerResponse } from 'node:http';
import { drained } from './list-stream.ts';

/** Characters of event lines gathered before one write (one HTTP chunk). */
export const WATCH_BATCH_CHARS = 64 * 1024;

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * The body writer of one watch response: it gathers event lines and writes them as one HTTP chunk
 * when about {@link WATCH_BATCH_CHARS} are pending, or at the end of the event-loop turn in which
 * the first pending line arrived — whichever comes first. A burst (the initial events of a large
 * watch, a backlog after a stall) goes out in large chunks instead of one small chunk and one small
 * socket write per event, while a lone live event still leaves within the turn it was produced in.
 *
 * `push` returns a promise only when the caller must wait before producing more: after a full batch
 * (until the socket drains, then one event-loop turn, so a long burst never blocks the loop) or while
 * the socket is still over its high-water mark. `flush` writes what is pending now; `end` writes it
 * and ends the response. Nothing is written once the response is ended or destroyed.
 */
export class WatchWriter {
  readonly #res: ServerResponse;
  readonly #batchChars: number;
  #pending = '';
  #scheduled = false;
  readonly #flushLater = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  constructor(res: ServerResponse, batchChars: number = WATCH_BATCH_CHARS) {
    this.#res = res;
    this.#batchChars = batchChars;
  }

  /** Queues one newline-terminated line; a promise means "wait for it before the next push". */
  push(line: string): Promise<void> | undefined {
    if (this.#closed()) return undefined;
    this.#pending += line;
    if (this.#pending.length >= this.#batchChars) {
      this.flush();
      return this.#afterBatch();
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushLater);
    }
    // A flush at the end of an earlier turn may have filled the socket: wait as a full batch would.
    return this.#res.writableNeedDrain ? drained(this.#res) : undefined;
  }

  /** Writes the pending lines now, as one chunk. */
  flush(): void {
    if (this.#pending === '') return;
    const text = this.#pending;
    this.#pending = '';
    if (!this.#closed()) this.#res.write(text);
  }

  /** Writes the pending lines and ends the response (a clean chunked EOF). */
  end(): void {
    const text = this.#pending;
    this.#pending = '';
    if (!this.#closed()) this.#res.end(text);
  }

  async #afterBatch(): Promise<void> {
    await drained(this.#res);
    // On loopback 'drain' can fire from process.nextTick, so waiting for it alone may never return
    // to the event loop during a long burst.
    await nextTurn();
  }

  #closed(): boolean {
    return this.#res.destroyed || this.#res.writableEnded;
  }
}
