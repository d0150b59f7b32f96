import { describe, expect, it, vi } from 'vitest';
import { flushMicrotasks, VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import { WorkQueue, type WorkQueueOptions } from './index.ts';

function queue(options: WorkQueueOptions<string> = {}): { q: WorkQueue<string>; clock: VirtualClock } {
  const clock = new VirtualClock();
  return { q: new WorkQueue<string>({ clock, ...options }), clock };
}

/** Takes every ready key (they stay processing). */
function takeAll<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) out.push(k);
  return out;
}

/** Takes and finishes keys until none is ready; returns the order they were handed out. */
function drain<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) {
    out.push(k);
    q.done(k);
  }
  return out;
}

function optionsErrorOf(fn: () => unknown): OptionsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError, nothing was thrown');
}

/** Tracks a promise's settlement without awaiting it. */
function track<T>(promise: Promise<T>): { settled: boolean; value: T | undefined } {
  const state: { settled: boolean; value: T | undefined } = { settled: false, value: undefined };
  void promise.then((value) => {
    state.settled = true;
    state.value = value;
  });
  return state;
}

describe('WorkQueue dedupe and order (A1, A4)', () => {
  it('a key added several times before it is handed out is handed out once, at the position of its first add', () => {
    const { q } = queue();
    q.add('foo');
    q.add('bar');
    q.add('foo');
    expect(q.length).toBe(2);
    expect(takeAll(q)).toEqual(['foo', 'bar']);
  });

  it('keys are handed out in the order of their first add', () => {
    const { q } = queue();
    for (const k of ['c', 'a', 'b', 'a', 'c', 'd', 'b']) q.add(k);
    expect(drain(q)).toEqual(['c', 'a', 'b', 'd']);
  });

  it('a key added again after done goes to the tail', () => {
    const { q } = queue();
    q.add('foo');
    q.add('bar');
    expect(q.tryGet()).toBe('foo');
    q.done('foo');
    q.add('foo');
    expect(drain(q)).toEqual(['bar', 'foo']);
  });

  it('object keys are the same key when keyOf says so, whatever their property order', () => {
    const q = new WorkQueue<{ ns: string; name: string }>({
      clock: new VirtualClock(),
      keyOf: (k) => `${k.ns}/${k.name}`,
    });
    q.add({ ns: 'a', name: 'x' });
    q.add({ name: 'x', ns: 'a' });
    q.add({ ns: 'a', name: 'y' });
    expect(drain(q)).toEqual([
      { ns: 'a', name: 'x' },
      { ns: 'a', name: 'y' },
    ]);
  });

  it('object keys without keyOf are the same key when their JSON is equal', () => {
    const q = new WorkQueue<{ gvr: string; key: string }>({ clock: new VirtualClock() });
    q.add({ gvr: 'v1/pods', key: 'ns/a' });
    q.add({ gvr: 'v1/pods', key: 'ns/a' });
    q.add({ gvr: 'apps/v1/deployments', key: 'ns/a' });
    expect(q.length).toBe(2);
  });
});

describe('WorkQueue exclusivity while processing (A2, A3)', () => {
  it('a key that is processing is never handed to a second worker', async () => {
    const { q } = queue();
    q.add('foo');
    const first = await q.get();
    q.add('foo');
    const second = track(q.get());
    await flushMicrotasks();
    expect(first).toBe('foo');
    expect(second.settled).toBe(false);
    expect(q.tryGet()).toBeUndefined();
    q.done('foo');
    await flushMicrotasks();
    expect(second.value).toBe('foo');
  });

  it('a key added while processing runs exactly once more after done (client-go)', () => {
    const { q } = queue();
    q.add('foo');
    expect(q.tryGet()).toBe('foo');
    q.add('foo');
    q.add('foo');
    q.add('foo');
    expect(q.length).toBe(0);
    q.done('foo');
    expect(q.length).toBe(1);
    expect(q.tryGet()).toBe('foo');
    q.done('foo');
    expect(q.tryGet()).toBeUndefined();
    expect(q.has('foo')).toBe(false);
  });

  it('a key added while processing is queued behind keys added before its done', () => {
    const { q } = queue();
    q.add('foo');
    expect(q.tryGet()).toBe('foo');
    q.add('foo');
    q.add('bar');
    q.done('foo');
    expect(drain(q)).toEqual(['bar', 'foo']);
  });

  it('with coalesceWhileProcessing false, an add of a processing key is dropped (openclarity)', () => {
    const { q } = queue({ coalesceWhileProcessing: false });
    q.add('foo');
    expect(q.tryGet()).toBe('foo');
    q.add('foo');
    q.done('foo');
    expect(q.length).toBe(0);
    expect(q.has('foo')).toBe(false);
    expect(q.tryGet()).toBeUndefined();
  });

  it('with coalesceWhileProcessing false, an add after done queues the key again', () => {
    const { q } = queue({ coalesceWhileProcessing: false });
    q.add('foo');
    q.tryGet();
    q.done('foo');
    q.add('foo');
    expect(q.tryGet()).toBe('foo');
  });

  it('done of a key that is not processing changes nothing', () => {
    const { q } = queue();
    q.add('foo');
    q.done('foo');
    q.done('unknown');
    expect(q.length).toBe(1);
    expect(q.processingCount).toBe(0);
    expect(q.tryGet()).toBe('foo');
  });
});

describe('WorkQueue length, processingCount and has (A5)', () => {
  it('length counts only queued keys, not processing or waiting ones', () => {
    const { q } = queue();
    q.add('queued');
    q.add('processing');
    q.addAfter('waiting', 1000);
    expect(q.length).toBe(2);
    q.tryGet();
    expect(q.length).toBe(1);
    expect(q.processingCount).toBe(1);
    expect(q.waitingCount).toBe(1);
  });

  it('has is true for queued, processing and waiting keys and false once a key is done', () => {
    const { q } = queue();
    q.add('processing');
    q.tryGet();
    q.add('queued');
    q.addAfter('waiting', 1000);
    expect(q.has('queued')).toBe(true);
    expect(q.has('processing')).toBe(true);
    expect(q.has('waiting')).toBe(true);
    expect(q.has('never')).toBe(false);
    q.done('processing');
    expect(q.has('processing')).toBe(false);
  });
});

describe('WorkQueue get (A6)', () => {
  it('a pending get resolves as soon as a key is added', async () => {
    const { q } = queue();
    const pending = track(q.get());
    await flushMicrotasks();
    expect(pending.settled).toBe(false);
    q.add('foo');
    expect(q.processingCount).toBe(1);
    await flushMicrotasks();
    expect(pending.value).toBe('foo');
  });

  it('several pending gets are served in the order they were made, one key each', async () => {
    const { q } = queue();
    const gets = [track(q.get()), track(q.get()), track(q.get())];
    q.add('a');
    q.add('b');
    await flushMicrotasks();
    expect(gets.map((g) => g.value)).toEqual(['a', 'b', undefined]);
    expect(gets[2]?.settled).toBe(false);
    q.add('c');
    await flushMicrotasks();
    expect(gets[2]?.value).toBe('c');
    expect(q.processingCount).toBe(3);
  });

  it('keys added in one burst while gets wait are all handed out, none lost', async () => {
    const { q } = queue();
    const gets = Array.from({ length: 5 }, () => q.get());
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) q.add(k);
    expect(await Promise.all(gets)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(q.length).toBe(2);
  });

  it('a get whose signal aborts resolves undefined and leaves the next key to another get', async () => {
    const { q } = queue();
    const abort = new AbortController();
    const aborted = track(q.get(abort.signal));
    const other = track(q.get());
    abort.abort();
    await flushMicrotasks();
    expect(aborted.settled).toBe(true);
    expect(aborted.value).toBeUndefined();
    q.add('foo');
    await flushMicrotasks();
    expect(other.value).toBe('foo');
  });

  it('a get whose signal aborts while no other get waits does not take the next key', async () => {
    const { q } = queue();
    const abort = new AbortController();
    const aborted = q.get(abort.signal);
    abort.abort();
    expect(await aborted).toBeUndefined();
    q.add('foo');
    expect(q.length).toBe(1);
    expect(q.processingCount).toBe(0);
    expect(await q.get()).toBe('foo');
  });

  it('a get with an already aborted signal resolves undefined and takes no key', async () => {
    const { q } = queue();
    q.add('foo');
    expect(await q.get(AbortSignal.abort())).toBeUndefined();
    expect(q.length).toBe(1);
    expect(q.processingCount).toBe(0);
  });

  it('gets that wait on one signal add one abort listener in all, and its abort ends every one of them', async () => {
    const { q } = queue();
    const abort = new AbortController();
    const listen = vi.spyOn(abort.signal, 'addEventListener');
    // A worker that keeps up waits for every key: 100 waits, one listener.
    for (let i = 0; i < 100; i++) {
      const got = q.get(abort.signal);
      q.add(`k${i}`);
      const key = await got;
      expect(key).toBe(`k${i}`);
      q.done(key as string);
    }
    expect(listen).toHaveBeenCalledTimes(1);
    const other = new AbortController();
    const waits = [q.get(abort.signal), q.get(other.signal), q.get(abort.signal)];
    abort.abort();
    await flushMicrotasks();
    q.add('next');
    expect(await waits[0]).toBeUndefined();
    expect(await waits[2]).toBeUndefined();
    // The wait on another signal is not ended by this one: it takes the next key.
    expect(await waits[1]).toBe('next');
  });

  it('a get that resolved with a key keeps it when its signal aborts afterwards', async () => {
    const { q } = queue();
    const abort = new AbortController();
    const got = q.get(abort.signal);
    q.add('foo');
    abort.abort();
    expect(await got).toBe('foo');
    expect(q.processingCount).toBe(1);
  });

  it('pending gets are woken by a key requeued at done and by a delayed key coming due', async () => {
    const { q, clock } = queue();
    q.add('foo');
    expect(q.tryGet()).toBe('foo');
    q.add('foo');
    const first = track(q.get());
    q.done('foo');
    await flushMicrotasks();
    expect(first.value).toBe('foo');
    q.done('foo');
    q.addAfter('bar', 100);
    const second = track(q.get());
    await clock.advance(99);
    expect(second.settled).toBe(false);
    await clock.advance(1);
    expect(second.value).toBe('bar');
  });

  it('tryGet returns undefined on an empty queue', () => {
    const { q } = queue();
    expect(q.tryGet()).toBeUndefined();
  });
});

describe('WorkQueue shutDown (K1, K2)', () => {
  it('queued keys are not handed out after shutDown', async () => {
    const { q } = queue();
    q.add('a');
    q.add('b');
    q.shutDown();
    expect(q.tryGet()).toBeUndefined();
    expect(await q.get()).toBeUndefined();
    expect(q.length).toBe(0);
    expect(q.has('a')).toBe(false);
    expect(q.isShuttingDown).toBe(true);
  });

  it('pending gets resolve undefined on shutDown', async () => {
    const { q } = queue();
    const gets = [q.get(), q.get()];
    q.shutDown();
    expect(await Promise.all(gets)).toEqual([undefined, undefined]);
  });

  it('done of an in-flight key after shutDown does not requeue it, even if it was added while processing', () => {
    const { q } = queue();
    q.add('foo');
    q.tryGet();
    q.add('foo');
    q.shutDown();
    expect(q.processingCount).toBe(1);
    expect(q.has('foo')).toBe(true);
    q.done('foo');
    expect(q.processingCount).toBe(0);
    expect(q.has('foo')).toBe(false);
    expect(q.length).toBe(0);
  });

  it('adds, delayed adds and rate-limited adds after shutDown are ignored and counted, never thrown', () => {
    const { q } = queue();
    q.shutDown();
    expect(() => {
      q.add('a');
      q.addAfter('b', 100);
      q.addAfter('c', 0);
      q.addRateLimited('d');
    }).not.toThrow();
    expect(q.has('a') || q.has('b') || q.has('c') || q.has('d')).toBe(false);
    expect(q.stats()).toMatchObject({ adds: 0, retries: 0, droppedAfterShutdown: 4, waiting: 0, depth: 0 });
  });

  it('shutDown cancels every timer and delayed keys never fire', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 100);
    q.addAfter('b', 200);
    expect(clock.pendingTimers).toBe(1);
    q.shutDown();
    expect(clock.pendingTimers).toBe(0);
    expect(q.waitingCount).toBe(0);
    await clock.advance(1000);
    expect(q.stats().adds).toBe(0);
    expect(q.tryGet()).toBeUndefined();
  });

  it('shutDown is idempotent', async () => {
    const { q } = queue();
    q.add('a');
    q.tryGet();
    q.shutDown();
    q.shutDown();
    expect(q.isShuttingDown).toBe(true);
    expect(q.processingCount).toBe(1);
    expect(await q.get()).toBeUndefined();
  });
});

describe('WorkQueue removeWhere (a kind stops being served)', () => {
  it('removes queued and waiting keys that match and returns how many it removed', async () => {
    const { q, clock } = queue();
    q.add('pods/a');
    q.add('jobs/a');
    q.add('pods/b');
    q.addAfter('pods/c', 100);
    q.addAfter('jobs/b', 100);
    expect(q.removeWhere((k) => k.startsWith('pods/'))).toBe(3);
    expect(q.has('pods/a') || q.has('pods/b') || q.has('pods/c')).toBe(false);
    expect(q.length).toBe(1);
    expect(q.waitingCount).toBe(1);
    await clock.advance(100);
    expect(drain(q)).toEqual(['jobs/a', 'jobs/b']);
  });

  it('a matching key that is processing is not run again after done, though it was added while processing', () => {
    const { q } = queue();
    q.add('pods/a');
    q.tryGet();
    q.add('pods/a');
    expect(q.removeWhere((k) => k.startsWith('pods/'))).toBe(0);
    expect(q.processingCount).toBe(1);
    q.done('pods/a');
    expect(q.length).toBe(0);
    expect(q.has('pods/a')).toBe(false);
  });

  it('a key removed while processing runs again when it is added after the removal', () => {
    const { q } = queue();
    q.add('pods/a');
    q.tryGet();
    q.removeWhere(() => true);
    q.add('pods/a');
    q.done('pods/a');
    expect(q.tryGet()).toBe('pods/a');
  });

  it('cancels the clock timer when no waiting key is left', () => {
    const { q, clock } = queue();
    q.addAfter('pods/a', 100);
    expect(clock.pendingTimers).toBe(1);
    q.removeWhere(() => true);
    expect(clock.pendingTimers).toBe(0);
    expect(q.waitingCount).toBe(0);
  });

  it('keys that do not match keep their order and their waits', async () => {
    const { q, clock } = queue();
    for (const k of ['a1', 'b1', 'a2', 'b2', 'a3']) q.add(k);
    q.addAfter('a4', 50);
    q.removeWhere((k) => k.startsWith('b'));
    await clock.advance(50);
    expect(drain(q)).toEqual(['a1', 'a2', 'a3', 'a4']);
  });
});

describe('WorkQueue bad input', () => {
  it('rejects invalid constructor options with an OptionsError naming the field', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['keyOf', { keyOf: 'id' }],
      ['partitionOf', { partitionOf: 42 }],
      ['hold', { hold: 'yes' }],
      ['coalesceWhileProcessing', { coalesceWhileProcessing: 0 }],
      ['name', { name: '' }],
    ];
    for (const [field, options] of cases) {
      const error = optionsErrorOf(() => new WorkQueue(options as WorkQueueOptions<string>));
      expect(error.field).toBe(field);
      expect(error.code).toBe('CONVERGE_ERR_OPTIONS_INVALID');
    }
  });

  it('addAfter and requeueAfter reject a NaN or infinite delay', () => {
    const { q } = queue();
    expect(optionsErrorOf(() => q.addAfter('a', Number.NaN)).field).toBe('delayMs');
    expect(optionsErrorOf(() => q.addAfter('a', Number.POSITIVE_INFINITY)).field).toBe('delayMs');
    expect(optionsErrorOf(() => q.requeueAfter('a', Number.NaN)).field).toBe('delayMs');
    expect(q.has('a')).toBe(false);
  });

  it('adds reject a non-finite priority', () => {
    const { q } = queue();
    expect(optionsErrorOf(() => q.add('a', { priority: Number.NaN })).field).toBe('priority');
    expect(optionsErrorOf(() => q.add('a', { priority: Number.POSITIVE_INFINITY })).field).toBe('priority');
    expect(optionsErrorOf(() => q.addAfter('a', 10, { priority: Number.NEGATIVE_INFINITY })).field).toBe(
      'priority',
    );
    expect(optionsErrorOf(() => q.addRateLimited('a', { priority: Number.NaN })).field).toBe('priority');
    expect(q.has('a')).toBe(false);
  });

  it('delayed adds reject a non-boolean hold', () => {
    const { q } = queue();
    const hold = 'yes' as unknown as boolean;
    expect(optionsErrorOf(() => q.addAfter('a', 10, { hold })).field).toBe('hold');
    expect(q.has('a')).toBe(false);
  });

  it('bad input is rejected after shutDown too, not counted as a dropped add', () => {
    const { q } = queue();
    q.shutDown();
    expect(optionsErrorOf(() => q.addAfter('a', Number.NaN)).field).toBe('delayMs');
    expect(optionsErrorOf(() => q.add('a', { priority: Number.NaN })).field).toBe('priority');
    expect(q.stats().droppedAfterShutdown).toBe(0);
  });

  it('a requeueAfter with an invalid option throws and leaves the key processing and dirty', () => {
    const { q } = queue();
    q.add('a');
    q.tryGet();
    q.add('a');
    expect(optionsErrorOf(() => q.requeueAfter('a', 100, { priority: Number.NaN })).field).toBe('priority');
    expect(optionsErrorOf(() => q.requeueAfter('a', 100, { hold: 1 as unknown as boolean })).field).toBe(
      'hold',
    );
    expect(q.processingCount).toBe(1);
    q.done('a');
    expect(q.tryGet()).toBe('a');
  });

  it('a rate-limited requeue with an invalid delay throws without counting a requeue', () => {
    const { q } = queue();
    q.add('a');
    q.tryGet();
    expect(optionsErrorOf(() => q.requeueRateLimited('a', { delayMs: Number.NaN })).field).toBe('delayMs');
    expect(optionsErrorOf(() => q.addRateLimited('b', { delayMs: Number.NaN })).field).toBe('delayMs');
    expect(q.numRequeues('a')).toBe(0);
    expect(q.numRequeues('b')).toBe(0);
    expect(q.stats().retries).toBe(0);
    expect(q.processingCount).toBe(1);
  });
});

describe('waiters', () => {
  it('does not keep aborted waiters around: polling an idle queue with fresh timeouts stays bounded', async () => {
    const queue = new WorkQueue<string>();
    for (let i = 0; i < 10_000; i++) {
      const abort = new AbortController();
      const pending = queue.get(abort.signal);
      abort.abort();
      expect(await pending).toBeUndefined();
    }
    expect(queue.stats().getters).toBeLessThan(200);
    queue.add('k');
    expect(await queue.get()).toBe('k');
    expect(queue.stats().getters).toBe(0);
  });
});
