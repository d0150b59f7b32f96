/** One scheduled wake-up; stale nodes (whose ticket no longer matches) are skipped. */
export interface HeapNode<T> {
  readonly at: number;
  readonly seq: number;
  readonly value: T;
  readonly ticket: number;
}

/**
 * A binary min-heap ordered by (at, seq). Used by the queue for delayed adds with one clock timer
 * for the earliest deadline.
 *
 * @internal
 */
export class DelayHeap<T> {
  #nodes: HeapNode<T>[] = [];

  get size(): number {
    return this.#nodes.length;
  }

  peek(): HeapNode<T> | undefined {
    return this.#nodes[0];
  }

  push(node: HeapNode<T>): void {
    const nodes = this.#nodes;
    nodes.push(node);
    let i = nodes.length - 1;
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      const p = nodes[parent] as HeapNode<T>;
      if (!less(node, p)) break;
      nodes[i] = p;
      i = parent;
    }
    nodes[i] = node;
  }

  pop(): HeapNode<T> | undefined {
    const nodes = this.#nodes;
    const top = nodes[0];
    const last = nodes.pop();
    if (top === undefined || last === undefined || nodes.length === 0) return top;
    let i = 0;
    const n = nodes.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && less(nodes[r] as HeapNode<T>, nodes[l] as HeapNode<T>) ? r : l;
      const child = nodes[c] as HeapNode<T>;
      if (!less(child, last)) break;
      nodes[i] = child;
      i = c;
    }
    nodes[i] = last;
    return top;
  }

  clear(): void {
    this.#nodes = [];
  }
}

function less<T>(a: HeapNode<T>, b: HeapNode<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
