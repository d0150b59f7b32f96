/**
 * A growable FIFO of values with O(1) amortised push and shift: a ring buffer whose capacity is
 * a power of two. It never shrinks or re-allocates while its length stays within capacity, so a
 * queue that fills and empties all the time (one key in, one key out) allocates nothing.
 *
 * @internal
 */
export class Deque<T> {
  #items: (T | undefined)[] = new Array<T | undefined>(16).fill(undefined);
  #mask = 15;
  #head = 0;
  #size = 0;

  get length(): number {
    return this.#size;
  }

  push(value: T): void {
    if (this.#size > this.#mask) this.#grow();
    this.#items[(this.#head + this.#size) & this.#mask] = value;
    this.#size++;
  }

  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[this.#head];
  }

  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const value = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    this.#size--;
    return value;
  }

  /** Empties the deque; a large backing array is released, a small one kept for reuse. */
  clear(): void {
    if (this.#mask > 1023) {
      this.#items = new Array<T | undefined>(16).fill(undefined);
      this.#mask = 15;
    } else {
      for (let i = 0; i < this.#size; i++) this.#items[(this.#head + i) & this.#mask] = undefined;
    }
    this.#head = 0;
    this.#size = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.#size; i++) yield this.#items[(this.#head + i) & this.#mask] as T;
  }

  #grow(): void {
    const old = this.#items;
    const capacity = old.length * 2;
    const items = new Array<T | undefined>(capacity).fill(undefined);
    for (let i = 0; i < this.#size; i++) items[i] = old[(this.#head + i) & this.#mask];
    this.#items = items;
    this.#mask = capacity - 1;
    this.#head = 0;
  }
}
