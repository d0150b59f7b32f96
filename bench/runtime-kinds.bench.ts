/**
 * Runtime kinds benchmark (issue 12): what serving kinds at run time through one DynamicController
 * costs against doing without it. Run with `npm run bench:runtime-kinds` (see BENCHMARKS.md).
 *
 * 1. Sync: time from `serve(kind)` on a running controller until it resolves (the kind's cache
 *    synced, every object enqueued) for a kind with BENCH_OBJECTS objects, against a bare Informer
 *    with one counting listener syncing the same kind alone. Two handlers: one that waits until
 *    `serve` resolved (the four workers sit on four requests: the serve path alone) and one that
 *    returns at once (the workers reconcile while the kind syncs, as they would in use). Median of
 *    BENCH_RUNS runs in rotating order, each a cold sync. Over the in-process store, and over HTTP
 *    to the embedded API server (in this process, so the server's work counts on every side).
 *    Goal: ratio close to 1 (≤ 1.25 for a PASS).
 * 2. Fairness: a fresh key of kind B is added behind a backlog of BENCH_BACKLOG keys of kind A
 *    (kept topped up), BENCH_SAMPLES times; p99 of how many A reconciles started between B's add
 *    and B's start ("worker slots") and of the milliseconds, against a plain FIFO queue (the bench's
 *    NaiveQueue) with the same workers and handler (BENCH_FIFO_SAMPLES samples, each behind a full
 *    backlog). Every reconcile yields one macrotask. Goals: ≤ 1 worker slot, ≥ 100× better than FIFO.
 * 3. Heap: `heapUsed` after forced GC before and after BENCH_CYCLES serve/stop cycles of BENCH_KINDS
 *    kinds over the in-process store (the leak tests' workload: test/runtime-kinds/workload.ts).
 *    "Before" is after 50 warm-up cycles. Goal: after ≤ 1.05× before.
 *
 * Exit status 1 only when a correctness check fails (a sync that lost objects, a key reconciled
 * twice at once, a B key that never started, a kind that left queued keys, informers or backoff
 * state behind); a missed performance goal prints FAIL and exits 0.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import {
  type Backend,
  DynamicController,
  done,
  Informer,
  InformerRegistry,
  type KindRequest,
  type KubeObject,
  type ResourceType,
  resourceType,
} from '@converge/runtime';
import { Store } from '@converge/store';
import { startKube } from '../test/runtime-kinds/backends.ts';
import { CountingRateLimiter, KindsWorkload, leakKinds } from '../test/runtime-kinds/workload.ts';
import { collectGarbage, fmt, median, positiveInt } from './harness.ts';
import { NaiveQueue } from './naive-queue.ts';

const OBJECTS = positiveInt('BENCH_OBJECTS', 10_000);
const RUNS = positiveInt('BENCH_RUNS', 7);
const BACKLOG = positiveInt('BENCH_BACKLOG', 50_000);
const SAMPLES = positiveInt('BENCH_SAMPLES', 1_000);
const FIFO_SAMPLES = positiveInt('BENCH_FIFO_SAMPLES', 3);
const CYCLES = positiveInt('BENCH_CYCLES', 1_000);
const KINDS = positiveInt('BENCH_KINDS', 50);
const WORKERS = 4;
const WARMUP_CYCLES = 50;

const GOAL_SYNC_RATIO = 1.25;
const GOAL_SLOTS = 1;
const GOAL_FIFO_FACTOR = 100;
const GOAL_HEAP_RATIO = 1.05;

const correctness: string[] = [];
const verdicts: string[] = [];

function check(ok: boolean, what: string): void {
  if (!ok) correctness.push(what);
}

function verdict(ok: boolean, text: string): void {
  verdicts.push(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** `heapUsed` after three forced GCs, and the part of it that is compiled code and its metadata. */
function heap(): { readonly used: number; readonly code: number } {
  collectGarbage(3);
  const used = process.memoryUsage().heapUsed;
  let code = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (/^(code|trusted)/.test(space.space_name)) code += space.space_used_size;
  }
  return { used, code };
}

function mib(bytes: number): string {
  return `${fmt(bytes / 1048576, 1)} MiB`;
}

/** Resolves when `count()` reaches `target`; `poke()` re-checks (call it wherever count changes). */
class Countdown {
  #wake: (() => void) | undefined;
  #target = 0;
  count = 0;

  until(target: number): Promise<void> {
    this.#target = target;
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.poke();
    });
  }

  add(): void {
    this.count++;
    this.poke();
  }

  poke(): void {
    if (this.#wake !== undefined && this.count >= this.#target) {
      const wake = this.#wake;
      this.#wake = undefined;
      wake();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Sync

const syncKind: ResourceType = resourceType({
  group: 'bench.converge.dev',
  version: 'v1',
  kind: 'SyncWidget',
  plural: 'syncwidgets',
  namespaced: true,
});

function syncObject(i: number): KubeObject {
  return {
    apiVersion: 'bench.converge.dev/v1',
    kind: 'SyncWidget',
    metadata: {
      name: `widget-${i.toString().padStart(6, '0')}`,
      namespace: `team-${i % 10}`,
      labels: { app: 'widget', shard: String(i % 16) },
    },
    spec: { replicas: 1 + (i % 5), image: `registry.example.com/widget:v1.${i % 50}.0`, weight: i % 100 },
  } as KubeObject;
}

async function informerSync(backend: Backend, type: ResourceType): Promise<number> {
  const informer = new Informer({ backend, type });
  let events = 0;
  informer.subscribe(() => {
    events++;
  });
  const stop = new AbortController();
  const t0 = performance.now();
  const running = informer.start(stop.signal);
  await informer.waitForSync(stop.signal);
  const ms = performance.now() - t0;
  check(informer.cache.size === OBJECTS, `informer synced ${informer.cache.size} of ${OBJECTS} objects`);
  check(events === OBJECTS, `informer listener saw ${events} of ${OBJECTS} objects`);
  stop.abort();
  await running;
  return ms;
}

/**
 * `serve` of a kind on a running controller until it resolves. `parked`: the handler waits until
 * `serve` resolved, so the four workers sit on four requests and the figure is the serve path alone
 * (informer, listener, generation filter, enqueue). Otherwise the handler returns at once.
 */
async function servedSync(
  controller: DynamicController,
  type: ResourceType,
  parked: boolean,
): Promise<number> {
  const reconciled = new Countdown();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const t0 = performance.now();
  await controller.serve(type, async () => {
    if (parked) await gate;
    reconciled.add();
    return done();
  });
  const ms = performance.now() - t0;
  open();
  const size = controller.cache(type)?.size ?? 0;
  check(size === OBJECTS, `served kind synced ${size} of ${OBJECTS} objects`);
  await reconciled.until(OBJECTS);
  check(reconciled.count === OBJECTS, `${reconciled.count} reconciles for ${OBJECTS} objects`);
  await controller.stopServing(type);
  return ms;
}

async function syncSection(label: string, backend: Backend, type: ResourceType): Promise<void> {
  const stop = new AbortController();
  const controller = new DynamicController({ backend, workers: WORKERS, name: 'bench-sync' });
  const running = controller.start(stop.signal);
  const subjects = [
    () => informerSync(backend, type),
    () => servedSync(controller, type, true),
    () => servedSync(controller, type, false),
  ];
  const samples: number[][] = subjects.map(() => []);
  for (let r = -2; r < RUNS; r++) {
    // Each run starts with the next subject, so none always runs right after another's garbage.
    const times: number[] = [];
    for (let k = 0; k < subjects.length; k++) {
      const i = (((r + k) % subjects.length) + subjects.length) % subjects.length;
      collectGarbage(1);
      times[i] = await (subjects[i] as () => Promise<number>)();
    }
    if (r >= 0) for (const [i, ms] of times.entries()) samples[i]?.push(ms);
  }
  stop.abort();
  await running;
  const [bare = 0, parked = 0, fast = 0] = samples.map((list) => median(list));
  const parkedRatio = parked / bare;
  const fastRatio = fast / bare;
  console.log(
    `| ${label} | ${fmt(bare)} ms | ${fmt(parked)} ms (${fmt(parkedRatio, 2)}×) | ${fmt(fast)} ms (${fmt(fastRatio, 2)}×) |`,
  );
  verdict(
    parkedRatio <= GOAL_SYNC_RATIO,
    `sync (${label}), workers busy: serve → synced is ${fmt(parkedRatio, 2)}× a bare informer's sync (goal close to 1, ≤ ${GOAL_SYNC_RATIO})`,
  );
  verdict(
    fastRatio <= GOAL_SYNC_RATIO,
    `sync (${label}), handler returning at once: serve → synced is ${fmt(fastRatio, 2)}× a bare informer's sync (goal close to 1, ≤ ${GOAL_SYNC_RATIO})`,
  );
}

async function syncStore(): Promise<void> {
  const store = new Store({ types: [syncKind] });
  for (let i = 0; i < OBJECTS; i++) await store.create(syncKind, syncObject(i));
  await syncSection('in-process store', store, syncKind);
  await store.close();
}

async function syncHttp(): Promise<void> {
  const kube = await startKube([syncKind]);
  try {
    const stored = kube.server.store.resolveType('bench.converge.dev/v1', 'SyncWidget');
    if (stored === undefined) throw new Error('the CRD did not register its type in the store');
    for (let i = 0; i < OBJECTS; i++) await kube.server.store.create(stored, syncObject(i));
    await syncSection('HTTP, embedded API server', kube.backend, syncKind);
  } finally {
    await kube.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Fairness

interface Latency {
  readonly slots: number[];
  readonly ms: number[];
}

const kindA = resourceType({
  group: 'bench.converge.dev',
  version: 'v1',
  kind: 'Storm',
  plural: 'storms',
  namespaced: true,
});
const kindB = resourceType({
  group: 'bench.converge.dev',
  version: 'v1',
  kind: 'Calm',
  plural: 'calms',
  namespaced: true,
});

async function fairController(): Promise<Latency> {
  const store = new Store({ types: [kindA, kindB] });
  const controller = new DynamicController({ backend: store, workers: WORKERS, name: 'bench-fair' });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  const gvrA = { group: kindA.group, version: kindA.version, resource: kindA.plural };
  const gvrB = { group: kindB.group, version: kindB.version, resource: kindB.plural };
  let startedA = 0;
  const inFlight = new Set<string>();
  await controller.serve(kindA, async (request: KindRequest) => {
    startedA++;
    check(!inFlight.has(request.name), `${request.name} reconciled twice at once`);
    inFlight.add(request.name);
    await nextMacrotask();
    inFlight.delete(request.name);
    return done();
  });
  let pending:
    | { readonly name: string; readonly t0: number; readonly a0: number; resolve(): void }
    | undefined;
  const latency: Latency = { slots: [], ms: [] };
  await controller.serve(kindB, (request: KindRequest) => {
    const sample = pending;
    check(sample?.name === request.name, `unexpected B reconcile ${request.name}`);
    if (sample !== undefined) {
      latency.ms.push(performance.now() - sample.t0);
      latency.slots.push(startedA - sample.a0);
      pending = undefined;
      sample.resolve();
    }
    return done();
  });
  let nextA = 0;
  const topUp = (): void => {
    const { depth } = controller.stats();
    for (let i = depth; i < BACKLOG; i++)
      controller.queue.add({ kind: gvrA, namespace: 'default', name: `a-${nextA++}` });
  };
  topUp();
  await nextMacrotask();
  for (let s = 0; s < SAMPLES; s++) {
    topUp();
    const name = `b-${s}`;
    const started = new Promise<void>((resolve) => {
      pending = { name, t0: performance.now(), a0: startedA, resolve };
    });
    controller.queue.add({ kind: gvrB, namespace: 'default', name });
    await started;
  }
  stop.abort();
  await running;
  await store.close();
  return latency;
}

async function fairFifo(): Promise<Latency> {
  const queue = new NaiveQueue<string>();
  const stop = new AbortController();
  let startedA = 0;
  let pending:
    | { readonly name: string; readonly t0: number; readonly a0: number; resolve(): void }
    | undefined;
  const latency: Latency = { slots: [], ms: [] };
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get(stop.signal);
      if (key === undefined) return;
      if (key.startsWith('a-')) {
        startedA++;
        await nextMacrotask();
      } else if (pending?.name === key) {
        latency.ms.push(performance.now() - pending.t0);
        latency.slots.push(startedA - pending.a0);
        const sample = pending;
        pending = undefined;
        sample.resolve();
      }
      queue.done(key);
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);
  let nextA = 0;
  for (let s = 0; s < FIFO_SAMPLES; s++) {
    while (queue.length < BACKLOG) queue.add(`a-${nextA++}`);
    const name = `b-${s}`;
    const started = new Promise<void>((resolve) => {
      pending = { name, t0: performance.now(), a0: startedA, resolve };
    });
    queue.add(name);
    await started;
  }
  stop.abort();
  await Promise.all(workers);
  return latency;
}

async function fairnessSection(): Promise<void> {
  const fair = await fairController();
  check(fair.slots.length === SAMPLES, `${fair.slots.length} of ${SAMPLES} B keys started`);
  const fifo = await fairFifo();
  check(fifo.slots.length === FIFO_SAMPLES, `${fifo.slots.length} of ${FIFO_SAMPLES} FIFO B keys started`);
  const row = (label: string, l: Latency, n: number): string =>
    `| ${label} | ${n} | ${fmt(quantile(l.slots, 0.5), 0)} | ${fmt(quantile(l.slots, 0.99), 0)} | ${fmt(Math.max(...l.slots), 0)} | ${fmt(quantile(l.ms, 0.5), 3)} | ${fmt(quantile(l.ms, 0.99), 3)} | ${fmt(Math.max(...l.ms), 3)} |`;
  console.log(
    `\n### 2. A fresh key of kind B behind ${BACKLOG.toLocaleString('en-US')} keys of kind A (${WORKERS} workers)\n`,
  );
  console.log('| queue | samples | slots p50 | slots p99 | slots max | ms p50 | ms p99 | ms max |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  console.log(row('DynamicController (fair)', fair, SAMPLES));
  console.log(row('plain FIFO (NaiveQueue)', fifo, FIFO_SAMPLES));
  const slots99 = quantile(fair.slots, 0.99);
  const fifoSlots = quantile(fifo.slots, 0.5);
  const ms99 = quantile(fair.ms, 0.99);
  const fifoMs = quantile(fifo.ms, 0.5);
  verdict(
    slots99 <= GOAL_SLOTS,
    `fairness: p99 ${slots99} worker slot(s) behind the backlog (goal ≤ ${GOAL_SLOTS})`,
  );
  verdict(
    fifoSlots >= GOAL_FIFO_FACTOR * Math.max(slots99, 1) && fifoMs >= GOAL_FIFO_FACTOR * ms99,
    `fairness: FIFO median ${fmt(fifoSlots, 0)} slots / ${fmt(fifoMs, 1)} ms vs fair p99 ${slots99} / ${fmt(ms99, 3)} ms: ${fmt(fifoMs / ms99, 0)}× in ms (goal ≥ ${GOAL_FIFO_FACTOR}×)`,
  );
}

// ---------------------------------------------------------------------------------------------
// 3. Heap after serve/stop cycles

async function heapSection(): Promise<void> {
  const workload = new KindsWorkload({ kinds: leakKinds(KINDS) });
  // A short history, full from the start: the store's record of the per-cycle update is the
  // backend's memory, not the controller's.
  const store = new Store({ types: workload.kinds, maxHistoryEvents: 100 });
  await workload.createObjects(store);
  const registry = new InformerRegistry();
  const limiter = new CountingRateLimiter();
  const controller = new DynamicController({
    backend: store,
    informers: registry,
    workers: 8,
    resyncPeriodMs: 30_000,
    rateLimiter: limiter,
    name: 'bench-cycles',
  });
  const stop = new AbortController();
  const registryRun = registry.start(stop.signal);
  const running = controller.start(stop.signal);
  const cold = heap();
  const holds = Math.ceil(KINDS / workload.holdEvery);
  let before = cold;
  const trace: string[] = [];
  const t0 = performance.now();
  for (let cycle = 0; cycle < WARMUP_CYCLES + CYCLES; cycle++) {
    if (cycle === WARMUP_CYCLES) before = heap();
    const report = await workload.cycle(controller, store);
    check(
      report.inFlightAtStop === holds,
      `cycle ${cycle}: ${report.inFlightAtStop} of ${holds} holds in flight at stop`,
    );
    if (cycle > WARMUP_CYCLES && (cycle - WARMUP_CYCLES) % 200 === 0) {
      trace.push(`${cycle - WARMUP_CYCLES}: ${mib(heap().used)}`);
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = heap();
  const stats = controller.stats();
  check(controller.served().length === 0, `${controller.served().length} kinds still served`);
  check(
    stats.depth === 0 && stats.waiting === 0 && stats.processing === 0 && stats.running === 0,
    `queue not empty after the cycles: ${JSON.stringify(stats)}`,
  );
  check(registry.size === 0, `${registry.size} informers left in the registry`);
  check(limiter.held === 0, `${limiter.held} requests left with backoff state`);
  check(
    workload.reconcilesWhileStopped === 0,
    `${workload.reconcilesWhileStopped} reconciles of stopped kinds`,
  );
  stop.abort();
  await running;
  await registryRun;
  await store.close();
  const ratio = after.used / before.used;
  const objects = (after.used - after.code) / (before.used - before.code);
  console.log(
    `\n### 3. Heap around ${CYCLES.toLocaleString('en-US')} serve/stop cycles of ${KINDS} kinds (in-process store)\n`,
  );
  console.log(
    `- cycles: ${fmt(seconds, 1)} s (${fmt((seconds * 1000) / (WARMUP_CYCLES + CYCLES), 1)} ms per cycle)`,
  );
  console.log(
    `- heap after setup: ${mib(cold.used)}; after ${WARMUP_CYCLES} warm-up cycles: ${mib(before.used)}; after ${CYCLES} more: ${mib(after.used)}`,
  );
  console.log(`- on the way (cycles after warm-up: heap): ${trace.join(', ')}`);
  console.log(
    `- of which compiled code and its metadata (code and trusted spaces): ${mib(before.code)} -> ${mib(after.code)}; the rest (objects): ${mib(before.used - before.code)} -> ${mib(after.used - after.code)} (${fmt(objects, 3)}×)`,
  );
  verdict(
    ratio <= GOAL_HEAP_RATIO,
    `heap: ${mib(after.used)} after ${CYCLES} cycles vs ${mib(before.used)} before = ${fmt(ratio, 3)}× (goal ≤ ${GOAL_HEAP_RATIO}×)`,
  );
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log('## Runtime kinds (bench:runtime-kinds)\n');
  console.log(`- date: ${new Date().toISOString()}`);
  console.log(
    `- machine: ${cpu}, ${os.availableParallelism()} logical cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB`,
  );
  console.log(
    `- node: ${process.version}; load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
  );
  console.log(
    `\n### 1. serve → synced for a kind of ${OBJECTS.toLocaleString('en-US')} objects (median of ${RUNS} runs)\n`,
  );
  console.log('| backend | bare informer | serve, workers busy | serve, handler returning at once |');
  console.log('| --- | --- | --- | --- |');
  await syncStore();
  await syncHttp();
  await fairnessSection();
  await heapSection();
  console.log('\n### Verdicts\n');
  for (const line of verdicts) console.log(line);
  if (correctness.length > 0) {
    console.log('\n### Correctness failures\n');
    for (const line of correctness.slice(0, 20)) console.log(`- ${line}`);
    process.exitCode = 1;
  }
}

await main();
