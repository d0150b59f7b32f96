/**
 * The timed loops of `queue.bench.ts`. The bench imports this module once per queue under a
 * different URL (`loops.ts?workqueue`, `loops.ts?naive`), so each queue gets its own copy of these
 * functions and V8 sees one receiver class per call site: neither queue pays for the other's
 * presence in polymorphic inline caches.
 *
 * Every loop checks what it gets, so a queue that loses or invents keys fails loudly instead of
 * looking fast.
 */

/** What the throughput loops use of a queue; both WorkQueue and NaiveQueue have it. */
export interface BenchQueue<K = string> {
  add(key: K): void;
  get(signal?: AbortSignal): Promise<K | undefined>;
  tryGet(): K | undefined;
  done(key: K): void;
  readonly length: number;
  readonly processingCount: number;
}

function fail(what: string): never {
  throw new Error(`queue bench: ${what}`);
}

/*
 * Hot loops are never nested inside one long call: V8 would compile the inner loop on stack
 * replacement (OSR) and deoptimize each time it exits ("exit from OSR'd inner loop"), which
 * measured the bench instead of the queue. Inner loops live in their own functions, called many
 * times, so they are optimized the ordinary way.
 */

/** Adds `keys[start]` … `keys[end - 1]`. */
function addRange<K>(queue: BenchQueue<K>, keys: readonly K[], start: number, end: number): void {
  for (let i = start; i < end; i++) queue.add(keys[i] as K);
}

/** `n` × (`await get()` + `done`). */
async function drainAsync<K>(queue: BenchQueue<K>, n: number): Promise<number> {
  let out = 0;
  for (let i = 0; i < n; i++) {
    const key = await queue.get();
    if (key === undefined) fail('get() resolved undefined on a non-empty queue');
    queue.done(key);
    out++;
  }
  return out;
}

/** `n` × (`tryGet()` + `done`). */
function drainSync<K>(queue: BenchQueue<K>, n: number): number {
  let out = 0;
  for (let i = 0; i < n; i++) {
    const key = queue.tryGet();
    if (key === undefined) fail('tryGet() returned undefined on a non-empty queue');
    queue.done(key);
    out++;
  }
  return out;
}

/** Adds every key, then `await get()` + `done` until all are out. Returns the keys handed out. */
export async function fillThenDrain<K>(queue: BenchQueue<K>, keys: readonly K[]): Promise<number> {
  addRange(queue, keys, 0, keys.length);
  return drainAsync(queue, keys.length);
}

/** Adds `batch` keys, then `batch` × (`await get()` + `done`), over all keys (controller-runtime's shape). */
export async function batched<K>(queue: BenchQueue<K>, keys: readonly K[], batch: number): Promise<number> {
  const n = keys.length;
  let out = 0;
  for (let start = 0; start < n; start += batch) {
    const end = Math.min(n, start + batch);
    addRange(queue, keys, start, end);
    out += await drainAsync(queue, end - start);
  }
  return out;
}

/** `add`, `await get()`, `done` for each key in turn: the queue never holds more than one key. */
export async function oneByOne<K>(queue: BenchQueue<K>, keys: readonly K[]): Promise<number> {
  const n = keys.length;
  let out = 0;
  for (let i = 0; i < n; i++) {
    const key = keys[i] as K;
    queue.add(key);
    const got = await queue.get();
    if (got !== key) fail(`get() returned ${String(got)} instead of ${String(key)}`);
    queue.done(key);
    out++;
  }
  return out;
}

/** Like {@link fillThenDrain} with the synchronous `tryGet`: the queue's own cost, without promises. */
export function fillThenDrainSync<K>(queue: BenchQueue<K>, keys: readonly K[]): number {
  addRange(queue, keys, 0, keys.length);
  return drainSync(queue, keys.length);
}

/**
 * Adds of keys that are already queued (the dedupe path): `keys` are added once untimed by the
 * caller, then each is added `rounds` more times here. Returns the number of adds.
 */
export function dedupeAdds<K>(queue: BenchQueue<K>, keys: readonly K[], rounds: number): number {
  const n = keys.length;
  for (let r = 0; r < rounds; r++) addRange(queue, keys, 0, n);
  if (queue.length !== n) fail(`dedupe: ${queue.length} keys queued instead of ${n}`);
  return n * rounds;
}

/** Takes every queued key out with `tryGet` + `done` (untimed clean-up after {@link dedupeAdds}). */
export function drain<K>(queue: BenchQueue<K>): number {
  let out = 0;
  for (;;) {
    const key = queue.tryGet();
    if (key === undefined) return out;
    queue.done(key);
    out++;
  }
}
