/**
 * The timed loop of the metrics section of `queue.bench.ts`: add with an object-event cause (as an
 * informer's handler does), await get, done, key by key. Imported once per queue under a different
 * URL, like `loops.ts`, so every queue gets its own monomorphic copy.
 */
import type { Cause, WorkQueue } from '../packages/runtime/src/workqueue/index.ts';

const MODIFIED: Cause = Object.freeze({ type: 'modified', source: 'bench' });

/** add(key, { cause }) + await get + done, key by key; returns the keys handed out. */
export async function oneByOneWithCause(queue: WorkQueue<string>, keys: readonly string[]): Promise<number> {
  let out = 0;
  for (let i = 0; i < keys.length; i++) out += await step(queue, keys[i] as string);
  return out;
}

async function step(queue: WorkQueue<string>, key: string): Promise<number> {
  queue.add(key, { cause: MODIFIED });
  const got = await queue.get();
  if (got !== key) throw new Error(`queue bench: got ${got} after adding ${key}`);
  queue.done(got);
  return 1;
}

/** Batches of 1 000: add each with a cause, then 1 000 × (await get + done). */
export async function batchedWithCause(queue: WorkQueue<string>, keys: readonly string[]): Promise<number> {
  let out = 0;
  for (let start = 0; start < keys.length; start += 1000) {
    const end = Math.min(keys.length, start + 1000);
    addRange(queue, keys, start, end);
    out += await drain(queue, end - start);
  }
  return out;
}

function addRange(queue: WorkQueue<string>, keys: readonly string[], start: number, end: number): void {
  for (let i = start; i < end; i++) queue.add(keys[i] as string, { cause: MODIFIED });
}

async function drain(queue: WorkQueue<string>, n: number): Promise<number> {
  let out = 0;
  for (let i = 0; i < n; i++) {
    const key = await queue.get();
    if (key === undefined) throw new Error('queue bench: get() resolved undefined on a non-empty queue');
    queue.done(key);
    out++;
  }
  return out;
}

/**
 * A controller's whole path per key: add with a cause, a worker takes it, a no-op reconcile runs
 * (a synchronous `done()`), the result is applied. Resolves once `keys.length` reconciles ran.
 */
export async function controllerRun(
  controller: { readonly queue: { add(key: string, options: { cause: Cause }): void } },
  keys: readonly string[],
  reconciled: () => Promise<void>,
): Promise<number> {
  for (let i = 0; i < keys.length; i++) controller.queue.add(keys[i] as string, { cause: MODIFIED });
  await reconciled();
  return keys.length;
}
