/**
 * The merged seed statements of `reference/seed-semantics.md` §6, one test each, titled with the
 * statement's number. Where Converge deliberately does something other than a seed, the title
 * says "adopted" and the test proves what Converge does. Everything runs on a virtual clock,
 * through the runtime's public API only.
 *
 * Fuller tests of most statements live next to the code (workqueue/*.test.ts for A–C,
 * controller/controller.test.ts for C–E and K, dynamic/dynamic-controller.test.ts for G,
 * watcher/*.test.ts for C5, E2 and H, ownership/*.test.ts for I); these are the compact ones.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AlreadyStartedError,
  ConflictError,
  Controller,
  type ControllerOptions,
  ControllerShutDownError,
  createEventRecorder,
  DynamicController,
  defaultControllerRateLimiter,
  defaultFinalizerSupplier,
  done,
  EventChannel,
  type EventsV1Event,
  ExponentialRateLimiter,
  enqueueForLabelOwner,
  enqueueForObject,
  eventsV1Type,
  exponentialBackoffRetryPolicy,
  FinalizerPatchError,
  fromEventSource,
  generationChanged,
  Informer,
  InformerController,
  InformerRegistry,
  InvalidFinalizerError,
  ignoreNotFound,
  type KindRequest,
  type KubeObject,
  kumoriOwnerLabels,
  Manager,
  maxRetries,
  NonErrorThrownError,
  NotFoundError,
  noopLogger,
  noRetries,
  type ObjectEvent,
  type ObjectKey,
  OpinionatedWatcher,
  type OpinionatedWatcherOptions,
  OrphanCollector,
  operationOf,
  ownerLabels,
  ownerOf,
  type ReconcileContext,
  type ReconcileReturn,
  type RequestQueue,
  RequeueAfterError,
  type ResourceType,
  RunnableFailedError,
  requeue,
  requeueAfter,
  requeueNow,
  resourceType,
  ShutdownTimeoutError,
  type Source,
  SourceSyncError,
  setOwnerLabels,
  TerminalError,
  UnavailableError,
  WorkQueue,
} from '../src/index.ts';
import { ReferenceBackend, suiteTypes } from '../src/testing/backend-suite/index.ts';
import { FakeBackend, settle, VirtualClock } from '../src/testing/index.ts';

// --- fixtures -----------------------------------------------------------------------------------

const kind = (name: string, namespaced = true): ResourceType =>
  resourceType({
    group: 'example.com',
    version: 'v1',
    kind: name,
    plural: `${name.toLowerCase()}s`,
    namespaced,
  });
const widgets = kind('Widget');
const gadgets = kind('Gadget');
const globals = kind('Global', false);

function obj(
  type: ResourceType,
  name: string,
  meta: Partial<KubeObject['metadata']> = {},
  spec: unknown = {},
): KubeObject {
  return {
    apiVersion: `${type.group}/${type.version}`,
    kind: type.kind,
    metadata: { name, ...(type.namespaced ? { namespace: 'default' } : {}), generation: 1, ...meta },
    spec,
  } as KubeObject;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A source whose sync the test opens (or fails), and which adds keys on demand. */
function keySource(name = 'keys') {
  let queue: RequestQueue<string> | undefined;
  let open!: () => void;
  let fail!: (error: unknown) => void;
  const synced = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  const source: Source<string> = {
    name,
    start(signal, q) {
      queue = q;
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    waitForSync: () => synced,
  };
  return {
    source,
    push: (key: string) => queue?.add(key),
    sync: () => open(),
    fail: (e: unknown) => fail(e),
  };
}

interface Call {
  readonly key: string;
  readonly at: number;
  readonly failures: number;
}

/**
 * A running `Controller<string>` on a virtual clock whose reconciler records every call and then
 * runs `reconcile` with the call's number (from 1).
 */
function controllerOf(
  reconcile: (
    key: string,
    context: ReconcileContext,
    n: number,
  ) => ReconcileReturn | Promise<ReconcileReturn>,
  extra: Partial<ControllerOptions<string>> = {},
) {
  const clock = new VirtualClock();
  const calls: Call[] = [];
  const controller = new Controller<string>({
    name: 'seed',
    clock,
    reconciler: (key, context) => {
      calls.push({ key, at: clock.now(), failures: context.failures });
      return reconcile(key, context, calls.length);
    },
    ...extra,
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  const finish = async (): Promise<void> => {
    stop.abort();
    await running;
  };
  return { clock, calls, controller, stop, running, finish };
}

/** The calls of a controller that is given the key 'k' once and runs for `ms`. */
async function drive(
  reconcile: (
    key: string,
    context: ReconcileContext,
    n: number,
  ) => ReconcileReturn | Promise<ReconcileReturn>,
  ms: number,
  extra: Partial<ControllerOptions<string>> = {},
): Promise<Call[]> {
  const c = controllerOf(reconcile, extra);
  c.controller.queue.add('k');
  await c.clock.advance(ms);
  await c.finish();
  return c.calls;
}

const fail = (): never => {
  throw new Error('boom');
};
const throws = (error: unknown) => (): never => {
  throw error;
};
/** A reconcile that takes the n-th step on its n-th call, and is done after the last. */
const scripted =
  (...steps: (() => ReconcileReturn)[]) =>
  (_key: string, _context: ReconcileContext, n: number): ReconcileReturn =>
    (steps[n - 1] ?? done)();

function dynamic(options: Partial<ConstructorParameters<typeof DynamicController>[0]> = {}) {
  const clock = new VirtualClock();
  const backend = new FakeBackend({ clock });
  const controller = new DynamicController({ backend, clock, ...options });
  const stop = new AbortController();
  return { clock, backend, controller, stop };
}
const label = (r: KindRequest): string => `${r.kind.resource}:${r.namespace}/${r.name}`;

// --- A. Work queue core -------------------------------------------------------------------------

describe('A. work queue core', () => {
  it('A1 a key queued several times before it starts is handed out once, at the position of its first add', () => {
    const queue = new WorkQueue<string>();
    for (const key of ['a', 'b', 'a', 'c', 'a']) queue.add(key);
    expect(queue.length).toBe(3);
    expect([queue.tryGet(), queue.tryGet(), queue.tryGet(), queue.tryGet()]).toEqual([
      'a',
      'b',
      'c',
      undefined,
    ]);
  });

  it('A2 no key is processed concurrently with itself, even with several workers on one queue', async () => {
    let sameKey = 0;
    let all = 0;
    let maxSameKey = 0;
    let maxAll = 0;
    const c = controllerOf(
      async (key) => {
        if (key === 'k') maxSameKey = Math.max(maxSameKey, ++sameKey);
        maxAll = Math.max(maxAll, ++all);
        await c.clock.sleep(100);
        all--;
        if (key === 'k') sameKey--;
      },
      { maxConcurrentReconciles: 4 },
    );
    for (let t = 0; t < 10; t++) {
      c.controller.queue.add('k');
      c.controller.queue.add(`other-${t}`);
      await c.clock.advance(30);
    }
    await c.clock.advance(1000);
    expect([maxSameKey, maxAll]).toEqual([1, 4]);
    expect(c.calls.filter((x) => x.key === 'k').length).toBeGreaterThan(2);
    await c.finish();
  });

  it('A3 enqueue while processing runs exactly once more afterwards, never concurrently (client-go adopted; openclarity drop is opt-in)', () => {
    const queue = new WorkQueue<string>();
    queue.add('k');
    expect(queue.tryGet()).toBe('k');
    for (let i = 0; i < 5; i++) queue.add('k');
    expect(queue.tryGet()).toBeUndefined();
    queue.done('k');
    expect(queue.tryGet()).toBe('k');
    queue.done('k');
    expect(queue.tryGet()).toBeUndefined();

    const dropping = new WorkQueue<string>({ coalesceWhileProcessing: false });
    dropping.add('k');
    dropping.tryGet();
    dropping.add('k');
    dropping.done('k');
    expect(dropping.tryGet()).toBeUndefined();
  });

  it('A4 dequeue order is FIFO by first enqueue; a key re-added while processing goes to the tail at done', () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    queue.add('b');
    expect(queue.tryGet()).toBe('a');
    queue.add('a');
    queue.add('c');
    queue.done('a');
    expect([queue.tryGet(), queue.tryGet(), queue.tryGet()]).toEqual(['b', 'c', 'a']);
  });

  it('A5 length counts only queued keys; has covers queued, processing and waiting keys', () => {
    const queue = new WorkQueue<string>({ clock: new VirtualClock() });
    queue.add('processing');
    queue.tryGet();
    queue.add('queued');
    queue.addAfter('waiting', 100);
    expect([queue.length, queue.processingCount, queue.waitingCount]).toEqual([1, 1, 1]);
    expect(['processing', 'queued', 'waiting', 'unknown'].map((k) => queue.has(k))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    queue.done('processing');
    expect(queue.has('processing')).toBe(false);
  });

  it('A6 pending dequeues resolve as soon as keys are available, none lost, including delayed keys coming due', async () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    const gaveUp = new AbortController();
    const abandoned = queue.get(gaveUp.signal);
    gaveUp.abort();
    expect(await abandoned).toBeUndefined();
    const got: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) void queue.get().then((key) => got.push(key));
    queue.add('a');
    queue.add('b');
    queue.add('c');
    queue.addAfter('d', 50);
    await clock.advance(0);
    expect(got).toEqual(['a', 'b', 'c']);
    await clock.advance(50);
    expect(got).toEqual(['a', 'b', 'c', 'd']);
  });
});

// --- B. Delayed enqueue -------------------------------------------------------------------------

describe('B. delayed enqueue', () => {
  it('B1 enqueueAfter with a delay of 0 or less is a plain enqueue', () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    queue.addAfter('zero', 0);
    queue.addAfter('negative', -5);
    expect([queue.length, queue.waitingCount]).toEqual([2, 0]);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('B2 a waiting key delayed again keeps the earliest deadline (client-go); with hold the first schedule wins (openclarity)', async () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    queue.addAfter('k', 100);
    queue.addAfter('k', 30);
    queue.addAfter('k', 500);
    await clock.advance(29);
    expect(queue.length).toBe(0);
    await clock.advance(1);
    expect(queue.length).toBe(1);

    const held = new WorkQueue<string>({ clock, hold: true });
    held.addAfter('k', 100);
    held.addAfter('k', 30);
    await clock.advance(99);
    expect(held.length).toBe(0);
    await clock.advance(1);
    expect(held.length).toBe(1);
  });

  it('B3 a plain enqueue of a waiting key queues it at once and the timer adds it again (client-go); with hold it is ignored', async () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    queue.addAfter('k', 100);
    queue.add('k');
    expect(queue.tryGet()).toBe('k');
    queue.done('k');
    await clock.advance(100);
    expect(queue.tryGet()).toBe('k');

    const held = new WorkQueue<string>({ clock, hold: true });
    held.addAfter('k', 100);
    held.add('k');
    expect(held.tryGet()).toBeUndefined();
    await clock.advance(100);
    expect(held.tryGet()).toBe('k');
  });

  it('B4 enqueueAfter of a queued or processing key still sets a timer, so the key runs again (client-go); with hold it is a no-op', async () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    queue.add('queued');
    queue.addAfter('queued', 50);
    queue.add('processing');
    queue.addAfter('processing', 50);
    expect(queue.waitingCount).toBe(2);
    expect([queue.tryGet(), queue.tryGet()]).toEqual(['queued', 'processing']);
    queue.done('queued');
    queue.done('processing');
    await clock.advance(50);
    expect([queue.tryGet(), queue.tryGet()].sort()).toEqual(['processing', 'queued']);

    const held = new WorkQueue<string>({ clock, hold: true });
    held.add('k');
    held.addAfter('k', 50);
    expect(held.waitingCount).toBe(0);
  });

  it('B5 requeueAfter from inside processing finishes the key and schedules it in one step', async () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    queue.add('k');
    queue.tryGet();
    queue.requeueAfter('k', 100);
    expect([queue.processingCount, queue.waitingCount, queue.has('k')]).toEqual([0, 1, true]);
    await clock.advance(100);
    expect(queue.tryGet()).toBe('k');

    // With hold, an add that arrived while the key ran cannot slip in before the requeue's time.
    const held = new WorkQueue<string>({ clock, hold: true });
    held.add('k');
    held.tryGet();
    held.add('k');
    held.requeueAfter('k', 100);
    expect(held.tryGet()).toBeUndefined();
    await clock.advance(100);
    expect(held.tryGet()).toBe('k');
  });

  it('B6 after shutdown delayed keys never fire and new enqueues and enqueueAfters are ignored', async () => {
    const clock = new VirtualClock();
    const queue = new WorkQueue<string>({ clock });
    queue.addAfter('a', 100);
    queue.shutDown();
    queue.add('b');
    queue.addAfter('c', 10);
    expect(clock.nextTimerAt()).toBeUndefined();
    await clock.advance(1000);
    expect(await queue.get()).toBeUndefined();
    expect(queue.stats()).toMatchObject({ depth: 0, waiting: 0, droppedAfterShutdown: 2 });
  });
});

// --- C. Retry and backoff -----------------------------------------------------------------------

describe('C. retry and backoff', () => {
  it('C1 per-key exponential backoff base·2^failures capped at max, taking the max with a 10 qps burst 100 bucket', async () => {
    const calls = await drive(fail, 80);
    expect(calls.map((c) => c.at)).toEqual([0, 5, 15, 35, 75]);
    expect(calls.map((c) => c.failures)).toEqual([0, 1, 2, 3, 4]);

    const capped = new ExponentialRateLimiter({ baseDelayMs: 200, maxDelayMs: 1_000_000 });
    const delays = Array.from({ length: 20 }, () => capped.when('k'));
    expect(delays.slice(0, 3)).toEqual([200, 400, 800]);
    expect(delays.at(-1)).toBe(1_000_000);

    const limiter = defaultControllerRateLimiter(new VirtualClock());
    const first = Array.from({ length: 101 }, (_, i) => limiter.when(`key-${i}`));
    expect(first.slice(0, 100).every((d) => d === 5)).toBe(true);
    expect(first[100]).toBe(100);
  });

  it('C2 a success and a requeueAfter reset the failure count; requeue() and requeueNow() keep it', async () => {
    const calls = await drive(
      scripted(fail, fail, () => requeueAfter(50), fail, requeueNow, requeue),
      1000,
    );
    expect(calls.map((c) => c.failures)).toEqual([0, 1, 2, 0, 1, 1, 2]);
  });

  it('C3 (adopted: pluggable retry policy) unlimited by default, maxRetries(n) gives 1 + n calls, grafana exponential (5 s, 5) 7 calls, noRetries 1', async () => {
    const hour = 3_600_000;
    expect((await drive(fail, hour)).length).toBeGreaterThan(15);
    expect((await drive(fail, hour, { retryPolicy: maxRetries(2) })).length).toBe(3);
    const grafana = await drive(fail, hour, { retryPolicy: exponentialBackoffRetryPolicy(5000, 5) });
    expect(grafana.map((c) => c.at / 1000)).toEqual([0, 5, 15, 35, 75, 155, 315]);
    expect((await drive(fail, hour, { retryPolicy: noRetries })).length).toBe(1);
  });

  it('C4 a key dropped after max retries runs again only on a new enqueue, with its failure count back at 0', async () => {
    const c = controllerOf(fail, { retryPolicy: maxRetries(1) });
    c.controller.queue.add('k');
    await c.clock.advance(60_000);
    expect(c.calls).toHaveLength(2);
    c.controller.queue.add('k');
    await c.clock.advance(0);
    expect(c.calls.map((x) => x.failures)).toEqual([0, 1, 0]);
    await c.finish();
  });

  it('C5 (adopted: client-go in the queue) an enqueue during backoff runs the key at once keeping its failures; InformerController drops pending retries on a new event (grafana)', async () => {
    const c = controllerOf(fail, { rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 1000 }) });
    c.controller.queue.add('k');
    await c.clock.advance(10);
    c.controller.queue.add('k');
    await c.clock.advance(0);
    expect(c.calls.map((x) => [x.at, x.failures])).toEqual([
      [0, 0],
      [10, 1],
    ]);
    await c.finish();

    const clock = new VirtualClock();
    const events = new EventChannel<KubeObject>();
    const informerController = new InformerController({ clock });
    informerController.addInformer(events, 'Widget');
    const seen: string[] = [];
    informerController.addWatcher(
      {
        add: () => {
          seen.push('add');
          throw new Error('add fails');
        },
        update: () => void seen.push('update'),
      },
      'Widget',
    );
    const stop = new AbortController();
    const run = informerController.start(stop.signal);
    const w = obj(widgets, 'w');
    events.create(w);
    await clock.advance(1000);
    expect(informerController.stats().pendingRetries).toBe(1);
    events.update(w, obj(widgets, 'w', { generation: 2 }));
    await clock.advance(600_000);
    expect(seen).toEqual(['add', 'update']);
    expect(informerController.stats().pendingRetries).toBe(0);
    stop.abort();
    await run;
  });
});

// --- D. Handler result classification ------------------------------------------------------------

describe('D. result classification', () => {
  it('D1 an error beats a requeueAfter the reconcile had decided on: rate-limited retry, the requeueAfter is lost', async () => {
    const calls = await drive((_k, _c, n) => {
      const decided = requeueAfter(10_000);
      if (n < 3) throw new Error('failed after deciding');
      return decided;
    }, 100);
    expect(calls.map((c) => c.at)).toEqual([0, 5, 15]);
  });

  it('D2 requeue() is a rate-limited requeue; requeueNow() re-adds at once without throttling', async () => {
    const limited = await drive((_k, _c, n) => (n < 4 ? requeue() : done()), 1000);
    expect(limited.map((c) => c.at)).toEqual([0, 5, 15, 35]);
    const now = await drive((_k, _c, n) => (n < 4 ? requeueNow() : done()), 1000);
    expect(now.map((c) => c.at)).toEqual([0, 0, 0, 0]);
  });

  it('D3 requeueAfter(d) without error forgets the failure count, then runs again exactly d later', async () => {
    const calls = await drive((_k, _c, n) => (n < 3 ? fail() : n === 3 ? requeueAfter(500) : done()), 2000);
    expect(calls.map((c) => [c.at, c.failures])).toEqual([
      [0, 0],
      [5, 1],
      [15, 2],
      [515, 0],
    ]);
  });

  it("D4 kro's classes match through the cause chain: TerminalError drops, RequeueAfterError(0) re-adds at once, RequeueAfterError(d) waits d; (adopted) NotFound is not special", async () => {
    const wrap = (cause: Error): Error => new Error('wrapped', { cause });
    const terminal = await drive(throws(wrap(new TerminalError('bad spec'))), 60_000);
    expect(terminal).toHaveLength(1);
    const now = await drive(scripted(fail, throws(wrap(new RequeueAfterError(0)))), 1000);
    expect(now.map((c) => [c.at, c.failures])).toEqual([
      [0, 0],
      [5, 1],
      [5, 1],
    ]);
    const after = await drive(scripted(throws(wrap(new RequeueAfterError(250, 'not ready')))), 1000);
    expect(after.map((c) => c.at)).toEqual([0, 250]);
    // A NotFoundError thrown is retried like any error; ignoreNotFound makes a read of a gone object succeed.
    const notFound = await drive(throws(new NotFoundError('widgets "k" not found')), 6);
    expect(notFound).toHaveLength(2);
    const ignored = await drive(async () => {
      await Promise.reject(new NotFoundError('gone')).catch(ignoreNotFound);
    }, 60_000);
    expect(ignored).toHaveLength(1);
  });

  it('D5 a throw, a rejected promise or a non-Error throw is a retried error, and the worker goes on', async () => {
    const errors: Error[] = [];
    const failed = new Set<string>();
    const c = controllerOf(
      (key) => {
        if (key === 'after' || failed.has(key)) return done();
        failed.add(key);
        if (key === 'sync') throw new Error('sync');
        if (key === 'async') return Promise.reject(new Error('async'));
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the behaviour under test
        throw 'a string';
      },
      { onError: (e) => errors.push(e) },
    );
    for (const key of ['sync', 'async', 'value', 'after']) c.controller.queue.add(key);
    await c.clock.advance(1000);
    expect(c.calls.map((x) => x.key)).toEqual(['sync', 'async', 'value', 'after', 'sync', 'async', 'value']);
    expect(errors.map((e) => e.constructor)).toEqual([Error, Error, NonErrorThrownError]);
    await c.finish();
  });

  it('D6 the retry: none policy (noRetries) logs a failure and completes the request: it runs again only when fed again', async () => {
    const errors: Error[] = [];
    const c = controllerOf(fail, { retryPolicy: noRetries, onError: (e) => errors.push(e) });
    c.controller.queue.add('k');
    await c.clock.advance(600_000);
    expect(c.calls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    c.controller.queue.add('k');
    await c.clock.advance(0);
    expect(c.calls).toHaveLength(2);
    await c.finish();
  });
});

// --- E. Workers and concurrency -----------------------------------------------------------------

describe('E. workers and concurrency', () => {
  it('E1 workers bound the concurrent reconciles over all keys (default 1), and over all kinds in the dynamic controller', async () => {
    const peak = async (workers?: number): Promise<number> => {
      let active = 0;
      let max = 0;
      const c = controllerOf(
        async () => {
          max = Math.max(max, ++active);
          await c.clock.sleep(100);
          active--;
        },
        workers === undefined ? {} : { maxConcurrentReconciles: workers },
      );
      for (let i = 0; i < 10; i++) c.controller.queue.add(`k${i}`);
      await c.clock.advance(2000);
      expect(c.calls).toHaveLength(10);
      await c.finish();
      return max;
    };
    expect(await peak()).toBe(1);
    expect(await peak(3)).toBe(3);

    const { clock, backend, controller, stop } = dynamic({ workers: 2 });
    for (const type of [widgets, gadgets]) for (const n of ['a', 'b', 'c']) backend.set(type, obj(type, n));
    const run = controller.start(stop.signal);
    let active = 0;
    let max = 0;
    let calls = 0;
    const handler = async (): Promise<void> => {
      calls++;
      max = Math.max(max, ++active);
      await clock.sleep(100);
      active--;
    };
    await controller.serve(widgets, handler);
    await controller.serve(gadgets, handler);
    await clock.advance(1000);
    expect([calls, max]).toEqual([6, 2]);
    stop.abort();
    await run;
  });

  it('E2 (adopted: a lane per object, not hash mod N) the events of one object are handled in order, one at a time, other objects in parallel', async () => {
    const clock = new VirtualClock();
    const events = new EventChannel<KubeObject>();
    const informerController = new InformerController({ clock, workers: 4 });
    informerController.addInformer(events, 'Widget');
    const started: string[] = [];
    informerController.addWatcher(
      {
        update: async (_old, o) => {
          started.push(`${o.metadata.name}${o.metadata.generation}@${clock.now()}`);
          await clock.sleep(100);
        },
      },
      'Widget',
    );
    const stop = new AbortController();
    const run = informerController.start(stop.signal);
    for (const g of [2, 3, 4]) events.update(obj(widgets, 'a'), obj(widgets, 'a', { generation: g }));
    events.update(obj(widgets, 'b'), obj(widgets, 'b', { generation: 2 }));
    await clock.advance(1000);
    expect(started).toEqual(['a2@0', 'b2@0', 'a3@100', 'a4@200']);
    stop.abort();
    await run;
  });

  it('E3 (adopted: no 1 s worker pause) after an error the worker takes the next request at once', async () => {
    const c = controllerOf((key) => (key === 'a' ? fail() : done()));
    c.controller.queue.add('a');
    c.controller.queue.add('b');
    await c.clock.advance(0);
    expect(c.calls.map((x) => [x.key, x.at])).toEqual([
      ['a', 0],
      ['b', 0],
    ]);
    await c.finish();
  });
});

// --- F. Event sources, filtering and resync -----------------------------------------------------

describe('F. event sources, filtering and resync', () => {
  it('F1 generationChanged drops same-generation updates but lets generation 0 through; on by default for the dynamic controller and opinionated watcher, off for the generic controller', async () => {
    const update = (from: number, to: number): ObjectEvent<KubeObject> => ({
      type: 'update',
      oldObject: obj(widgets, 'w', { generation: from }),
      object: obj(widgets, 'w', { generation: to }),
    });
    const predicate = generationChanged<KubeObject>();
    expect([update(1, 1), update(1, 2), update(0, 0)].map((e) => predicate(e))).toEqual([false, true, true]);

    // Dynamic controller: a status-only write (same generation) does not reconcile.
    const d = dynamic();
    d.backend.set(widgets, obj(widgets, 'w'));
    const run = d.controller.start(d.stop.signal);
    const reconciled: number[] = [];
    await d.controller.serve(widgets, (_r, { cache }) => {
      reconciled.push(cache.get({ namespace: 'default', name: 'w' })?.metadata.generation ?? -1);
    });
    await settle();
    d.backend.set(widgets, { ...obj(widgets, 'w'), status: { ready: true } } as KubeObject);
    await settle();
    d.backend.set(widgets, obj(widgets, 'w', { generation: 2 }));
    await settle();
    expect(reconciled).toEqual([1, 2]);
    d.stop.abort();
    await run;

    // Opinionated watcher: an update of the same generation calls nothing.
    const calls: string[] = [];
    const watcher = new OpinionatedWatcher({
      type: widgets,
      client: { get: () => fail(), patch: () => fail() },
      handlers: { update: () => void calls.push('update'), add: () => void calls.push('add') },
    });
    const withFinalizer = obj(widgets, 'w', { finalizers: [watcher.finalizer] });
    await watcher.update(withFinalizer, withFinalizer, {
      signal: new AbortController().signal,
      logger: noopLogger,
      attempt: 0,
    });
    expect(calls).toEqual([]);

    // Generic controller: no predicate unless given, so the same-generation update reconciles.
    const events = new EventChannel<KubeObject>();
    const g = new Controller<ObjectKey>({
      name: 'generic',
      clock: d.clock,
      sources: [fromEventSource(events, enqueueForObject())],
      reconciler: () => void calls.push('reconcile'),
    });
    const stop = new AbortController();
    const running = g.start(stop.signal);
    await d.clock.advance(0);
    events.update(obj(widgets, 'w'), obj(widgets, 'w'));
    await d.clock.advance(0);
    expect(calls).toEqual(['reconcile']);
    stop.abort();
    await running;
  });

  it('F2 a resync delivers update(old, new) for every cached object with old.resourceVersion === new.resourceVersion, marked isResync', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(widgets, obj(widgets, 'a'));
    backend.set(widgets, obj(widgets, 'b'));
    const informer = new Informer({ backend, type: widgets, clock, resyncPeriodMs: 10_000 });
    const seen: ObjectEvent<KubeObject>[] = [];
    informer.subscribe((e) => seen.push(e));
    const stop = new AbortController();
    const run = informer.start(stop.signal);
    await settle();
    seen.length = 0;
    await clock.advance(10_000);
    await settle();
    expect(seen.map((e) => (e.type === 'update' ? [e.object.metadata.name, e.isResync] : e.type))).toEqual([
      ['a', true],
      ['b', true],
    ]);
    for (const e of seen) {
      if (e.type !== 'update') continue;
      expect(e.oldObject.metadata.resourceVersion).toBe(e.object.metadata.resourceVersion);
    }
    stop.abort();
    await run;
  });

  it('F3 a delete missed during a relist (tombstone) still produces a key, through the informer and the handlers', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(widgets, obj(widgets, 'kept'));
    backend.set(widgets, obj(widgets, 'gone'));
    const informer = new Informer({ backend, type: widgets, clock });
    const keys: string[] = [];
    const controller = new Controller<ObjectKey>({
      name: 'tombstones',
      clock,
      sources: [fromEventSource(informer, enqueueForObject())],
      reconciler: (key, { causes }) => void keys.push(`${key.name}:${causes.map((c) => c.type).join()}`),
    });
    const stop = new AbortController();
    const run = controller.start(stop.signal);
    await settle();
    keys.length = 0;
    // The watch is lost with its events, and the history with it: the informer must relist.
    backend.dropWatches({ discardQueued: true });
    backend.remove(widgets, { namespace: 'default', name: 'gone' });
    backend.compact();
    await clock.advance(60_000);
    await settle();
    expect(keys).toEqual(['gone:deleted']);

    const added: ObjectKey[] = [];
    const queue: RequestQueue<ObjectKey> = { add: (k) => void added.push(k), addAfter: () => undefined };
    const tombstone: ObjectEvent<KubeObject> = {
      type: 'delete',
      object: obj(widgets, 'x'),
      finalStateUnknown: true,
    };
    enqueueForObject().handle(tombstone, queue);
    expect(added).toEqual([{ namespace: 'default', name: 'x' }]);
    stop.abort();
    await run;
  });

  it('F4 (adopted: one selector string) label requirements are ANDed and applied to both list and watch; none means everything; namespace "" means all', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    const labelled = (name: string, namespace: string, labels: Record<string, string>) =>
      backend.set(widgets, obj(widgets, name, { namespace, labels }));
    labelled('both', 'one', { app: 'web', tier: 'front' });
    labelled('both-too', 'two', { app: 'web', tier: 'front' });
    labelled('app-only', 'one', { app: 'web' });
    const names = async (labelSelector?: string): Promise<string[]> => {
      const informer = new Informer({
        backend,
        type: widgets,
        clock,
        namespace: '',
        initialList: 'paginated',
        ...(labelSelector === undefined ? {} : { labelSelector }),
      });
      const stop = new AbortController();
      const run = informer.start(stop.signal);
      await settle();
      labelled('late', 'three', { app: 'web', tier: 'front' });
      labelled('late-app-only', 'three', { app: 'web' });
      await settle();
      const result = informer.cache.list().map((o) => o.metadata.name ?? '');
      stop.abort();
      await run;
      return result.sort();
    };
    expect(await names('app=web,tier=front')).toEqual(['both', 'both-too', 'late']);
    expect(backend.listCalls.at(-1)?.labelSelector).toBe('app=web,tier=front');
    expect(backend.watchCalls.at(-1)?.labelSelector).toBe('app=web,tier=front');
    expect(await names()).toEqual(['app-only', 'both', 'both-too', 'late', 'late-app-only']);
  });

  it('F5 several informers of a kind feed the same handlers: the queue dedupes their keys; the InformerController handles each (grafana)', async () => {
    const clock = new VirtualClock();
    const first = new EventChannel<KubeObject>({ synced: false });
    const second = new EventChannel<KubeObject>({ synced: false });
    const reconciled: string[] = [];
    const controller = new Controller<ObjectKey>({
      name: 'fan-in',
      clock,
      sources: [fromEventSource(first, enqueueForObject()), fromEventSource(second, enqueueForObject())],
      reconciler: (key) => void reconciled.push(key.name),
    });
    const stop = new AbortController();
    const run = controller.start(stop.signal);
    await clock.advance(0);
    first.create(obj(widgets, 'w'));
    second.create(obj(widgets, 'w'));
    first.markSynced();
    second.markSynced();
    await clock.advance(0);
    expect(reconciled).toEqual(['w']);
    stop.abort();
    await run;

    const handled: string[] = [];
    const informerController = new InformerController({ clock });
    informerController.addInformer(first, 'Widget');
    informerController.addInformer(second, 'Widget');
    informerController.addWatcher({ add: (o) => void handled.push(o.metadata.name ?? '') }, 'Widget');
    const stop2 = new AbortController();
    const run2 = informerController.start(stop2.signal);
    first.create(obj(widgets, 'w'));
    second.create(obj(widgets, 'w'));
    await clock.advance(0);
    expect(handled).toEqual(['w', 'w']);
    stop2.abort();
    await run2;
  });
});

// --- G. Dynamic GVR serving ---------------------------------------------------------------------

describe('G. dynamic kinds', () => {
  it('G1 serve resolves only after the kind synced, with every existing object enqueued; a kind that does not sync is rejected and not served', async () => {
    const { clock, backend, controller, stop } = dynamic({ syncTimeoutMs: 1000 });
    for (const n of ['a', 'b']) backend.set(widgets, obj(widgets, n));
    const run = controller.start(stop.signal);
    const seen: string[] = [];
    await controller.serve(widgets, (r) => void seen.push(label(r)));
    expect(controller.allSynced()).toBe(true);
    await settle();
    expect(seen.sort()).toEqual(['widgets:default/a', 'widgets:default/b']);

    backend.set(gadgets, obj(gadgets, 'g'));
    backend.holdInitialEventsEnd();
    const serving = controller.serve(gadgets, (r) => void seen.push(label(r)));
    const rejected = expect(serving).rejects.toBeInstanceOf(SourceSyncError);
    await clock.advance(1000);
    await rejected;
    await settle();
    expect(controller.served().map((t) => t.kind)).toEqual(['Widget']);
    expect(backend.openWatches).toBe(1);
    expect(seen.filter((s) => s.startsWith('gadgets'))).toEqual([]);
    stop.abort();
    await run;
  });

  it('G2 serving a served kind again replaces its handler and enqueues every cached object again', async () => {
    const { backend, controller, stop } = dynamic();
    for (const n of ['a', 'b']) backend.set(widgets, obj(widgets, n));
    const run = controller.start(stop.signal);
    const first: string[] = [];
    const second: string[] = [];
    await controller.serve(widgets, (r) => void first.push(r.name));
    await settle();
    await controller.serve(widgets, (r) => void second.push(r.name));
    await settle();
    expect([first.sort(), second.sort()]).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    stop.abort();
    await run;
  });

  it('G3 stopServing a kind that is not served resolves and changes nothing', async () => {
    const { backend, controller, stop } = dynamic();
    const run = controller.start(stop.signal);
    await controller.serve(widgets, () => done());
    await expect(controller.stopServing(gadgets)).resolves.toBeUndefined();
    expect([controller.served().length, backend.openWatches]).toEqual([1, 1]);
    stop.abort();
    await run;
  });

  it("G4 stopServing stops the watch and drops the kind's queued keys without retry; its in-flight reconcile is not retried", async () => {
    const { clock, backend, controller, stop } = dynamic({ workers: 1 });
    for (const n of ['a', 'b', 'c']) backend.set(widgets, obj(widgets, n));
    const run = controller.start(stop.signal);
    const gate = deferred();
    const calls: string[] = [];
    await controller.serve(widgets, async (r) => {
      calls.push(r.name);
      await gate.promise;
      throw new Error('fails after its kind stopped');
    });
    await settle();
    expect([calls.length, controller.stats().depth]).toEqual([1, 2]);
    const stopping = controller.stopServing(widgets);
    expect(controller.stats().depth).toBe(0);
    gate.resolve();
    await stopping;
    backend.set(widgets, obj(widgets, 'd'));
    await clock.advance(600_000);
    expect(calls).toHaveLength(1);
    expect([backend.openWatches, controller.stats().waiting]).toEqual([0, 0]);
    stop.abort();
    await run;
  });

  it('G5 one queue and worker pool for all kinds; the same namespace/name in two kinds are two requests', async () => {
    const { backend, controller, stop } = dynamic({ workers: 2 });
    backend.set(widgets, obj(widgets, 'same'));
    backend.set(gadgets, obj(gadgets, 'same'));
    const run = controller.start(stop.signal);
    const gate = deferred();
    const running: string[] = [];
    const handler = async (r: KindRequest): Promise<void> => {
      running.push(label(r));
      await gate.promise;
    };
    await controller.serve(widgets, handler);
    await controller.serve(gadgets, handler);
    await settle();
    expect(running.sort()).toEqual(['gadgets:default/same', 'widgets:default/same']);
    gate.resolve();
    stop.abort();
    await run;
  });

  it('G6 the handler gets the kind and a split namespace and name; cluster-scoped objects have namespace ""', async () => {
    const { backend, controller, stop } = dynamic();
    backend.set(widgets, obj(widgets, 'web', { namespace: 'team-a' }));
    backend.set(globals, obj(globals, 'all'));
    const run = controller.start(stop.signal);
    const requests: KindRequest[] = [];
    await controller.serve(widgets, (r) => void requests.push(r));
    await controller.serve(globals, (r) => void requests.push(r));
    await settle();
    expect(requests).toEqual([
      {
        kind: { group: 'example.com', version: 'v1', resource: 'widgets' },
        namespace: 'team-a',
        name: 'web',
      },
      { kind: { group: 'example.com', version: 'v1', resource: 'globals' }, namespace: '', name: 'all' },
    ]);
    stop.abort();
    await run;
  });

  it("G7 (adopted: serve before start only registers the kind, as v0.2) start then syncs and reconciles it; HEAD's guard kept: a second start fails", async () => {
    const { backend, controller, stop } = dynamic();
    backend.set(widgets, obj(widgets, 'a'));
    const calls: string[] = [];
    await controller.serve(widgets, (r) => void calls.push(r.name));
    await settle();
    expect([backend.listCalls.length, backend.watchCalls.length, calls.length]).toEqual([0, 0, 0]);
    const run = controller.start(stop.signal);
    await expect(controller.start(stop.signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    await controller.waitForSync(stop.signal);
    await settle();
    expect(calls).toEqual(['a']);
    stop.abort();
    await run;
  });
});

// --- H. Opinionated finalizer watcher -----------------------------------------------------------

const widgetType = suiteTypes.widget;
const FINAL = 'operator.v1.Widget.suite.converge.dev';
const WIP = 'wip.v1.Widget.suite.converge.dev';

function opinionated(options: Partial<OpinionatedWatcherOptions> = {}, failing: string[] = []) {
  const clock = new VirtualClock();
  const backend = new ReferenceBackend({ types: [widgetType], clock });
  const calls: string[] = [];
  const finalizersDuringAdd: (readonly string[])[] = [];
  const record = (name: string) => async (o: KubeObject) => {
    calls.push(name);
    if (name === 'add') {
      const stored = await backend.get(widgetType, { namespace: 'default', name: o.metadata.name ?? '' });
      finalizersDuringAdd.push(stored.metadata.finalizers ?? []);
    }
    if (failing.includes(name)) throw new Error(`${name} fails`);
  };
  const patchControl = { patches: 0, fail: undefined as Error | undefined };
  const watcher = new OpinionatedWatcher({
    type: widgetType,
    clock,
    client: {
      get: (type, key, o) => backend.get(type, key, o),
      patch: (type, key, patch, o) => {
        patchControl.patches++;
        if (patchControl.fail !== undefined) return Promise.reject(patchControl.fail);
        return backend.patch(type, key, patch, o);
      },
    },
    handlers: {
      add: record('add'),
      update: (_old, o) => record('update')(o),
      delete: record('delete'),
      sync: record('sync'),
    },
    ...options,
  });
  const context = { signal: new AbortController().signal, logger: noopLogger, attempt: 0 };
  const create = (meta: Partial<KubeObject['metadata']> = {}) =>
    backend.create(widgetType, {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'default', ...meta },
      spec: {},
    } as KubeObject);
  const read = () => backend.get(widgetType, { namespace: 'default', name: 'w' });
  const deleting = async (finalizers: string[]) => {
    await create({ finalizers });
    await backend.delete(widgetType, { namespace: 'default', name: 'w' });
    return read();
  };
  return {
    clock,
    backend,
    watcher,
    calls,
    finalizersDuringAdd,
    patchControl,
    context,
    create,
    read,
    deleting,
  };
}

describe('H. opinionated watcher', () => {
  it('H1 the finalizer is operator.<version>.<kind>.<group>; a name over 63 characters is refused', () => {
    expect(defaultFinalizerSupplier(widgetType)).toBe(FINAL);
    expect(opinionated().watcher.finalizer).toBe(FINAL);
    const long = resourceType({ ...widgetType, kind: `W${'x'.repeat(60)}` });
    expect(() => new OpinionatedWatcher({ type: long, client: { get: fail, patch: fail } })).toThrow(
      InvalidFinalizerError,
    );
  });

  it('H2 add without our finalizer calls add, then adds the finalizer; a failing add writes no finalizer (adopted: by default it keeps the in-progress one, H7); a failing patch is "error adding finalizer"', async () => {
    const plain = opinionated({ inProgressFinalizer: false });
    await plain.watcher.add(await plain.create(), plain.context);
    expect(plain.calls).toEqual(['add']);
    expect((await plain.read()).metadata.finalizers).toEqual([FINAL]);

    const failing = opinionated({ inProgressFinalizer: false }, ['add']);
    await expect(failing.watcher.add(await failing.create(), failing.context)).rejects.toThrow('add fails');
    expect([failing.patchControl.patches, (await failing.read()).metadata.finalizers]).toEqual([
      0,
      undefined,
    ]);
    const held = opinionated({}, ['add']);
    await expect(held.watcher.add(await held.create(), held.context)).rejects.toThrow('add fails');
    expect((await held.read()).metadata.finalizers).toEqual([WIP]);

    const broken = opinionated({ inProgressFinalizer: false });
    broken.patchControl.fail = new UnavailableError('down');
    const error = await broken.watcher.add(await broken.create(), broken.context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalizerPatchError);
    expect((error as FinalizerPatchError).message).toMatch(/^adding finalizer .* failed: down/);
    expect(broken.calls).toEqual(['add']);
  });

  it('H3 add of an object carrying our finalizer and no deletionTimestamp calls sync only, and patches nothing', async () => {
    const h = opinionated();
    await h.watcher.add(await h.create({ finalizers: [FINAL] }), h.context);
    expect([h.calls, h.patchControl.patches]).toEqual([['sync'], 0]);
  });

  it('H4 a deletionTimestamp with our finalizer calls delete, then removes the finalizer; a failing delete keeps it; without our finalizer nothing runs', async () => {
    const h = opinionated();
    await h.watcher.add(await h.deleting([FINAL]), h.context);
    expect(h.calls).toEqual(['delete']);
    await expect(h.read()).rejects.toBeInstanceOf(NotFoundError);

    const failing = opinionated({}, ['delete']);
    const object = await failing.deleting([FINAL]);
    await expect(failing.watcher.update(object, object, failing.context)).rejects.toThrow('delete fails');
    expect((await failing.read()).metadata.finalizers).toEqual([FINAL]);

    const other = opinionated();
    const foreign = await other.deleting(['example.com/other']);
    await other.watcher.add(foreign, other.context);
    await other.watcher.update(foreign, foreign, other.context);
    expect([other.calls, other.patchControl.patches]).toEqual([[], 0]);
  });

  it('H5 updates: same generation (> 0) or only our finalizer added call nothing; without our finalizer add runs and the finalizer is added (adopted: update is not called)', async () => {
    const h = opinionated();
    const created = await h.create({ finalizers: [FINAL] });
    await h.watcher.update(created, created, h.context);
    const before = { ...created, metadata: { ...created.metadata, finalizers: [] } };
    await h.watcher.update(before, created, h.context);
    expect([h.calls, h.patchControl.patches]).toEqual([[], 0]);

    const bare = opinionated();
    const object = await bare.create();
    const older = { ...object, metadata: { ...object.metadata, generation: 0 } };
    await bare.watcher.update(older, object, bare.context);
    expect(bare.calls).toEqual(['add']);
    expect((await bare.read()).metadata.finalizers).toEqual([FINAL]);
  });

  it('H6 delete events call nothing and patch nothing', async () => {
    const h = opinionated();
    h.watcher.delete(await h.create({ finalizers: [FINAL] }), h.context);
    await h.clock.advance(0);
    expect([h.calls, h.patchControl.patches]).toEqual([[], 0]);
  });

  it('H7 an in-progress finalizer is held around add, and finalizer patches carry the resourceVersion, retried 3 times on conflict', async () => {
    const h = opinionated();
    const stale = await h.create();
    await h.backend.update(widgetType, {
      ...stale,
      metadata: { ...stale.metadata, labels: { touched: 'yes' } },
    });
    const adding = h.watcher.add(stale, h.context);
    await h.clock.advance(5000);
    await adding;
    expect(h.finalizersDuringAdd).toEqual([[WIP]]);
    expect((await h.read()).metadata.finalizers).toEqual([FINAL]);
    expect(h.patchControl.patches).toBe(3); // the wip patch hit a conflict once, then wip, then final

    const c = opinionated();
    c.patchControl.fail = new ConflictError('the object has been modified');
    const failing = c.watcher.add(await c.create(), c.context).catch((e: unknown) => e);
    await c.clock.advance(10_000);
    expect(await failing).toBeInstanceOf(FinalizerPatchError);
    expect([c.patchControl.patches, c.calls]).toEqual([4, []]);
  });
});

// --- I. Secondaries, ownership and GC -----------------------------------------------------------

const applications = resourceType({
  group: 'kumori.example',
  version: 'v1',
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
});
const configMaps = suiteTypes.configMap;

function configMap(name: string, owner?: KubeObject, scheme = kumoriOwnerLabels): KubeObject {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } } as KubeObject;
  return owner === undefined ? cm : setOwnerLabels(cm, applications, owner, scheme);
}

describe('I. secondaries, ownership and GC', () => {
  it('I1 secondaries carry kumori/ownerkind=<primary kind> and kumori/ownerkey=<encoded primary key>', () => {
    const labelled = configMap('cm', obj(applications, 'hello'));
    expect(labelled.metadata.labels).toEqual({
      'kumori/ownerkind': 'Application',
      'kumori/ownerkey': 'default_hello',
    });
    expect(ownerOf(labelled, kumoriOwnerLabels)).toEqual({
      kind: 'Application',
      key: { namespace: 'default', name: 'hello' },
    });
  });

  it('I2 a secondary event of the owner kind enqueues its owner key; unlabelled or other-kind objects are ignored; tombstones are unwrapped', () => {
    const added: string[] = [];
    const queue: RequestQueue<ObjectKey> = {
      add: (k) => void added.push(`${k.namespace}/${k.name}`),
      addAfter: () => undefined,
    };
    const handler = enqueueForLabelOwner<KubeObject>({
      ownerType: applications,
      ownerLabels: kumoriOwnerLabels,
    });
    const otherKind = setOwnerLabels(
      configMap('other'),
      kind('Database'),
      obj(kind('Database'), 'db'),
      kumoriOwnerLabels,
    );
    handler.handle({ type: 'create', object: configMap('a', obj(applications, 'app-a')) }, queue);
    handler.handle({ type: 'create', object: configMap('unlabelled') }, queue);
    handler.handle({ type: 'create', object: otherKind }, queue);
    handler.handle(
      { type: 'delete', object: configMap('b', obj(applications, 'app-b')), finalStateUnknown: true },
      queue,
    );
    expect(added).toEqual(['default/app-a', 'default/app-b']);
  });

  it('I3 garbage collection deletes secondaries whose owner never existed or was deleted, and keeps those whose owner exists', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const owners = new ReferenceBackend({ types: [applications], clock, name: 'owners' });
    const secondaries = new ReferenceBackend({ types: [configMaps], clock, name: 'secondaries' });
    const app = (name: string) => owners.create(applications, obj(applications, name));
    const alive = await app('alive');
    const gone = await app('gone');
    await owners.delete(applications, { namespace: 'default', name: 'gone' });
    for (const [name, owner] of [
      ['cm-alive', alive],
      ['cm-gone', gone],
      ['cm-never', obj(applications, 'never')],
    ] as const) {
      await secondaries.create(configMaps, configMap(name, owner));
    }
    await secondaries.create(configMaps, configMap('cm-unowned'));
    const informers = new InformerRegistry({ clock });
    const collector = new OrphanCollector({
      informers,
      ownerType: applications,
      ownerBackend: owners,
      secondaries: [{ type: configMaps, backend: secondaries }],
      ownerLabels: kumoriOwnerLabels,
      clock,
    });
    const stop = new AbortController();
    const registry = informers.start(stop.signal);
    await settle();
    const round = await collector.collect(stop.signal);
    expect(round.deleted.map((d) => d.key.name).sort()).toEqual(['cm-gone', 'cm-never']);
    const left = (await secondaries.list(configMaps)).items.map((o) => o.metadata.name).sort();
    expect(left).toEqual(['cm-alive', 'cm-unowned']);
    stop.abort();
    await registry;
  });

  it('I4 (adopted: Kubernetes list semantics) put, delete and purge each enqueue the key; nothing is reconciled or collected before the initial events end; deleted keys are not replayed', async () => {
    // With a real NATS KV bucket (put, delete marker, purge marker through the NATS client), see
    // packages/nats/src/kv-operations.test.ts, "operationOf tells put, delete and purge apart".
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(applications, obj(applications, 'a'));
    backend.set(applications, obj(applications, 'deleted-before-start'));
    backend.remove(applications, { namespace: 'default', name: 'deleted-before-start' });
    backend.holdInitialEventsEnd(2);
    const informers = new InformerRegistry({ clock });
    const handle = informers.acquire({ backend, type: applications });
    const ops: string[] = [];
    const controller = new Controller<ObjectKey>({
      name: 'kumori',
      clock,
      sources: [
        fromEventSource({
          eventSource: handle.informer,
          handler: enqueueForObject(),
          startEventSource: false,
        }),
      ],
      reconciler: (key, { causes }) => void ops.push(`${key.name}:${operationOf(causes)}`),
    });
    const collector = new OrphanCollector({
      informers,
      ownerType: applications,
      ownerBackend: backend,
      secondaries: [{ type: configMaps, backend }],
      ownerLabels: kumoriOwnerLabels,
      clock,
    });
    const stop = new AbortController();
    const registry = informers.start(stop.signal);
    const run = controller.start(stop.signal);
    await settle();
    expect([handle.informer.hasSynced(), ops.length, (await collector.collect()).synced]).toEqual([
      false,
      0,
      false,
    ]);
    backend.releaseInitialEventsEnd();
    await settle();
    expect([handle.informer.hasSynced(), (await collector.collect()).synced]).toEqual([true, true]);
    expect(ops).toEqual(['a:put']);
    backend.set(applications, obj(applications, 'a', { generation: 2 }));
    await settle();
    backend.remove(applications, { namespace: 'default', name: 'a' });
    await settle();
    backend.set(applications, obj(applications, 'b'));
    await settle();
    backend.inject(applications, {
      type: 'DELETED',
      object: {
        ...obj(applications, 'b'),
        metadata: { ...obj(applications, 'b').metadata, resourceVersion: String(backend.revision + 1) },
      },
      purged: true,
    });
    await settle();
    expect(ops).toEqual(['a:put', 'a:put', 'a:delete', 'b:put', 'b:purge']);
    stop.abort();
    await Promise.all([registry, run]);
  });

  it('I5 owner keys become valid label values (at most 63 characters of the label set), distinct keys distinct values, and decode losslessly with the annotation', () => {
    const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, { size: 'max' });
    // Object names (DNS subdomains up to 253 characters) and anything a NATS KV key may hold but '/'.
    const name = fc.oneof(
      fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/, { size: 'max' }),
      fc.string({ minLength: 1, maxLength: 100, unit: 'grapheme-ascii' }).filter((s) => !s.includes('/')),
    );
    fc.assert(
      fc.property(dnsLabel, name, dnsLabel, name, (ns1, n1, ns2, n2) => {
        const one = ownerLabels(applications, obj(applications, n1, { namespace: ns1 }), kumoriOwnerLabels);
        const two = ownerLabels(applications, obj(applications, n2, { namespace: ns2 }), kumoriOwnerLabels);
        for (const value of Object.values(one.labels)) {
          expect(value.length).toBeLessThanOrEqual(63);
          expect(value).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
        }
        const decoded = ownerOf(
          { ...configMap('cm'), metadata: { name: 'cm', labels: one.labels, annotations: one.annotations } },
          kumoriOwnerLabels,
        );
        expect(decoded?.key).toEqual({ namespace: ns1, name: n1 });
        const same = ns1 === ns2 && n1 === n2;
        expect(one.labels['kumori/ownerkey'] === two.labels['kumori/ownerkey']).toBe(same);
        // A near miss (one more character at the end) never shares the value either.
        const near = ownerLabels(
          applications,
          obj(applications, `${n1}0`, { namespace: ns1 }),
          kumoriOwnerLabels,
        );
        expect(near.labels['kumori/ownerkey']).not.toBe(one.labels['kumori/ownerkey']);
      }),
      { numRuns: 300 },
    );
  });
});

// --- J. Startup ---------------------------------------------------------------------------------

describe('J. startup', () => {
  it('J1 start runs every source, waits for all to sync, then starts workers; events during the sync are queued; a failed sync is an error', async () => {
    const a = keySource('a');
    const b = keySource('b');
    const c = controllerOf(() => done(), { sources: [a.source, b.source] });
    await c.clock.advance(0);
    a.push('x');
    b.push('y');
    a.sync();
    await c.clock.advance(10);
    expect([c.controller.state, c.calls.length]).toEqual(['syncing', 0]);
    b.sync();
    await c.clock.advance(10);
    expect(c.calls.map((x) => x.key)).toEqual(['x', 'y']);
    await c.finish();

    const broken = keySource('broken');
    const f = controllerOf(() => done(), { sources: [broken.source] });
    await f.clock.advance(0);
    broken.push('z');
    broken.fail(new Error('cannot list'));
    await expect(f.running).rejects.toBeInstanceOf(SourceSyncError);
    expect(f.calls).toEqual([]);
  });

  it('J2 the first runnable to fail stops all the others and is returned; (adopted) a runnable added while running starts at once', async () => {
    const clock = new VirtualClock();
    const manager = new Manager({ clock });
    let otherStopped = false;
    manager.add(
      async (signal) => {
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        otherStopped = true;
      },
      { group: 'others' },
    );
    const boom = new Error('controller failed');
    manager.add(
      async () => {
        await clock.sleep(100);
        throw boom;
      },
      { name: 'failing', group: 'others' },
    );
    const run = manager.start(new AbortController().signal);
    const failure = run.catch((e: unknown) => e);
    await clock.advance(50);
    let late = false;
    manager.add(
      async (signal) => {
        late = true;
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      },
      { group: 'others' },
    );
    await clock.advance(0);
    expect(late).toBe(true);
    await clock.advance(50);
    const error = await failure;
    expect(error).toBeInstanceOf(RunnableFailedError);
    expect((error as RunnableFailedError).cause).toBe(boom);
    expect(otherStopped).toBe(true);
  });
});

// --- K. Shutdown --------------------------------------------------------------------------------

describe('K. shutdown', () => {
  it('K1 stop ends intake, cancels delayed keys and stops every watch', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(widgets, obj(widgets, 'a'));
    const reconciled: number[] = [];
    const controller = new Controller<ObjectKey>({
      name: 'k1',
      clock,
      sources: [fromEventSource(new Informer({ backend, type: widgets, clock }), enqueueForObject())],
      reconciler: () => {
        reconciled.push(clock.now());
        return requeueAfter(60_000);
      },
    });
    const stop = new AbortController();
    const run = controller.start(stop.signal);
    await settle();
    expect([reconciled, backend.openWatches, controller.stats().waiting]).toEqual([[0], 1, 1]);
    stop.abort();
    await run;
    controller.queue.add({ namespace: 'default', name: 'a' });
    controller.queue.addAfter({ namespace: 'default', name: 'b' }, 10);
    await clock.advance(600_000);
    expect(reconciled).toEqual([0]);
    expect(backend.openWatches).toBe(0);
    expect(controller.stats()).toMatchObject({ waiting: 0, depth: 0, droppedAfterShutdown: 2 });
  });

  it('K2 (adopted: no drain) queued keys that have not started are not processed after stop', async () => {
    const gate = deferred();
    const c = controllerOf(async (key) => {
      if (key === 'a') await gate.promise;
    });
    for (const key of ['a', 'b', 'c']) c.controller.queue.add(key);
    await c.clock.advance(0);
    c.stop.abort();
    gate.resolve();
    await c.running;
    expect(c.calls.map((x) => x.key)).toEqual(['a']);
  });

  it('K3 in-flight reconciles see their signal abort at once; stop waits for them, up to shutdownTimeoutMs (a ShutdownTimeoutError), and 0 does not wait', async () => {
    const gate = deferred();
    let abortedAt: number | undefined;
    const c = controllerOf(async (_k, { signal }) => {
      signal.addEventListener('abort', () => {
        abortedAt = c.clock.now();
      });
      await gate.promise;
    });
    c.controller.queue.add('k');
    await c.clock.advance(100);
    c.stop.abort();
    let settled = false;
    void c.running.then(() => {
      settled = true;
    });
    await c.clock.advance(1000);
    expect([abortedAt, settled]).toEqual([100, false]);
    gate.resolve();
    await c.running;

    const stuck = controllerOf(() => new Promise<void>(() => undefined), { shutdownTimeoutMs: 5000 });
    stuck.controller.queue.add('k');
    await stuck.clock.advance(0);
    stuck.stop.abort();
    const outcome = stuck.running.catch((e: unknown) => e);
    await stuck.clock.advance(5000);
    const error = await outcome;
    expect(error).toBeInstanceOf(ShutdownTimeoutError);
    expect((error as ShutdownTimeoutError).message).toContain('k');

    const impatient = controllerOf(() => new Promise<void>(() => undefined), { shutdownTimeoutMs: 0 });
    impatient.controller.queue.add('k');
    await impatient.clock.advance(0);
    impatient.stop.abort();
    await expect(impatient.running).resolves.toBeUndefined();
  });

  it('K4 stop is idempotent, and after stop, serve and watch calls fail', async () => {
    const c = controllerOf(() => done());
    c.controller.stop();
    c.controller.stop();
    c.stop.abort();
    await c.running;
    expect(c.controller.state).toBe('stopped');
    await expect(c.controller.watch(keySource().source)).rejects.toBeInstanceOf(AlreadyStartedError);

    const { controller, stop } = dynamic();
    const run = controller.start(stop.signal);
    controller.stop();
    controller.stop();
    await run;
    await expect(controller.serve(widgets, () => done())).rejects.toBeInstanceOf(ControllerShutDownError);
  });
});

// --- L. Observability ---------------------------------------------------------------------------

describe('L. observability', () => {
  it("L1 (adopted: metric hooks, no metric registry) onReconcile reports controller-runtime's results success, error, requeue and requeue_after, and a dynamic controller's the kind", async () => {
    const results: string[] = [];
    await drive(
      scripted(fail, requeue, () => requeueAfter(10)),
      100,
      {
        metrics: { onReconcile: (controller, result) => void results.push(`${controller}:${result}`) },
      },
    );
    expect(results).toEqual(['seed:error', 'seed:requeue', 'seed:requeue_after', 'seed:success']);

    const kinds: (string | undefined)[] = [];
    const { backend, controller, stop } = dynamic({
      metrics: { onReconcile: (_c, _r, _ms, kindId) => void kinds.push(kindId) },
    });
    backend.set(widgets, obj(widgets, 'a'));
    const run = controller.start(stop.signal);
    await controller.serve(widgets, () => done());
    await settle();
    expect(kinds).toEqual(['example.com/v1/widgets']);
    stop.abort();
    await run;
  });

  it('L2 the error callback gets every handler error, failed retries included', async () => {
    const errors: string[] = [];
    const attempt = (n: number) => throws(new Error(`attempt ${n}`));
    await drive(scripted(attempt(1), attempt(2), attempt(3)), 100, {
      onError: (e, key) => void errors.push(`${key}:${e.message}`),
    });
    expect(errors).toEqual(['k:attempt 1', 'k:attempt 2', 'k:attempt 3']);

    const clock = new VirtualClock();
    const events = new EventChannel<KubeObject>();
    const attempts: number[] = [];
    const informerController = new InformerController({
      clock,
      retryPolicy: maxRetries(2),
      onError: (_e, info) => void attempts.push(info.attempt),
    });
    informerController.addInformer(events, 'Widget');
    informerController.addWatcher({ add: fail }, 'Widget');
    const stop = new AbortController();
    const run = informerController.start(stop.signal);
    events.create(obj(widgets, 'w'));
    await clock.advance(10_000);
    expect(attempts).toEqual([0, 1, 2]);
    stop.abort();
    await run;
  });

  it('L3 a Kubernetes Event recorder records (object, Normal|Warning, reason, action, note), also about objects that live outside Kubernetes', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const backend = new ReferenceBackend({ types: [eventsV1Type], clock });
    const recorder = createEventRecorder({ backend, component: 'kumori-controller', instance: 'one', clock });
    const app = obj(applications, 'hello', { uid: 'uid-hello', resourceVersion: '42' });
    recorder.event(app, 'Warning', 'ErrResourceExists', 'Sync', 'configmap hello exists and is not owned');
    await clock.advance(0);
    const [event] = (await backend.list<EventsV1Event>(eventsV1Type)).items;
    expect(event).toMatchObject({
      type: 'Warning',
      reason: 'ErrResourceExists',
      action: 'Sync',
      note: 'configmap hello exists and is not owned',
      reportingController: 'kumori-controller',
      regarding: { apiVersion: 'kumori.example/v1', kind: 'Application', name: 'hello', uid: 'uid-hello' },
    });
  });
});
