/**
 * A deliberately broken queue for the storm checker's self-test in `queue.bench.ts`: it dedupes
 * queued keys but does not track processing ones, so a key added while it is processing is
 * queued again at once and can be handed to a second worker concurrently. The checker must
 * report it; if it does not, the bench's correctness verdicts mean nothing.
 */
export class NoExclusivityQueue<K> {
  #items: K[] = [];
  #head = 0;
  readonly #queued = new Set<K>();
  #processing = 0;
  #waiters: ((key: K | undefined) => void)[] = [];

  get length(): number {
    return this.#items.length - this.#head;
  }

  get processingCount(): number {
    return this.#processing;
  }

  add(key: K): void {
    if (this.#queued.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      this.#processing++;
      waiter(key);
      return;
    }
    this.#queued.add(key);
    this.#items.push(key);
  }

  get(signal?: AbortSignal): Promise<K | undefined> {
    const key = this.tryGet();
    if (key !== undefined || signal?.aborted) return Promise.resolve(key);
    return new Promise<K | undefined>((resolve) => {
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((w) => w !== settle);
        resolve(undefined);
      };
      const settle = (value: K | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(settle);
    });
  }

  tryGet(): K | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const key = this.#items[this.#head] as K;
    this.#head++;
    this.#queued.delete(key);
    this.#processing++;
    return key;
  }

  done(_key: K): void {
    this.#processing--;
  }
}
