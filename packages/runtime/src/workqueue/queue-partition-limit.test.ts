import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flushMicrotasks, VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import { Priority, WorkQueue, type WorkQueueOptions } from './index.ts';
import { type Lane, type ReadyEntry, ReadySet } from './ready-set.ts';

/** Partitions keys by the text before the first '/'. */
const byPrefix = (key: string): string => key.slice(0, key.indexOf('/'));

function queue(options: WorkQueueOptions<string> = {}): { q: WorkQueue<string>; clock: VirtualClock } {
  const clock = new VirtualClock();
  return { q: new WorkQueue<string>({ clock, partitionOf: byPrefix, ...options }), clock };
}

/** Takes every key `tryGet` hands out (they stay processing). */
function takeAll<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) out.push(k);
  return out;
}

/** Takes and finishes keys until none is handed out; returns the order they came out. */
function drain<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) {
    out.push(k);
    q.done(k);
  }
  return out;
}

/** Pending `get`s of several workers, with what each received so far. */
function workers(q: WorkQueue<string>, n: number): { value: string | undefined; settled: boolean }[] {
  return Array.from({ length: n }, () => {
    const state: { value: string | undefined; settled: boolean } = { value: undefined, settled: false };
    void q.get().then((value) => {
      state.settled = true;
      state.value = value;
    });
    return state;
  });
}

function received(ws: readonly { value: string | undefined; settled: boolean }[]): string[] {
  return ws.filter((w) => w.settled && w.value !== undefined).map((w) => w.value as string);
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

describe('partition limits: saturation', () => {
  it('five workers waiting on a partition limited to 2 get two of its keys; the other three keep waiting', async () => {
    const { q } = queue({ partitionLimits: { a: 2 } });
    const ws = workers(q, 5);
    for (let i = 0; i < 6; i++) q.add(`a/${i}`);
    await flushMicrotasks();
    expect(received(ws)).toEqual(['a/0', 'a/1']);
    expect(q.processingIn('a')).toBe(2);
    expect(q.lengthIn('a')).toBe(4);
    expect(q.stats()).toMatchObject({ getters: 3, saturatedPartitions: 1, limitedPartitions: 1 });
  });

  it('a limit holds through many rounds of done: never more than 2 processing, every key handed out once', () => {
    const { q } = queue({ partitionLimits: { a: 2 } });
    for (let i = 0; i < 50; i++) q.add(`a/${i}`);
    const handedOut: string[] = [];
    const held: string[] = [];
    for (let round = 0; round < 100; round++) {
      held.push(...takeAll(q));
      expect(held.length).toBeLessThanOrEqual(2);
      expect(q.processingIn('a')).toBe(held.length);
      const finished = held.shift();
      if (finished === undefined) break;
      handedOut.push(finished);
      q.done(finished);
    }
    expect(handedOut).toEqual(Array.from({ length: 50 }, (_, i) => `a/${i}`));
  });

  it('while one partition is at its limit, keys of other partitions are handed out', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (let i = 0; i < 4; i++) q.add(`a/${i}`);
    q.add('b/0');
    q.add('b/1');
    q.add('c/0');
    expect(takeAll(q)).toEqual(['a/0', 'b/0', 'c/0', 'b/1']);
    expect(q.length).toBe(3);
    expect(q.lengthIn('a')).toBe(3);
  });

  it('a saturated partition keeps its keys in FIFO order, including keys added while it was saturated', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (let i = 0; i < 3; i++) q.add(`a/${i}`);
    expect(q.tryGet()).toBe('a/0');
    q.add('b/0');
    q.add('a/3');
    q.add('a/1'); // already queued: keeps its place
    expect(q.tryGet()).toBe('b/0');
    expect(q.tryGet()).toBeUndefined();
    q.done('a/0');
    expect(drain(q)).toEqual(['a/1', 'a/2', 'a/3']);
  });

  it('among eligible partitions the highest priority is served first; the high-priority keys of a saturated partition do not hold up lower priorities', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('c/low', { priority: Priority.low });
    q.add('b/normal');
    q.add('a/high0', { priority: Priority.high });
    q.add('a/high1', { priority: Priority.high });
    expect(takeAll(q)).toEqual(['a/high0', 'b/normal', 'c/low']);
    q.add('b/low', { priority: Priority.low });
    q.done('a/high0');
    // a/high1 outranks the low key of b as soon as a is below its limit.
    expect(takeAll(q)).toEqual(['a/high1', 'b/low']);
  });

  it('a queued key of a saturated partition moved up in priority stays held back until the partition is below its limit', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    q.add('a/1', { priority: Priority.low });
    q.add('b/0');
    expect(q.tryGet()).toBe('a/0');
    q.add('a/1', { priority: Priority.high });
    expect(takeAll(q)).toEqual(['b/0']);
    q.done('a/0');
    expect(q.tryGet()).toBe('a/1');
  });

  it('a partition without a limit is not held back by the limit of another', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (let i = 0; i < 3; i++) q.add(`b/${i}`);
    q.add('a/0');
    q.add('a/1');
    expect(takeAll(q)).toEqual(['b/0', 'a/0', 'b/1', 'b/2']);
    expect(q.processingIn('b')).toBe(3);
  });

  it('without partitionOf a limit on the partition "" caps the whole queue', () => {
    const q = new WorkQueue<string>({ clock: new VirtualClock(), partitionLimits: { '': 2 } });
    for (const k of ['x', 'y', 'z']) q.add(k);
    expect(takeAll(q)).toEqual(['x', 'y']);
    q.done('x');
    expect(takeAll(q)).toEqual(['z']);
  });
});

describe('partition limits: wake-ups', () => {
  it('done on a key of a saturated partition hands its next key to a pending get', async () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    q.add('a/1');
    expect(await q.get()).toBe('a/0');
    const [w] = workers(q, 1);
    await flushMicrotasks();
    expect(w?.settled).toBe(false);
    q.done('a/0');
    await flushMicrotasks();
    expect(w?.value).toBe('a/1');
    expect(q.processingIn('a')).toBe(1);
  });

  it('done of a key added again while processing re-queues it behind the partition’s older keys and wakes a pending get with the oldest', async () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    q.add('a/1');
    expect(q.tryGet()).toBe('a/0');
    q.add('a/0');
    const [w] = workers(q, 1);
    q.done('a/0');
    await flushMicrotasks();
    expect(w?.value).toBe('a/1');
    expect(q.lengthIn('a')).toBe(1);
    q.done('a/1');
    expect(q.tryGet()).toBe('a/0');
  });

  it.each([
    ['requeueAfter', (q: WorkQueue<string>, key: string) => q.requeueAfter(key, 100)],
    [
      'requeueRateLimited',
      (q: WorkQueue<string>, key: string) => q.requeueRateLimited(key, { delayMs: 100 }),
    ],
  ] as const)(
    '%s frees a slot and hands the next key to a pending get; the requeued key waits for a slot when it is due',
    async (_name, requeue) => {
      const { q, clock } = queue({ partitionLimits: { a: 1 } });
      q.add('a/0');
      q.add('a/1');
      expect(q.tryGet()).toBe('a/0');
      const [w] = workers(q, 1);
      requeue(q, 'a/0');
      await flushMicrotasks();
      expect(w?.value).toBe('a/1');
      await clock.advance(100);
      expect(q.lengthIn('a')).toBe(1);
      expect(q.tryGet()).toBeUndefined();
      q.done('a/1');
      expect(q.tryGet()).toBe('a/0');
    },
  );

  it('requeueAfter with no delay of the only processing key of a partition at limit 1 hands that key out again', async () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    expect(q.tryGet()).toBe('a/0');
    const [w] = workers(q, 1);
    q.requeueAfter('a/0', 0);
    await flushMicrotasks();
    expect(w?.value).toBe('a/0');
    expect(q.processingIn('a')).toBe(1);
  });

  it('a delayed key of a saturated partition that comes due does not wake a get; a key of another partition does', async () => {
    const { q, clock } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    expect(q.tryGet()).toBe('a/0');
    q.addAfter('a/1', 10);
    q.addAfter('b/0', 20);
    const [w] = workers(q, 1);
    await clock.advance(10);
    expect(w?.settled).toBe(false);
    await clock.advance(10);
    expect(w?.value).toBe('b/0');
    expect(q.lengthIn('a')).toBe(1);
  });

  it('raising a limit hands as many keys to pending gets as the new limit allows', async () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (let i = 0; i < 5; i++) q.add(`a/${i}`);
    const ws = workers(q, 4);
    await flushMicrotasks();
    expect(received(ws)).toEqual(['a/0']);
    q.setPartitionLimit('a', 3);
    await flushMicrotasks();
    expect(received(ws)).toEqual(['a/0', 'a/1', 'a/2']);
    expect(q.stats()).toMatchObject({ getters: 1, saturatedPartitions: 1 });
  });

  it('removing a limit hands a key to every pending get that a ready key can serve and drops the partition’s state', async () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (let i = 0; i < 3; i++) q.add(`a/${i}`);
    const ws = workers(q, 4);
    await flushMicrotasks();
    q.setPartitionLimit('a', undefined);
    await flushMicrotasks();
    expect(received(ws)).toEqual(['a/0', 'a/1', 'a/2']);
    expect(q.stats()).toMatchObject({ getters: 1, limitedPartitions: 0, saturatedPartitions: 0 });
    expect(q.processingIn('a')).toBe(3);
  });

  it('lowering a limit below the keys processing stops hand-outs until enough of them are done', () => {
    const { q } = queue({ partitionLimits: { a: 3 } });
    for (let i = 0; i < 5; i++) q.add(`a/${i}`);
    expect(takeAll(q)).toEqual(['a/0', 'a/1', 'a/2']);
    q.setPartitionLimit('a', 1);
    q.done('a/0');
    expect(q.tryGet()).toBeUndefined();
    q.done('a/1');
    expect(q.tryGet()).toBeUndefined();
    q.done('a/2');
    expect(q.tryGet()).toBe('a/3');
    expect(q.tryGet()).toBeUndefined();
  });

  it('a limit set while keys of the partition are processing counts them', () => {
    const { q } = queue();
    for (let i = 0; i < 4; i++) q.add(`a/${i}`);
    expect([q.tryGet(), q.tryGet()]).toEqual(['a/0', 'a/1']);
    q.setPartitionLimit('a', 2);
    expect(q.processingIn('a')).toBe(2);
    expect(q.tryGet()).toBeUndefined();
    q.done('a/0');
    expect(q.tryGet()).toBe('a/2');
  });
});

describe('partition limits: removeWhere, shutDown and counts', () => {
  it('removeWhere of a processing key does not free its slot; its done does', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    q.add('a/1');
    expect(q.tryGet()).toBe('a/0');
    expect(q.removeWhere((k) => k === 'a/0')).toBe(0);
    expect(q.tryGet()).toBeUndefined();
    expect(q.processingIn('a')).toBe(1);
    q.done('a/0');
    expect(q.processingIn('a')).toBe(0);
    expect(q.tryGet()).toBe('a/1');
  });

  it('removeWhere of the held-back keys of a saturated partition empties it and keeps the counts', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (let i = 0; i < 4; i++) q.add(`a/${i}`);
    q.add('b/0');
    expect(takeAll(q)).toEqual(['a/0', 'b/0']);
    expect(q.removeWhere((k) => k.startsWith('a/'))).toBe(3);
    expect(q.length).toBe(0);
    expect(q.lengthIn('a')).toBe(0);
    expect(q.processingIn('a')).toBe(1);
    q.done('a/0');
    q.add('a/9');
    expect(takeAll(q)).toEqual(['a/9']);
  });

  it('shutDown with a saturated partition resolves pending gets; done afterwards still brings its count to 0', async () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    q.add('a/1');
    expect(q.tryGet()).toBe('a/0');
    const ws = workers(q, 2);
    q.shutDown();
    await flushMicrotasks();
    expect(ws.every((w) => w.settled && w.value === undefined)).toBe(true);
    expect(q.length).toBe(0);
    expect(q.lengthIn('a')).toBe(0);
    expect(q.processingIn('a')).toBe(1);
    q.done('a/0');
    expect(q.processingIn('a')).toBe(0);
    q.setPartitionLimit('a', 5);
    expect(q.tryGet()).toBeUndefined();
    expect(q.stats()).toMatchObject({ processing: 0, depth: 0, getters: 0 });
  });

  it('processingIn counts the keys of a partition without a limit too, and length counts held-back keys', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (const k of ['a/0', 'a/1', 'b/0', 'b/1', 'c/0']) q.add(k);
    expect(takeAll(q)).toEqual(['a/0', 'b/0', 'c/0', 'b/1']);
    expect([q.processingIn('a'), q.processingIn('b'), q.processingIn('c'), q.processingIn('d')]).toEqual([
      1, 2, 1, 0,
    ]);
    expect(q.length).toBe(1);
    expect(q.lengthIn('a')).toBe(1);
    expect(q.lengthIn('b')).toBe(0);
  });

  it('50 000 partitions each given a limit, used, and released leave no per-partition state behind', () => {
    const { q } = queue();
    for (let i = 0; i < 50_000; i++) {
      const p = `p${i}`;
      q.setPartitionLimit(p, 1);
      q.add(`${p}/0`);
      q.add(`${p}/1`);
      expect(q.tryGet()).toBe(`${p}/0`);
      expect(q.tryGet()).toBeUndefined();
      q.setPartitionLimit(p, undefined);
      expect(q.tryGet()).toBe(`${p}/1`);
      q.done(`${p}/0`);
      q.done(`${p}/1`);
    }
    expect(q.stats()).toMatchObject({
      limitedPartitions: 0,
      saturatedPartitions: 0,
      depth: 0,
      processing: 0,
    });
  });

  it('a partition with a limit but no keys keeps only its limit, and keeps it', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    q.add('a/0');
    q.done(q.tryGet() as string);
    expect(q.stats()).toMatchObject({ limitedPartitions: 1, saturatedPartitions: 0 });
    q.add('a/1');
    q.add('a/2');
    expect(takeAll(q)).toEqual(['a/1']);
  });
});

describe('partition limits: bad input', () => {
  it('setPartitionLimit rejects a limit that is not an integer >= 1 with an OptionsError, and changes nothing', () => {
    const { q } = queue({ partitionLimits: { a: 1 } });
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2', null]) {
      const error = optionsErrorOf(() => q.setPartitionLimit('a', bad as number));
      expect(error.field).toBe('limit');
      expect(error.code).toBe('CONVERGE_ERR_OPTIONS_INVALID');
    }
    expect(optionsErrorOf(() => q.setPartitionLimit(7 as unknown as string, 1)).field).toBe('partition');
    q.add('a/0');
    q.add('a/1');
    expect(takeAll(q)).toEqual(['a/0']);
  });

  it('the partitionLimits option rejects a bad limit or a non-object, naming the field', () => {
    const cases: [string, unknown][] = [
      ['partitionLimits.a', { a: 0 }],
      ['partitionLimits.b', { a: 1, b: 2.5 }],
      ['partitionLimits.a', { a: undefined }],
      ['partitionLimits', 3],
      ['partitionLimits', [1]],
      ['partitionLimits', null],
    ];
    for (const [field, partitionLimits] of cases) {
      const options = { partitionLimits } as unknown as WorkQueueOptions<string>;
      expect(optionsErrorOf(() => new WorkQueue<string>(options)).field).toBe(field);
    }
  });
});

describe('ready set blocking internals', () => {
  interface Item extends ReadyEntry {
    readonly name: string;
  }
  const item = (name: string, partition: string): Item => ({
    name,
    partition,
    lane: undefined as Lane<ReadyEntry> | undefined,
    slot: 0,
    priority: 0,
  });
  const names = (set: ReadySet<Item>): string[] => {
    const out: string[] = [];
    for (let e = set.shift(); e !== undefined; e = set.shift()) out.push(e.name);
    return out;
  };

  it('a blocked partition leaves the round and joins its end again when unblocked', () => {
    const set = new ReadySet<Item>();
    for (const [name, p] of [
      ['p1', 'p'],
      ['p2', 'p'],
      ['q1', 'q'],
      ['q2', 'q'],
      ['r1', 'r'],
      ['r2', 'r'],
    ] as const) {
      set.push(item(name, p), 0);
    }
    set.block('p');
    expect(set.shift()?.name).toBe('q1');
    set.unblock('p');
    expect(names(set)).toEqual(['r1', 'q2', 'p1', 'r2', 'p2']);
  });

  it('keys pushed to a blocked partition at a new priority are held back too', () => {
    const set = new ReadySet<Item>();
    set.block('p');
    set.push(item('p-high', 'p'), 5);
    set.push(item('q-low', 'q'), -5);
    expect(names(set)).toEqual(['q-low']);
    expect(set.size).toBe(1);
    expect(set.sizeOf('p')).toBe(1);
    set.unblock('p');
    expect(names(set)).toEqual(['p-high']);
  });

  it('with 200 partitions blocked and holding keys, idle lanes are still swept (never more than the busy ones) and the parked ones kept', () => {
    const set = new ReadySet<Item>();
    for (let i = 0; i < 200; i++) {
      set.push(item(`held${i}`, `b${i}`), 0);
      set.block(`b${i}`);
    }
    for (let i = 0; i < 5_000; i++) {
      set.push(item(`once${i}`, `once${i}`), 0);
      expect(set.shift()?.name).toMatch(/^once/);
    }
    // Idle lanes are swept once they outnumber the busy ones; the 200 parked lanes count as busy.
    expect(set.lanes).toBeLessThanOrEqual(2 * 201);
    for (let i = 0; i < 200; i++) set.unblock(`b${i}`);
    expect(names(set)).toHaveLength(200);
    expect(set.blockedPartitions).toBe(0);
  });

  it('50 000 partitions blocked with keys, emptied by unlink, and unblocked leave no lanes or blocks behind', () => {
    const set = new ReadySet<Item>();
    for (let i = 0; i < 50_000; i++) {
      const p = `p${i}`;
      const a = item('a', p);
      set.push(a, 0);
      set.block(p);
      expect(set.shift()).toBeUndefined();
      set.unlink(a);
      set.unblock(p);
      // A partition used once and done: the sweep runs when a lane in the ring retires.
      set.push(item('b', p), 0);
      expect(set.shift()?.name).toBe('b');
    }
    expect(set.blockedPartitions).toBe(0);
    expect(set.size).toBe(0);
    expect(set.lanes).toBeLessThanOrEqual(2 * 64 + 2);
  });

  it('under random pushes, unlinks, shifts, blocks and unblocks, blocked keys are never shifted and the parked-lane count returns to 0 once all is unblocked', () => {
    type Op =
      | { readonly op: 'push'; readonly partition: string; readonly priority: number }
      | { readonly op: 'unlink'; readonly index: number }
      | { readonly op: 'shift' }
      | { readonly op: 'block' | 'unblock'; readonly partition: string };
    const partitionArb = fc.constantFrom('p', 'q', 'r');
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      {
        arbitrary: fc
          .record({ partition: partitionArb, priority: fc.constantFrom(0, 1) })
          .map((c) => ({ op: 'push' as const, ...c })),
        weight: 4,
      },
      { arbitrary: fc.nat(20).map((index) => ({ op: 'unlink' as const, index })), weight: 1 },
      { arbitrary: fc.constant({ op: 'shift' as const }), weight: 3 },
      { arbitrary: partitionArb.map((partition) => ({ op: 'block' as const, partition })), weight: 2 },
      { arbitrary: partitionArb.map((partition) => ({ op: 'unblock' as const, partition })), weight: 2 },
    );
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80, size: 'max' }), (ops) => {
        const set = new ReadySet<Item>();
        const queued: Item[] = [];
        const blocked = new Set<string>();
        let n = 0;
        for (const op of ops) {
          if (op.op === 'push') {
            const it = item(`${op.partition}${n++}`, op.partition);
            set.push(it, op.priority);
            queued.push(it);
          } else if (op.op === 'unlink') {
            const [it] = queued.splice(op.index % Math.max(1, queued.length), 1);
            if (it !== undefined) set.unlink(it);
          } else if (op.op === 'shift') {
            const it = set.shift();
            const eligible = queued.filter((q) => !blocked.has(q.partition));
            expect(it === undefined).toBe(eligible.length === 0);
            if (it !== undefined) {
              expect(blocked.has(it.partition)).toBe(false);
              queued.splice(queued.indexOf(it), 1);
            }
          } else if (op.op === 'block') {
            set.block(op.partition);
            blocked.add(op.partition);
          } else {
            set.unblock(op.partition);
            blocked.delete(op.partition);
          }
          expect(set.size).toBe(queued.length);
          expect(set.parkedLanes).toBeGreaterThanOrEqual(0);
          expect(set.blockedPartitions).toBe(blocked.size);
        }
        for (const p of ['p', 'q', 'r']) set.unblock(p);
        expect(set.parkedLanes).toBe(0);
        expect(names(set)).toHaveLength(queued.length);
      }),
      { numRuns: 300 },
    );
  });
});
