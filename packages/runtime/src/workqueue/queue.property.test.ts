import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { type Cause, type CauseSet, manualCause, requeueAfterCause } from './cause.ts';
import { WorkQueue } from './queue.ts';

/*
 * Model-based tests: random scripts of add / addAfter / get / abort / done / requeueAfter /
 * advance / removeWhere / shutDown, run by three "workers" against the real queue on a virtual
 * clock and, in lockstep, against a small reference model of the documented semantics. Adds
 * carry causes (or none, for the default); the model collects them per key as documented and
 * every run's causes must be exactly the model's.
 */

const KEYS = ['a', 'b', 'c'] as const;
const WORKERS = 3;
/** Small, so that random scripts often overflow a key's causes. */
const MAX_CAUSES = 2;

type Mode = 'client-go' | 'openclarity';

type Command =
  | { readonly op: 'add'; readonly key: string; readonly cause: Cause | undefined }
  | {
      readonly op: 'addAfter';
      readonly key: string;
      readonly delayMs: number;
      readonly cause: Cause | undefined;
    }
  | { readonly op: 'get'; readonly worker: number }
  | { readonly op: 'abort'; readonly worker: number }
  | { readonly op: 'done'; readonly worker: number }
  | {
      readonly op: 'requeueAfter';
      readonly worker: number;
      readonly delayMs: number;
      readonly cause: Cause | undefined;
      readonly keepCauses: boolean;
    }
  | { readonly op: 'advance'; readonly ms: number }
  | { readonly op: 'remove'; readonly key: string }
  | { readonly op: 'shutDown' };

/** The model's causes of one run: the newest MAX_CAUSES distinct ones, and how many were let go. */
class ModelCauses {
  causes: Cause[] = [];
  dropped = 0;

  keep(cause: Cause): void {
    // Compared by value, independently of the queue's own equality.
    if (this.causes.some((c) => JSON.stringify(c) === JSON.stringify(cause))) return;
    this.causes.push(cause);
    if (this.causes.length > MAX_CAUSES) {
      this.causes.shift();
      this.dropped++;
    }
  }

  /** Adds `other`'s causes after these, and its dropped count. */
  merge(other: ModelCauses): void {
    this.dropped += other.dropped;
    for (const c of other.causes) this.keep(c);
  }

  toJSON(): CauseSet {
    return { causes: this.causes, dropped: this.dropped };
  }
}

/**
 * The reference: client-go's queue (dirty set, earliest deadline wins, add of a waiting key queues
 * it at once) or openclarity's (every add is a no-op while the key is queued, processing or
 * waiting; the first schedule wins), plus Converge's shutdown (queued keys are dropped).
 */
class Model {
  readonly queue: string[] = [];
  readonly dirty = new Set<string>();
  readonly processing = new Set<string>();
  readonly waiting = new Map<string, { at: number; seq: number }>();
  /** Workers blocked in get, in the order they asked. */
  readonly getters: number[] = [];
  /** Worker -> the key it holds. */
  readonly held = new Map<number, string>();
  /** Per key: causes of its next run, of the delayed add it waits on, and of its run in progress. */
  readonly next = new Map<string, ModelCauses>();
  readonly wait = new Map<string, ModelCauses>();
  readonly run = new Map<string, ModelCauses>();
  now = 0;
  shut = false;
  adds = 0;
  dropped = 0;
  #seq = 0;

  readonly mode: Mode;
  /** Called when a delayed key comes due. */
  readonly onFired: (key: string) => void;

  constructor(mode: Mode, onFired: (key: string) => void) {
    this.mode = mode;
    this.onFired = onFired;
  }

  has(key: string): boolean {
    return this.queue.includes(key) || this.processing.has(key) || this.waiting.has(key);
  }

  /** An add with `causes` (those of a delayed add that came due, or one cause). */
  add(key: string, causes: ModelCauses): void {
    if (this.shut) {
      this.dropped++;
      return;
    }
    this.adds++;
    // Ignored adds (a hold waits, processing without coalescing) drop their causes.
    if (this.mode === 'openclarity' && this.waiting.has(key)) return;
    if (this.queue.includes(key)) {
      this.#next(key).merge(causes);
      return;
    }
    if (this.processing.has(key)) {
      if (this.mode === 'client-go') {
        this.#next(key).merge(causes);
        this.dirty.add(key);
      }
      return;
    }
    this.#next(key).merge(causes);
    this.#push(key);
  }

  addAfter(key: string, delayMs: number, cause: Cause): void {
    if (this.shut) {
      this.dropped++;
      return;
    }
    if (delayMs <= 0) {
      this.add(key, one(cause));
      return;
    }
    if (this.mode === 'openclarity' && this.has(key)) return;
    this.#schedule(key, this.now + delayMs);
    this.#wait(key).keep(cause);
  }

  get(worker: number): void {
    if (this.shut) return;
    const key = this.queue.shift();
    if (key === undefined) this.getters.push(worker);
    else this.#start(worker, key);
  }

  abort(worker: number): void {
    const i = this.getters.indexOf(worker);
    if (i >= 0) this.getters.splice(i, 1);
  }

  done(worker: number): void {
    const key = this.#finish(worker);
    if (key === undefined) return;
    this.run.delete(key);
    if (this.dirty.delete(key) && !this.shut) this.#push(key);
  }

  requeueAfter(worker: number, delayMs: number, cause: Cause, keepCauses: boolean): void {
    const key = this.#finish(worker);
    if (key === undefined) return;
    const run = this.run.get(key) ?? new ModelCauses();
    this.run.delete(key);
    const wasDirty = this.dirty.delete(key);
    if (this.shut) {
      this.dropped++;
      return;
    }
    // With keepCauses the finished run's causes come first, then what arrived since, then the
    // requeue's own cause.
    const carry = (into: Map<string, ModelCauses>): void => {
      const since = into.get(key) ?? new ModelCauses();
      const merged = keepCauses ? run : new ModelCauses();
      merged.merge(since);
      merged.keep(cause);
      into.set(key, merged);
    };
    if (delayMs <= 0) {
      carry(this.next);
      this.#push(key);
      return;
    }
    // openclarity's hold: the adds that arrived while it ran are superseded, causes and all.
    if (this.mode === 'openclarity') this.next.delete(key);
    this.#schedule(key, this.now + delayMs);
    carry(this.wait);
    if (wasDirty && this.mode === 'client-go') this.#push(key);
  }

  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      let next: [string, { at: number; seq: number }] | undefined;
      for (const entry of this.waiting) {
        const [, w] = entry;
        if (w.at > target) continue;
        if (next === undefined || w.at < next[1].at || (w.at === next[1].at && w.seq < next[1].seq)) {
          next = entry;
        }
      }
      if (next === undefined) break;
      this.now = next[1].at;
      this.waiting.delete(next[0]);
      const causes = this.wait.get(next[0]) ?? new ModelCauses();
      this.wait.delete(next[0]);
      this.onFired(next[0]);
      this.add(next[0], causes);
    }
    this.now = target;
  }

  remove(key: string): number {
    const i = this.queue.indexOf(key);
    let hit = false;
    if (i >= 0) {
      this.queue.splice(i, 1);
      hit = true;
    }
    if (this.waiting.delete(key)) hit = true;
    this.dirty.delete(key);
    this.next.delete(key);
    this.wait.delete(key);
    return hit ? 1 : 0;
  }

  shutDown(): void {
    this.shut = true;
    this.queue.length = 0;
    this.dirty.clear();
    this.waiting.clear();
    this.next.clear();
    this.wait.clear();
    this.getters.length = 0;
  }

  /** What `causesOf(key)` should return now. */
  causesOf(key: string): CauseSet {
    return (this.processing.has(key) ? this.run.get(key) : undefined)?.toJSON() ?? { causes: [], dropped: 0 };
  }

  #next(key: string): ModelCauses {
    const c = this.next.get(key) ?? new ModelCauses();
    this.next.set(key, c);
    return c;
  }

  #wait(key: string): ModelCauses {
    const c = this.wait.get(key) ?? new ModelCauses();
    this.wait.set(key, c);
    return c;
  }

  #schedule(key: string, at: number): void {
    const current = this.waiting.get(key);
    if (current === undefined || at < current.at) this.waiting.set(key, { at, seq: ++this.#seq });
  }

  #push(key: string): void {
    this.queue.push(key);
    while (this.getters.length > 0 && this.queue.length > 0) {
      this.#start(this.getters.shift() as number, this.queue.shift() as string);
    }
  }

  #start(worker: number, key: string): void {
    this.processing.add(key);
    this.held.set(worker, key);
    this.run.set(key, this.next.get(key) ?? new ModelCauses());
    this.next.delete(key);
  }

  #finish(worker: number): string | undefined {
    const key = this.held.get(worker);
    if (key === undefined) return undefined;
    this.held.delete(worker);
    this.processing.delete(key);
    return key;
  }
}

function one(cause: Cause): ModelCauses {
  const c = new ModelCauses();
  c.keep(cause);
  return c;
}

type TraceEvent = 'added' | 'handedOut' | 'removed';

interface Worker {
  /** Set while a get is pending. */
  pending: AbortController | undefined;
  /** The key this worker holds. */
  key: string | undefined;
}

/** Runs commands against a real queue, with the model alongside. */
class Harness {
  readonly clock = new VirtualClock();
  readonly queue: WorkQueue<string>;
  readonly model: Model;
  readonly workers: Worker[] = Array.from({ length: WORKERS }, () => ({
    pending: undefined,
    key: undefined,
  }));
  /** Per key, what happened to it, in order. */
  readonly trace = new Map<string, TraceEvent[]>(KEYS.map((k) => [k, []]));
  readonly violations: string[] = [];
  #step = 0;

  readonly mode: Mode;
  /** Compare the queue's observable state with the model after every step. */
  readonly lockstep: boolean;

  constructor(mode: Mode, lockstep: boolean) {
    this.mode = mode;
    this.lockstep = lockstep;
    this.queue = new WorkQueue<string>({
      clock: this.clock,
      hold: mode === 'openclarity',
      coalesceWhileProcessing: mode === 'client-go',
      maxCausesPerKey: MAX_CAUSES,
    });
    // Only the model knows when a delayed key comes due (so a queue that strays from the model
    // can be reported against the wrong key, but never passes); every other add is recorded from
    // the commands themselves.
    this.model = new Model(mode, (key) => this.#record(key, 'added'));
  }

  async run(command: Command): Promise<void> {
    this.#step++;
    const q = this.queue;
    const m = this.model;
    switch (command.op) {
      case 'add':
        if (!q.isShuttingDown) this.#record(command.key, 'added');
        q.add(command.key, command.cause === undefined ? undefined : { cause: command.cause });
        m.add(command.key, one(command.cause ?? manualCause));
        break;
      case 'addAfter':
        if (!q.isShuttingDown && command.delayMs <= 0) this.#record(command.key, 'added');
        q.addAfter(
          command.key,
          command.delayMs,
          command.cause === undefined ? undefined : { cause: command.cause },
        );
        m.addAfter(command.key, command.delayMs, command.cause ?? manualCause);
        break;
      case 'get': {
        const index = this.#pick(command.worker, (w) => w.pending === undefined && w.key === undefined);
        if (index === undefined) return;
        const abort = new AbortController();
        this.#worker(index).pending = abort;
        void q.get(abort.signal).then((key) => this.#received(index, abort, key));
        m.get(index);
        break;
      }
      case 'abort': {
        const index = this.#pick(command.worker, (w) => w.pending !== undefined);
        if (index === undefined) return;
        this.#worker(index).pending?.abort();
        m.abort(index);
        break;
      }
      case 'done': {
        const index = this.#pick(command.worker, (w) => w.key !== undefined);
        if (index === undefined) return;
        const w = this.#worker(index);
        const key = w.key as string;
        w.key = undefined;
        q.done(key);
        m.done(index);
        break;
      }
      case 'requeueAfter': {
        const index = this.#pick(command.worker, (w) => w.key !== undefined);
        if (index === undefined) return;
        const w = this.#worker(index);
        const key = w.key as string;
        w.key = undefined;
        if (!q.isShuttingDown && command.delayMs <= 0) this.#record(key, 'added');
        q.requeueAfter(key, command.delayMs, {
          keepCauses: command.keepCauses,
          ...(command.cause === undefined ? {} : { cause: command.cause }),
        });
        m.requeueAfter(index, command.delayMs, command.cause ?? requeueAfterCause, command.keepCauses);
        break;
      }
      case 'advance':
        m.advance(command.ms);
        await this.clock.advance(command.ms);
        break;
      case 'remove': {
        const removed = q.removeWhere((k) => k === command.key);
        const expected = m.remove(command.key);
        this.#record(command.key, 'removed');
        if (this.lockstep && removed !== expected) {
          this.#violation(`removeWhere(${command.key}) removed ${removed}, model ${expected}`);
        }
        break;
      }
      case 'shutDown':
        q.shutDown();
        m.shutDown();
        break;
    }
    // Let resolved gets reach their workers.
    for (let i = 0; i < 3; i++) await Promise.resolve();
    if (this.lockstep) this.#compare();
    if (this.violations.length > 0) throw new Error(this.violations.join('\n'));
  }

  /**
   * Fires every timer, then lets idle workers take ready keys and finishes held ones, until nothing
   * is left. Taking before finishing exposes a key that is ready while another worker holds it.
   */
  async drain(): Promise<void> {
    await this.run({ op: 'advance', ms: 1_000 });
    for (let round = 0; round < 100; round++) {
      let acted = false;
      for (let w = 0; w < WORKERS; w++) {
        const worker = this.#worker(w);
        if (worker.key !== undefined || worker.pending !== undefined || this.queue.length === 0) continue;
        await this.run({ op: 'get', worker: w });
        acted = true;
      }
      for (let w = 0; w < WORKERS; w++) {
        if (this.#worker(w).key === undefined) continue;
        await this.run({ op: 'done', worker: w });
        acted = true;
      }
      if (!acted) return;
    }
    throw new Error('drain did not settle');
  }

  events(key: string): TraceEvent[] {
    return this.trace.get(key) ?? [];
  }

  #received(worker: number, abort: AbortController, key: string | undefined): void {
    const w = this.#worker(worker);
    if (w.pending !== abort) this.#violation(`worker ${worker} got a result for a get it did not make`);
    w.pending = undefined;
    if (key === undefined) return;
    for (let other = 0; other < WORKERS; other++) {
      if (this.#worker(other).key === key) {
        this.#violation(`key ${key} handed to worker ${worker} while worker ${other} holds it`);
      }
    }
    w.key = key;
    this.#record(key, 'handedOut');
    // The run's causes: exactly those added since the key's previous hand-out (up to the cap).
    if (this.lockstep) this.#compareCauses(key, 'at hand-out');
  }

  #compareCauses(key: string, when: string): void {
    const actual = JSON.stringify(this.queue.causesOf(key));
    const expected = JSON.stringify(this.model.causesOf(key));
    if (actual !== expected) this.#violation(`causesOf(${key}) ${when} is ${actual}, model ${expected}`);
  }

  #compare(): void {
    const q = this.queue;
    const m = this.model;
    for (let w = 0; w < WORKERS; w++) {
      const worker = this.#worker(w);
      if (worker.key !== m.held.get(w)) {
        this.#violation(`worker ${w} holds ${worker.key}, model ${m.held.get(w)}`);
      }
      if ((worker.pending !== undefined) !== m.getters.includes(w)) {
        this.#violation(
          `worker ${w} pending ${worker.pending !== undefined}, model ${m.getters.includes(w)}`,
        );
      }
    }
    for (const key of KEYS) {
      if (q.has(key) !== m.has(key)) this.#violation(`has(${key}) is ${q.has(key)}, model ${m.has(key)}`);
      // Causes that arrive while a key runs never change the run's.
      this.#compareCauses(key, 'after the step');
    }
    // `getters` counts pending get() calls, which the model does not track.
    const { getters: _getters, ...actual } = q.stats();
    const expected = {
      adds: m.adds,
      retries: 0,
      droppedAfterShutdown: m.dropped,
      depth: m.queue.length,
      processing: m.processing.size,
      waiting: m.waiting.size,
      limitedPartitions: 0,
      saturatedPartitions: 0,
    };
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      this.#violation(`stats ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}`);
    }
    if (q.length !== m.queue.length) this.#violation(`length ${q.length}, model ${m.queue.length}`);
  }

  #record(key: string, event: TraceEvent): void {
    this.trace.get(key)?.push(event);
  }

  #violation(message: string): void {
    this.violations.push(`step ${this.#step}: ${message}`);
  }

  /** The first worker from `start` on (wrapping around) that `eligible` accepts. */
  #pick(start: number, eligible: (w: Worker) => boolean): number | undefined {
    for (let i = 0; i < WORKERS; i++) {
      const index = (start + i) % WORKERS;
      if (eligible(this.#worker(index))) return index;
    }
    return undefined;
  }

  #worker(index: number): Worker {
    return this.workers[index] as Worker;
  }
}

const keyArb = fc.constantFrom(...KEYS);
const workerArb = fc.integer({ min: 0, max: WORKERS - 1 });
const delayArb = fc.oneof(
  { arbitrary: fc.constantFrom(0, -1), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 40 }), weight: 1 },
);
/** No cause (the default), or one of 12 distinct causes, each built afresh (equal by value only). */
const causeArb: fc.Arbitrary<Cause | undefined> = fc.option(
  fc
    .record({ type: fc.constantFrom('added', 'modified', 'deleted'), rv: fc.integer({ min: 1, max: 4 }) })
    .map(
      ({ type, rv }): Cause => ({
        type,
        source: 'widgets',
        object: { kind: 'Widget', name: 'w', resourceVersion: String(rv) },
      }),
    ),
  { freq: 4, nil: undefined },
);

function commandArb(withShutDown: boolean): fc.Arbitrary<Command> {
  const arbs: fc.WeightedArbitrary<Command>[] = [
    { arbitrary: fc.record({ key: keyArb, cause: causeArb }).map((c) => ({ op: 'add', ...c })), weight: 6 },
    {
      arbitrary: fc
        .record({ key: keyArb, delayMs: delayArb, cause: causeArb })
        .map((c) => ({ op: 'addAfter', ...c })),
      weight: 3,
    },
    { arbitrary: workerArb.map((worker) => ({ op: 'get', worker })), weight: 6 },
    { arbitrary: workerArb.map((worker) => ({ op: 'abort', worker })), weight: 1 },
    { arbitrary: workerArb.map((worker) => ({ op: 'done', worker })), weight: 5 },
    {
      arbitrary: fc
        .record({ worker: workerArb, delayMs: delayArb, cause: causeArb, keepCauses: fc.boolean() })
        .map((c) => ({ op: 'requeueAfter', ...c })),
      weight: 2,
    },
    { arbitrary: fc.integer({ min: 0, max: 50 }).map((ms) => ({ op: 'advance', ms })), weight: 3 },
    { arbitrary: keyArb.map((key) => ({ op: 'remove', key })), weight: 1 },
  ];
  if (withShutDown) arbs.push({ arbitrary: fc.constant({ op: 'shutDown' }), weight: 1 });
  return fc.oneof(...arbs);
}

const scriptArb = (withShutDown: boolean): fc.Arbitrary<Command[]> =>
  fc.array(commandArb(withShutDown), { minLength: 1, maxLength: 60, size: 'max' });

/** Runs per property; raise it to fuzz longer, e.g. `WORKQUEUE_PROPERTY_RUNS=20000 npx vitest run …`. */
const RUNS = Number(process.env.WORKQUEUE_PROPERTY_RUNS ?? 300);

async function runScript(mode: Mode, lockstep: boolean, script: readonly Command[]): Promise<Harness> {
  const harness = new Harness(mode, lockstep);
  for (const command of script) await harness.run(command);
  return harness;
}

describe('work queue properties', () => {
  it.each(['client-go', 'openclarity'] as const)(
    'in %s mode the queue behaves like the reference model under random scripts of three workers',
    async (mode) => {
      await fc.assert(
        fc.asyncProperty(scriptArb(true), async (script) => {
          const harness = await runScript(mode, true, script);
          await harness.drain();
        }),
        { numRuns: RUNS },
      );
    },
  );

  it.each(['client-go', 'openclarity'] as const)(
    'in %s mode random interleavings never hand a key to two workers at once',
    async (mode) => {
      await fc.assert(
        fc.asyncProperty(scriptArb(true), async (script) => {
          // Without lockstep: the harness still fails the run when a get resolves with a key
          // that another worker holds.
          const harness = await runScript(mode, false, script);
          await harness.drain();
          for (const key of KEYS) expect(harness.queue.has(key)).toBe(false);
        }),
        { numRuns: RUNS },
      );
    },
  );

  it('every key added is handed out at least once after its last add, unless it was removed (no lost update)', async () => {
    await fc.assert(
      fc.asyncProperty(scriptArb(false), async (script) => {
        const harness = await runScript('client-go', false, script);
        await harness.drain();
        for (const key of KEYS) {
          const events = harness.events(key);
          const lastAdd = events.lastIndexOf('added');
          if (lastAdd < 0) continue;
          const after = events.slice(lastAdd + 1);
          expect(
            after.includes('handedOut') || after.includes('removed'),
            `${key}: ${events.join(' ')}`,
          ).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it.each(['client-go', 'openclarity'] as const)(
    'in %s mode a key is handed out at most once per window in which it was added',
    async (mode) => {
      await fc.assert(
        fc.asyncProperty(scriptArb(true), async (script) => {
          const harness = await runScript(mode, false, script);
          await harness.drain();
          for (const key of KEYS) {
            // A window is the time between two hand-outs of the key; a removal empties it.
            let addedInWindow = false;
            for (const event of harness.events(key)) {
              if (event === 'added') addedInWindow = true;
              else if (event === 'removed') addedInWindow = false;
              else {
                expect(addedInWindow, `${key}: ${harness.events(key).join(' ')}`).toBe(true);
                addedInWindow = false;
              }
            }
          }
        }),
        { numRuns: RUNS },
      );
    },
  );

  it('dedupe never loses the FIFO order of first adds', () => {
    const step = fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: 15 }).map((i) => `k${i}`), weight: 4 },
      { arbitrary: fc.constant(undefined), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
        const q = new WorkQueue<string>({ clock: new VirtualClock() });
        const handedOut: string[] = [];
        const firstAdds: string[] = [];
        for (const s of steps) {
          if (s === undefined) {
            const key = q.tryGet();
            if (key !== undefined) handedOut.push(key);
          } else {
            if (!firstAdds.includes(s)) firstAdds.push(s);
            q.add(s);
          }
        }
        for (let key = q.tryGet(); key !== undefined; key = q.tryGet()) handedOut.push(key);
        // No done(): a key handed out stays processing, so each key is handed out once, in the
        // order of its first add.
        expect(handedOut).toEqual(firstAdds);
      }),
      { numRuns: 300 },
    );
  });

  it('with bumps, removals and re-adds while processing, every get takes the oldest key of the highest priority and no partition is served twice while another waits at that priority', () => {
    type Op =
      | { readonly op: 'add'; readonly key: string; readonly priority: number }
      | { readonly op: 'get' }
      | { readonly op: 'done'; readonly index: number }
      | { readonly op: 'remove'; readonly key: string };
    const keyArb = fc.constantFrom('p/1', 'p/2', 'p/3', 'q/1', 'q/2', 'r/1', 'r/2', 's/1');
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      {
        arbitrary: fc
          .record({ key: keyArb, priority: fc.constantFrom(-1, 0, 1, 2) })
          .map((c) => ({ op: 'add' as const, ...c })),
        weight: 5,
      },
      { arbitrary: fc.constant({ op: 'get' as const }), weight: 4 },
      { arbitrary: fc.nat(7).map((index) => ({ op: 'done' as const, index })), weight: 3 },
      { arbitrary: keyArb.map((key) => ({ op: 'remove' as const, key })), weight: 1 },
    );
    const partitionOf = (key: string): string => key.slice(0, key.indexOf('/'));
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80, size: 'max' }), (ops) => {
        const q = new WorkQueue<string>({ clock: new VirtualClock(), partitionOf });
        // Model: queued keys with their priority and the order they joined that priority.
        const queued = new Map<string, { priority: number; seq: number }>();
        const processing: string[] = [];
        const dirty = new Map<string, number>();
        let seq = 0;
        // Per "priority/partition" with queued keys: how often each other partition was served
        // at that priority since this one was last served (or got keys).
        const served = new Map<string, Map<string, number>>();
        const live = (priority: number, partition: string): boolean =>
          [...queued].some(([k, v]) => v.priority === priority && partitionOf(k) === partition);
        const sync = (): void => {
          for (const lane of [...served.keys()]) {
            const [priority, partition] = lane.split('|') as [string, string];
            if (!live(Number(priority), partition)) served.delete(lane);
          }
          for (const [k, v] of queued) {
            const lane = `${v.priority}|${partitionOf(k)}`;
            if (!served.has(lane)) served.set(lane, new Map());
          }
        };
        const enqueue = (key: string, priority: number): void => {
          queued.set(key, { priority, seq: ++seq });
        };
        for (const op of ops) {
          if (op.op === 'add') {
            q.add(op.key, { priority: op.priority });
            const current = queued.get(op.key);
            if (current !== undefined) {
              if (op.priority > current.priority) enqueue(op.key, op.priority);
            } else if (processing.includes(op.key)) {
              dirty.set(op.key, Math.max(dirty.get(op.key) ?? Number.NEGATIVE_INFINITY, op.priority));
            } else {
              enqueue(op.key, op.priority);
            }
          } else if (op.op === 'get') {
            const key = q.tryGet();
            if (queued.size === 0) {
              expect(key).toBeUndefined();
              continue;
            }
            expect(key).toBeDefined();
            const got = queued.get(key as string);
            expect(got, `${key} is not queued`).toBeDefined();
            const { priority, seq: mine } = got as { priority: number; seq: number };
            const partition = partitionOf(key as string);
            for (const [k, v] of queued) {
              expect(v.priority, `${key} before higher ${k}`).toBeLessThanOrEqual(priority);
              if (v.priority === priority && partitionOf(k) === partition) {
                expect(v.seq, `${key} before older ${k}`).toBeGreaterThanOrEqual(mine);
              }
            }
            for (const [lane, counts] of served) {
              const [p, other] = lane.split('|') as [string, string];
              if (Number(p) !== priority || other === partition) continue;
              const n = (counts.get(partition) ?? 0) + 1;
              expect(n, `${partition} served twice while ${other} waited at ${priority}`).toBeLessThan(2);
              counts.set(partition, n);
            }
            served.get(`${priority}|${partition}`)?.clear();
            queued.delete(key as string);
            processing.push(key as string);
          } else if (op.op === 'done') {
            if (processing.length === 0) continue;
            const [key] = processing.splice(op.index % processing.length, 1) as [string];
            q.done(key);
            const again = dirty.get(key);
            dirty.delete(key);
            if (again !== undefined) enqueue(key, again);
          } else {
            q.removeWhere((k) => k === op.key);
            queued.delete(op.key);
            dirty.delete(op.key);
          }
          sync();
          expect(q.length).toBe(queued.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('ready keys are served highest priority first, round-robin across partitions, FIFO within a partition', () => {
    const addArb = fc.record({
      partition: fc.constantFrom('p', 'q', 'r', 's'),
      priority: fc.constantFrom(-100, 0, 5, 100),
    });
    fc.assert(
      fc.property(fc.array(addArb, { maxLength: 60 }), (adds) => {
        const q = new WorkQueue<string>({
          clock: new VirtualClock(),
          partitionOf: (key) => key.slice(0, key.indexOf('/')),
        });
        const keys = adds.map((a, i) => ({ ...a, key: `${a.partition}/${i}` }));
        for (const k of keys) q.add(k.key, { priority: k.priority });
        const handedOut: string[] = [];
        for (let key = q.tryGet(); key !== undefined; key = q.tryGet()) handedOut.push(key);

        // Expected: per priority (high to low), rounds over the partitions in the order they
        // first appeared at that priority; each round takes the next key of every partition
        // that still has one.
        const expected: string[] = [];
        const priorities = [...new Set(keys.map((k) => k.priority))].sort((a, b) => b - a);
        for (const priority of priorities) {
          const lanes = new Map<string, string[]>();
          for (const k of keys) {
            if (k.priority !== priority) continue;
            const lane = lanes.get(k.partition) ?? [];
            lane.push(k.key);
            lanes.set(k.partition, lane);
          }
          for (let round = 0; [...lanes.values()].some((lane) => lane.length > round); round++) {
            for (const lane of lanes.values()) if (lane.length > round) expected.push(lane[round] as string);
          }
        }
        expect(handedOut).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
