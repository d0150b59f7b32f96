/**
 * The baseline for `queue.bench.ts`: the smallest queue with client-go's dedupe semantics.
 *
 * - an array FIFO with a head index (compacted when more than half is consumed);
 * - `dirty`: keys that need processing; `processing`: keys handed out and not yet done;
 * - `add` of a dirty key is a no-op; `add` of a processing key only marks it dirty, and `done`
 *   queues it again;
 * - `get(signal)` resolves at once when a key is ready, otherwise waits (FIFO of waiters).
 *
 * No rate limiting, delays, priorities, fairness, metrics or option checks: this is the floor a
 * JavaScript queue with these semantics can reach, not a production queue.
 */
export class NaiveQueue<K> {
  #items: (K | undefined)[] = [];
  #head = 0;
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  #waiters: (((key: K | undefined) => void) | undefined)[] = [];
  #waitHead = 0;

  /** Queued keys (dirty and not processing). */
  get length(): number {
    return this.#items.length - this.#head;
  }

  get processingCount(): number {
    return this.#processing.size;
  }

  add(key: K): void {
    if (this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  get(signal?: AbortSignal): Promise<K | undefined> {
    const key = this.tryGet();
    if (key !== undefined || signal?.aborted) return Promise.resolve(key);
    return new Promise<K | undefined>((resolve) => {
      let settled = false;
      const settle = (value: K | undefined): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(settle, this.#waitHead);
        if (i >= 0) this.#waiters[i] = undefined;
        settle(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(settle);
    });
  }

  tryGet(): K | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const key = this.#items[this.#head] as K;
    this.#items[this.#head] = undefined;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    this.#processing.add(key);
    this.#dirty.delete(key);
    return key;
  }

  done(key: K): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) this.#push(key);
  }

  #push(key: K): void {
    while (this.#waitHead < this.#waiters.length) {
      const waiter = this.#waiters[this.#waitHead];
      this.#waiters[this.#waitHead] = undefined;
      this.#waitHead++;
      if (this.#waitHead === this.#waiters.length) {
        this.#waiters.length = 0;
        this.#waitHead = 0;
      }
      if (waiter === undefined) continue;
      this.#processing.add(key);
      this.#dirty.delete(key);
      waiter(key);
      return;
    }
    this.#items.push(key);
  }
}
