import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flushMicrotasks, VirtualClock } from '../clock/virtual-clock.ts';
import { WorkQueue } from './queue.ts';

/*
 * Model-based test of partition limits: random scripts of add / addAfter / get / tryGet / abort /
 * done / requeueAfter / setPartitionLimit / removeWhere / advance / shutDown, run by four workers
 * against the real queue on a virtual clock. A reference model of the ready, processing, dirty
 * and waiting keys (client-go semantics) runs alongside; it does not predict which key a pending
 * get receives, it checks every hand-out against the rules:
 * - the key was ready, and its partition was below its limit at that moment;
 * - the worker was the oldest pending get;
 * - a key is never held by two workers;
 * - after every step, no get is pending while a key of a partition below its limit is ready;
 * - tryGet takes the highest priority among eligible keys, the oldest of its partition there.
 */

const PARTITIONS = ['p', 'q', 'r'] as const;
const KEYS = ['p/1', 'p/2', 'p/3', 'q/1', 'q/2', 'r/1'] as const;
const WORKERS = 4;

const partitionOf = (key: string): string => key.slice(0, key.indexOf('/'));

type Command =
  | { readonly op: 'add'; readonly key: string; readonly priority: number }
  | { readonly op: 'addAfter'; readonly key: string; readonly delayMs: number; readonly priority: number }
  | { readonly op: 'get'; readonly worker: number; readonly sync: boolean }
  | { readonly op: 'abort'; readonly worker: number }
  | { readonly op: 'done'; readonly worker: number }
  | { readonly op: 'requeueAfter'; readonly worker: number; readonly delayMs: number }
  | { readonly op: 'limit'; readonly partition: string; readonly limit: number | undefined }
  | { readonly op: 'remove'; readonly key: string }
  | { readonly op: 'removePartition'; readonly partition: string }
  | { readonly op: 'advance'; readonly ms: number }
  | { readonly op: 'shutDown' };

interface Ready {
  readonly priority: number;
  /** Order of joining this priority (FIFO within a partition and priority). */
  readonly seq: number;
}

interface Wait {
  at: number;
  priority: number;
  seq: number;
}

/** The documented semantics, without the choice of which ready key a pending get receives. */
class Model {
  readonly ready = new Map<string, Ready>();
  readonly processing = new Set<string>();
  readonly dirty = new Map<string, number>();
  readonly waiting = new Map<string, Wait>();
  readonly limits = new Map<string, number>();
  /** Workers blocked in get, oldest first. */
  readonly pending: number[] = [];
  /** Worker -> the key it holds. */
  readonly held = new Map<number, string>();
  now = 0;
  shut = false;
  #seq = 0;

  constructor(limits: Readonly<Record<string, number>>) {
    for (const [p, n] of Object.entries(limits)) this.limits.set(p, n);
  }

  processingIn(partition: string): number {
    let n = 0;
    for (const key of this.processing) if (partitionOf(key) === partition) n++;
    return n;
  }

  lengthIn(partition: string): number {
    let n = 0;
    for (const key of this.ready.keys()) if (partitionOf(key) === partition) n++;
    return n;
  }

  /** Below its limit (or without one): its ready keys may be handed out. */
  eligible(partition: string): boolean {
    const limit = this.limits.get(partition);
    return limit === undefined || this.processingIn(partition) < limit;
  }

  eligibleReady(): [string, Ready][] {
    return [...this.ready].filter(([key]) => this.eligible(partitionOf(key)));
  }

  has(key: string): boolean {
    return this.ready.has(key) || this.processing.has(key) || this.waiting.has(key);
  }

  add(key: string, priority: number): void {
    if (this.shut) return;
    this.readd(key, priority);
  }

  /** An add that is not refused by shutdown (also what a due timer does). */
  readd(key: string, priority: number): void {
    const current = this.ready.get(key);
    if (current !== undefined) {
      if (priority > current.priority) this.#enqueue(key, priority);
      return;
    }
    if (this.processing.has(key)) {
      this.dirty.set(key, Math.max(this.dirty.get(key) ?? Number.NEGATIVE_INFINITY, priority));
      return;
    }
    this.#enqueue(key, priority);
  }

  addAfter(key: string, delayMs: number, priority: number): void {
    if (this.shut) return;
    if (delayMs <= 0) this.add(key, priority);
    else this.#schedule(key, this.now + delayMs, priority);
  }

  done(key: string): void {
    this.processing.delete(key);
    const again = this.dirty.get(key);
    this.dirty.delete(key);
    if (again !== undefined && !this.shut) this.#enqueue(key, again);
  }

  requeueAfter(key: string, delayMs: number): void {
    this.processing.delete(key);
    const again = this.dirty.get(key);
    this.dirty.delete(key);
    if (this.shut) return;
    if (delayMs <= 0) {
      this.#enqueue(key, Math.max(0, again ?? Number.NEGATIVE_INFINITY));
      return;
    }
    if (again !== undefined) this.#enqueue(key, again);
    this.#schedule(key, this.now + delayMs, 0);
  }

  remove(match: (key: string) => boolean): number {
    let removed = 0;
    for (const key of KEYS) {
      if (!match(key)) continue;
      const hit = this.ready.delete(key) || this.waiting.has(key);
      this.waiting.delete(key);
      this.dirty.delete(key);
      if (hit) removed++;
    }
    return removed;
  }

  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      let next: [string, Wait] | undefined;
      for (const entry of this.waiting) {
        const w = entry[1];
        if (w.at > target) continue;
        if (next === undefined || w.at < next[1].at || (w.at === next[1].at && w.seq < next[1].seq))
          next = entry;
      }
      if (next === undefined) break;
      this.now = next[1].at;
      this.waiting.delete(next[0]);
      this.readd(next[0], next[1].priority);
    }
    this.now = target;
  }

  shutDown(): void {
    this.shut = true;
    this.ready.clear();
    this.dirty.clear();
    this.waiting.clear();
    this.pending.length = 0;
  }

  #enqueue(key: string, priority: number): void {
    this.ready.set(key, { priority, seq: ++this.#seq });
  }

  #schedule(key: string, at: number, priority: number): void {
    const current = this.waiting.get(key);
    if (current === undefined) {
      this.waiting.set(key, { at, priority, seq: ++this.#seq });
      return;
    }
    current.priority = Math.max(current.priority, priority);
    if (at < current.at) {
      current.at = at;
      current.seq = ++this.#seq;
    }
  }
}

interface Worker {
  pending: AbortController | undefined;
  key: string | undefined;
}

class Harness {
  readonly clock = new VirtualClock();
  readonly queue: WorkQueue<string>;
  readonly model: Model;
  readonly workers: Worker[] = Array.from({ length: WORKERS }, () => ({
    pending: undefined,
    key: undefined,
  }));
  /** Results of gets, in the order they resolved during the current step. */
  readonly #resolved: { worker: number; abort: AbortController; key: string | undefined }[] = [];
  readonly #violations: string[] = [];
  #step = 0;

  constructor(limits: Readonly<Record<string, number>>) {
    this.queue = new WorkQueue<string>({ clock: this.clock, partitionOf, partitionLimits: limits });
    this.model = new Model(limits);
  }

  async run(command: Command): Promise<void> {
    this.#step++;
    const q = this.queue;
    const m = this.model;
    const heldBefore = new Map(PARTITIONS.map((p) => [p, m.processingIn(p)]));
    switch (command.op) {
      case 'add':
        q.add(command.key, { priority: command.priority });
        m.add(command.key, command.priority);
        break;
      case 'addAfter':
        q.addAfter(command.key, command.delayMs, { priority: command.priority });
        m.addAfter(command.key, command.delayMs, command.priority);
        break;
      case 'get': {
        const index = this.#pick(command.worker, (w) => w.pending === undefined && w.key === undefined);
        if (index === undefined) return;
        if (command.sync) this.#tryGet(index);
        else {
          const abort = new AbortController();
          this.#worker(index).pending = abort;
          if (!m.shut) m.pending.push(index);
          void q.get(abort.signal).then((key) => this.#resolved.push({ worker: index, abort, key }));
        }
        break;
      }
      case 'abort': {
        const index = this.#pick(command.worker, (w) => w.pending !== undefined);
        if (index === undefined) return;
        this.#worker(index).pending?.abort();
        const i = m.pending.indexOf(index);
        if (i >= 0) m.pending.splice(i, 1);
        break;
      }
      case 'done':
      case 'requeueAfter': {
        const index = this.#pick(command.worker, (w) => w.key !== undefined);
        if (index === undefined) return;
        const w = this.#worker(index);
        const key = w.key as string;
        w.key = undefined;
        m.held.delete(index);
        if (command.op === 'done') {
          q.done(key);
          m.done(key);
        } else {
          q.requeueAfter(key, command.delayMs);
          m.requeueAfter(key, command.delayMs);
        }
        break;
      }
      case 'limit':
        q.setPartitionLimit(command.partition, command.limit);
        if (command.limit === undefined) m.limits.delete(command.partition);
        else m.limits.set(command.partition, command.limit);
        break;
      case 'remove':
      case 'removePartition': {
        const match =
          command.op === 'remove'
            ? (k: string) => k === command.key
            : (k: string) => partitionOf(k) === command.partition;
        const removed = q.removeWhere(match);
        const expected = m.remove(match);
        if (removed !== expected) this.#violation(`removeWhere removed ${removed}, model ${expected}`);
        break;
      }
      case 'advance':
        // The model fires its timers first; the hand-outs they cause are checked below.
        m.advance(command.ms);
        await this.clock.advance(command.ms);
        break;
      case 'shutDown':
        q.shutDown();
        m.shutDown();
        break;
    }
    await flushMicrotasks();
    this.#handOuts();
    this.#check(heldBefore);
    if (this.#violations.length > 0) throw new Error(this.#violations.join('\n'));
  }

  /** Lets idle workers take keys and finishes held ones until nothing is left; limits stay. */
  async drain(): Promise<void> {
    await this.run({ op: 'advance', ms: 1_000 });
    for (let round = 0; round < 200; round++) {
      let acted = false;
      for (let w = 0; w < WORKERS; w++) {
        const worker = this.#worker(w);
        if (worker.key !== undefined || worker.pending !== undefined) continue;
        if (this.model.eligibleReady().length === 0) continue;
        await this.run({ op: 'get', worker: w, sync: round % 2 === 0 });
        acted = true;
      }
      for (let w = 0; w < WORKERS; w++) {
        if (this.#worker(w).key === undefined) continue;
        await this.run({ op: 'done', worker: w });
        acted = true;
      }
      if (!acted) break;
    }
    for (let w = 0; w < WORKERS; w++)
      if (this.#worker(w).pending !== undefined) await this.run({ op: 'abort', worker: w });
  }

  #tryGet(worker: number): void {
    const m = this.model;
    const key = this.queue.tryGet();
    const eligible = m.shut ? [] : m.eligibleReady();
    if (eligible.length === 0) {
      if (key !== undefined) this.#violation(`tryGet gave ${key} while no key was eligible`);
      return;
    }
    if (key === undefined) {
      this.#violation(`tryGet gave nothing while ${eligible.map(([k]) => k).join(', ')} were eligible`);
      return;
    }
    const got = m.ready.get(key);
    if (got === undefined || !m.eligible(partitionOf(key))) {
      this.#violation(`tryGet gave ${key}, which was not ready or whose partition was at its limit`);
    } else {
      for (const [other, r] of eligible) {
        if (r.priority > got.priority)
          this.#violation(`tryGet gave ${key} before ${other} of higher priority`);
        if (r.priority === got.priority && partitionOf(other) === partitionOf(key) && r.seq < got.seq) {
          this.#violation(`tryGet gave ${key} before the older ${other} of its partition`);
        }
      }
    }
    this.#take(worker, key);
  }

  /** Applies the results of gets that resolved in this step, checking each hand-out. */
  #handOuts(): void {
    const m = this.model;
    for (const { worker, abort, key } of this.#resolved.splice(0)) {
      const w = this.#worker(worker);
      if (w.pending !== abort) this.#violation(`worker ${worker} got a result for a get it did not make`);
      w.pending = undefined;
      if (key === undefined) {
        if (m.pending.includes(worker))
          this.#violation(`worker ${worker}'s get resolved empty while pending`);
        continue;
      }
      if (m.pending[0] !== worker) {
        this.#violation(`${key} went to worker ${worker}, not to the oldest pending get (${m.pending[0]})`);
      }
      m.pending.splice(m.pending.indexOf(worker), 1);
      if (!m.ready.has(key)) this.#violation(`${key} was handed out but was not ready`);
      const partition = partitionOf(key);
      if (!m.eligible(partition)) {
        this.#violation(
          `${key} handed out while ${partition} had ${m.processingIn(partition)} of ${m.limits.get(partition)} processing`,
        );
      }
      this.#take(worker, key);
    }
  }

  #take(worker: number, key: string): void {
    const m = this.model;
    for (let other = 0; other < WORKERS; other++) {
      if (this.#worker(other).key === key)
        this.#violation(`${key} handed to worker ${worker} while worker ${other} holds it`);
    }
    m.ready.delete(key);
    m.processing.add(key);
    m.held.set(worker, key);
    this.#worker(worker).key = key;
  }

  #check(heldBefore: ReadonlyMap<string, number>): void {
    const q = this.queue;
    const m = this.model;
    if (m.pending.length > 0) {
      const eligible = m.eligibleReady().map(([k]) => k);
      if (eligible.length > 0) {
        this.#violation(
          `workers ${m.pending.join(', ')} wait while ${eligible.join(', ')} are ready and eligible`,
        );
      }
    }
    let saturated = 0;
    for (const p of PARTITIONS) {
      const limit = m.limits.get(p);
      const held = m.processingIn(p);
      if (limit !== undefined && held > (heldBefore.get(p) ?? 0) && held > limit) {
        this.#violation(`${p} went to ${held} processing, over its limit ${limit}`);
      }
      if (limit !== undefined && held >= limit) saturated++;
      if (q.processingIn(p) !== held)
        this.#violation(`processingIn(${p}) ${q.processingIn(p)}, model ${held}`);
      if (q.lengthIn(p) !== m.lengthIn(p))
        this.#violation(`lengthIn(${p}) ${q.lengthIn(p)}, model ${m.lengthIn(p)}`);
    }
    for (const key of KEYS)
      if (q.has(key) !== m.has(key)) this.#violation(`has(${key}) ${q.has(key)}, model ${m.has(key)}`);
    const stats = q.stats();
    const actual = [
      q.length,
      stats.processing,
      stats.waiting,
      stats.limitedPartitions,
      stats.saturatedPartitions,
    ];
    const expected = [m.ready.size, m.processing.size, m.waiting.size, m.limits.size, saturated];
    if (actual.join() !== expected.join()) {
      this.#violation(
        `length/processing/waiting/limited/saturated ${actual.join('/')}, model ${expected.join('/')}`,
      );
    }
  }

  #violation(message: string): void {
    this.#violations.push(`step ${this.#step}: ${message}`);
  }

  #pick(start: number, ok: (w: Worker) => boolean): number | undefined {
    for (let i = 0; i < WORKERS; i++) {
      const index = (start + i) % WORKERS;
      if (ok(this.#worker(index))) return index;
    }
    return undefined;
  }

  #worker(index: number): Worker {
    return this.workers[index] as Worker;
  }
}

const keyArb = fc.constantFrom(...KEYS);
const partitionArb = fc.constantFrom(...PARTITIONS);
const workerArb = fc.integer({ min: 0, max: WORKERS - 1 });
const priorityArb = fc.constantFrom(-1, 0, 0, 1);
const delayArb = fc.oneof(fc.constantFrom(0, -1), fc.integer({ min: 1, max: 30 }));
const limitArb = fc.constantFrom(undefined, 1, 1, 2, 3);

function commandArb(withShutDown: boolean): fc.Arbitrary<Command> {
  const arbs: fc.WeightedArbitrary<Command>[] = [
    {
      arbitrary: fc.record({ key: keyArb, priority: priorityArb }).map((c) => ({ op: 'add', ...c })),
      weight: 7,
    },
    {
      arbitrary: fc
        .record({ key: keyArb, delayMs: delayArb, priority: priorityArb })
        .map((c) => ({ op: 'addAfter', ...c })),
      weight: 3,
    },
    {
      arbitrary: fc
        .record({ worker: workerArb, sync: fc.constantFrom(false, false, true) })
        .map((c) => ({ op: 'get', ...c })),
      weight: 8,
    },
    { arbitrary: workerArb.map((worker) => ({ op: 'abort', worker })), weight: 1 },
    { arbitrary: workerArb.map((worker) => ({ op: 'done', worker })), weight: 5 },
    {
      arbitrary: fc
        .record({ worker: workerArb, delayMs: delayArb })
        .map((c) => ({ op: 'requeueAfter', ...c })),
      weight: 2,
    },
    {
      arbitrary: fc.record({ partition: partitionArb, limit: limitArb }).map((c) => ({ op: 'limit', ...c })),
      weight: 4,
    },
    { arbitrary: keyArb.map((key) => ({ op: 'remove', key })), weight: 1 },
    { arbitrary: partitionArb.map((partition) => ({ op: 'removePartition', partition })), weight: 1 },
    { arbitrary: fc.integer({ min: 0, max: 40 }).map((ms) => ({ op: 'advance', ms })), weight: 3 },
  ];
  if (withShutDown) arbs.push({ arbitrary: fc.constant({ op: 'shutDown' }), weight: 1 });
  return fc.oneof(...arbs);
}

const limitsArb = fc.dictionary(partitionArb, fc.integer({ min: 1, max: 2 }), { maxKeys: 3 });
const scriptArb = (withShutDown: boolean): fc.Arbitrary<Command[]> =>
  fc.array(commandArb(withShutDown), { minLength: 1, maxLength: 80, size: 'max' });

/** Runs per property; raise it to fuzz longer, e.g. `WORKQUEUE_PROPERTY_RUNS=20000 npx vitest run …`. */
const RUNS = Number(process.env.WORKQUEUE_PROPERTY_RUNS ?? 300);

describe('partition limit properties', () => {
  it('random interleavings of four workers never exceed a limit, never hand a key out twice at once, and never leave a get waiting while an eligible key is ready', async () => {
    await fc.assert(
      fc.asyncProperty(limitsArb, scriptArb(true), async (limits, script) => {
        const harness = new Harness(limits);
        for (const command of script) await harness.run(command);
        await harness.drain();
      }),
      { numRuns: RUNS },
    );
  });

  it('without shutdown, every ready key is handed out in the end, whatever the limits (no partition starves)', async () => {
    await fc.assert(
      fc.asyncProperty(limitsArb, scriptArb(false), async (limits, script) => {
        const harness = new Harness(limits);
        for (const command of script) await harness.run(command);
        await harness.drain();
        expect(harness.queue.length).toBe(0);
        expect(harness.queue.processingCount).toBe(0);
        expect(harness.queue.waitingCount).toBe(0);
      }),
      { numRuns: RUNS },
    );
  });
});
