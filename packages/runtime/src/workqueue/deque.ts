/**
 * A growable FIFO of values with O(1) amortised push and shift. The backing array is compacted
 * when more than half of it is consumed.
 *
 * @internal
 */
export class Deque<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(value: T): void {
    this.#items.push(value);
  }

  peek(): T | undefined {
    return this.#head < this.#items.length ? this.#items[this.#head] : undefined;
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const value = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head++;
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    } else if (this.#head === this.#items.length) {
      this.#items.length = 0;
      this.#head = 0;
    }
    return value;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.#head; i < this.#items.length; i++) yield this.#items[i] as T;
  }
}
