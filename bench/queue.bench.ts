/**
 * WorkQueue benchmark: throughput against a naive baseline, an update storm with a trace check,
 * and partition fairness. Run with `npm run bench:queue` (see BENCHMARKS.md at the repo root).
 *
 * Environment knobs (for quick local runs; the published figures use the defaults):
 * - BENCH_KEYS: distinct keys per throughput run (default 1 000 000);
 * - BENCH_RUNS: counted runs per queue and variant (default 7, at least 5 for the verdicts);
 * - BENCH_ONLY=metrics: only the metrics instrumentation section (issue 16).
 *
 * Exit status: 0 when every correctness check holds, even if a performance goal fails (its
 * verdict line says FAIL); 1 when a correctness check fails (lost or duplicated keys, a key
 * reconciled concurrently, an add never reconciled).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextMacrotask, setTimeout as sleep } from 'node:timers/promises';
import { Metrics } from '../packages/metrics/src/index.ts';
import { Controller } from '../packages/runtime/src/controller/index.ts';
import { Priority, WorkQueue, type WorkQueueMetrics } from '../packages/runtime/src/workqueue/index.ts';
import { NoExclusivityQueue } from './broken-queue.ts';
import { collectGarbage, median, positiveInt } from './harness.ts';
import type { BenchQueue } from './loops.ts';
import { NaiveQueue } from './naive-queue.ts';

type Loops = typeof import('./loops.ts');

const KEYS = positiveInt('BENCH_KEYS', 1_000_000);
const RUNS = positiveInt('BENCH_RUNS', 7);
const WARMUP_KEYS = Math.min(KEYS, 100_000);
const WARMUP_RUNS = 3;

/** Goals (issue, perf-reliability.md A1 and A7 P5/P6). */
const GOAL_OPS_PER_S = 1_000_000;
const GOAL_RATIO = 0.5;
const GOAL_DEDUPE_ADD_NS = 50;
const GOAL_RECONCILES_PER_WINDOW = 2;
/** Issue 16: instrumentation costs at most 10 % of throughput; the event-to-reconcile histogram <= 1 µs per key. */
const GOAL_METRICS_RATIO = 0.9;
const GOAL_EVENT_LATENCY_NS = 1000;

const correctness: string[] = [];
const verdicts: string[] = [];
/**
 * Main-thread CPU time / wall time of each counted throughput run. Close to 1 on a quiet machine;
 * lower means the bench thread was waiting for a CPU (another process was running) and the
 * figures are pessimistic and noisy.
 */
const cpuShares: number[] = [];
/** Queues kept alive for the whole run (see main). */
const resident: BenchQueue[] = [];

function loadavg(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

function check(ok: boolean, what: string): void {
  if (!ok) correctness.push(what);
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

function fmtInt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

function fmt(value: number, digits = 2): string {
  return value.toFixed(digits);
}

function row(cells: readonly (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  console.log(row(header));
  console.log(row(header.map(() => '---')));
  for (const r of rows) console.log(row(r));
  console.log('');
}

function verdict(ok: boolean, text: string): void {
  const line = `${ok ? 'PASS' : 'FAIL'}  ${text}`;
  verdicts.push(line);
}

/**
 * Distinct keys shaped like `namespace/name`. They are put through a throwaway Set once so each
 * string is flattened and its hash cached before any timed run: the first counted run does not
 * pay for it and the later ones do not get it for free.
 */
function makeKeys(n: number, name: (i: number) => string): string[] {
  const keys = Array.from({ length: n }, (_, i) => name(i));
  if (new Set(keys).size !== n) throw new Error('queue bench: duplicate keys');
  return keys;
}

// ---------------------------------------------------------------------------------------------
// 1. Throughput

interface Subject {
  readonly name: string;
  readonly make: () => BenchQueue;
  readonly loops: Loops;
}

interface Variant {
  readonly id: string;
  readonly what: string;
  /** Gated by the goals (the async `get` shape); false for informative rows. */
  readonly gated: boolean;
  readonly run: (loops: Loops, queue: BenchQueue, keys: readonly string[]) => number | Promise<number>;
}

interface Samples {
  readonly opsPerS: number[];
}

async function loadLoops(tag: string): Promise<Loops> {
  return (await import(new URL(`./loops.ts?${tag}`, import.meta.url).href)) as Loops;
}

async function timeRun(subject: Subject, variant: Variant, keys: readonly string[]): Promise<number> {
  const queue = subject.make();
  collectGarbage(1);
  const cpu0 = process.threadCpuUsage();
  const t0 = performance.now();
  const out = await variant.run(subject.loops, queue, keys);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.threadCpuUsage(cpu0);
  cpuShares.push((cpu.user + cpu.system) / 1e6 / seconds);
  check(out === keys.length, `${subject.name} ${variant.id}: ${out} keys out of ${keys.length}`);
  check(
    queue.length === 0 && queue.processingCount === 0,
    `${subject.name} ${variant.id}: queue not empty after the run (${queue.length} queued, ${queue.processingCount} processing)`,
  );
  return keys.length / seconds;
}

async function throughput(subjects: readonly [Subject, Subject], keys: readonly string[]): Promise<void> {
  const variants: readonly Variant[] = [
    {
      id: 'fill-drain',
      what: `add ${fmtInt(keys.length)} keys, then ${fmtInt(keys.length)} × (await get + done)`,
      gated: true,
      run: (loops, queue, k) => loops.fillThenDrain(queue, k),
    },
    {
      id: 'batch-1000',
      what: 'interleaved: add 1 000, then 1 000 × (await get + done), repeated',
      gated: true,
      run: (loops, queue, k) => loops.batched(queue, k, 1000),
    },
    {
      id: 'one-by-one',
      what: 'interleaved: add, await get, done, key by key',
      gated: true,
      run: (loops, queue, k) => loops.oneByOne(queue, k),
    },
    {
      id: 'fill-drain-sync',
      what: 'as fill-drain with tryGet (no promise); informative',
      gated: false,
      run: (loops, queue, k) => loops.fillThenDrainSync(queue, k),
    },
  ];

  const warm = keys.slice(0, WARMUP_KEYS);
  for (const variant of variants) {
    for (let i = 0; i < WARMUP_RUNS; i++) for (const s of subjects) await timeRun(s, variant, warm);
  }

  const [subject, baseline] = subjects;
  const results = new Map<string, { a: Samples; b: Samples; pairs: number[] }>();
  for (const variant of variants) {
    const a: Samples = { opsPerS: [] };
    const b: Samples = { opsPerS: [] };
    const pairs: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      // A B, then B A: neither queue always runs right after the other's garbage.
      let x: number;
      let y: number;
      if (r % 2 === 0) {
        x = await timeRun(subject, variant, keys);
        y = await timeRun(baseline, variant, keys);
      } else {
        y = await timeRun(baseline, variant, keys);
        x = await timeRun(subject, variant, keys);
      }
      a.opsPerS.push(x);
      b.opsPerS.push(y);
      pairs.push(x / y);
    }
    results.set(variant.id, { a, b, pairs });
  }

  console.log(`### Throughput: add+get+done of ${fmtInt(keys.length)} distinct keys, ${RUNS} runs each\n`);
  console.log('ops/s = keys / wall seconds of the whole run (one op = one add + one get + one done).\n');
  const rows: (string | number)[][] = [];
  for (const variant of variants) {
    const r = results.get(variant.id);
    if (r === undefined) continue;
    for (const [name, s] of [
      [subject.name, r.a],
      [baseline.name, r.b],
    ] as const) {
      rows.push([
        variant.id,
        name,
        fmtInt(Math.min(...s.opsPerS)),
        fmtInt(median(s.opsPerS)),
        fmtInt(Math.max(...s.opsPerS)),
        fmt(1e9 / median(s.opsPerS), 0),
      ]);
    }
  }
  table(['variant', 'queue', 'min ops/s', 'median ops/s', 'max ops/s', 'ns/op (median)'], rows);

  const ratioRows: (string | number)[][] = [];
  for (const variant of variants) {
    const r = results.get(variant.id);
    if (r === undefined) continue;
    const ratio = median(r.a.opsPerS) / median(r.b.opsPerS);
    ratioRows.push([
      variant.id,
      fmt(ratio),
      `${fmt(Math.min(...r.pairs))} / ${fmt(median(r.pairs))} / ${fmt(Math.max(...r.pairs))}`,
      variant.gated ? 'yes' : 'no (informative)',
    ]);
    if (variant.gated) {
      const ops = median(r.a.opsPerS);
      verdict(
        ratio >= GOAL_RATIO,
        `${variant.id}: WorkQueue/naive = ${fmt(ratio)} (goal >= ${GOAL_RATIO}, within 2x of the baseline)`,
      );
      verdict(
        ops >= GOAL_OPS_PER_S,
        `${variant.id}: WorkQueue ${fmtInt(ops)} add+get+done/s (goal >= ${fmtInt(GOAL_OPS_PER_S)})`,
      );
    }
  }
  console.log('Ratio WorkQueue / naive (ops/s): of the medians, and per A/B pair (min / median / max).\n');
  table(['variant', 'ratio of medians', 'pairwise min / median / max', 'gated'], ratioRows);
  for (const v of variants) console.log(`- ${v.id}: ${v.what}`);
  console.log('');
}

async function dedupe(subjects: readonly [Subject, Subject]): Promise<void> {
  const queued = makeKeys(1000, (i) => `dedupe/key-${i}`);
  const rounds = 1000;
  const measure = (s: Subject): number => {
    const queue = s.make();
    for (const key of queued) queue.add(key);
    collectGarbage(1);
    const t0 = performance.now();
    const adds = s.loops.dedupeAdds(queue, queued, rounds);
    const ns = ((performance.now() - t0) * 1e6) / adds;
    const out = s.loops.drain(queue);
    check(out === queued.length, `${s.name} dedupe: ${out} keys out of ${queued.length}`);
    return ns;
  };
  for (let i = 0; i < WARMUP_RUNS; i++) for (const s of subjects) measure(s);
  const ns: [number[], number[]] = [[], []];
  for (let r = 0; r < RUNS; r++) {
    ns[0].push(measure(subjects[0]));
    ns[1].push(measure(subjects[1]));
  }
  console.log(`### Add of an already-queued key (dedupe path): 1 000 queued keys × ${fmtInt(rounds)} adds\n`);
  table(
    ['queue', 'min ns/add', 'median ns/add', 'max ns/add'],
    subjects.map((s, i) => {
      const v = ns[i as 0 | 1];
      return [s.name, fmt(Math.min(...v), 1), fmt(median(v), 1), fmt(Math.max(...v), 1)];
    }),
  );
  const m = median(ns[0]);
  verdict(
    m <= GOAL_DEDUPE_ADD_NS,
    `dedupe add: WorkQueue ${fmt(m, 1)} ns (goal <= ${GOAL_DEDUPE_ADD_NS} ns, A7 P5)`,
  );
}

/** controller-runtime's reconcile.Request shape. */
interface Request {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Informative: what key identity costs. The same fill-drain loop with string keys, with
 * `{ namespace, name }` object keys and the default `keyOf` (requestKey, sorted-key JSON, called
 * by every add and done), and with object keys and a `keyOf` that concatenates.
 */
async function keyIdentity(): Promise<void> {
  const n = Math.max(1, Math.floor(KEYS / 5));
  const loops = await loadLoops('keys');
  const requests: Request[] = Array.from({ length: n }, (_, i) => ({
    namespace: `namespace-${i % 1000}`,
    name: `object-${i}`,
  }));
  const strings = makeKeys(n, (i) => `namespace-${i % 1000}/object-${i}`);
  const cases: { what: string; run: (keys: number) => Promise<number> }[] = [
    {
      what: 'WorkQueue<string>',
      run: (k) => loops.fillThenDrain(new WorkQueue<string>(), strings.slice(0, k)),
    },
    {
      what: 'WorkQueue<Request>, default keyOf (requestKey)',
      run: (k) => loops.fillThenDrain(new WorkQueue<Request>(), requests.slice(0, k)),
    },
    {
      what: 'WorkQueue<Request>, keyOf = namespace + "/" + name',
      run: (k) =>
        loops.fillThenDrain(
          new WorkQueue<Request>({ keyOf: (r) => `${r.namespace}/${r.name}` }),
          requests.slice(0, k),
        ),
    },
  ];
  for (let i = 0; i < WARMUP_RUNS; i++) for (const c of cases) await c.run(Math.min(n, 20_000));
  const samples = cases.map(() => [] as number[]);
  for (let r = 0; r < RUNS; r++) {
    for (const [i, c] of cases.entries()) {
      collectGarbage(1);
      const t0 = performance.now();
      const out = await c.run(n);
      const seconds = (performance.now() - t0) / 1000;
      check(out === n, `key identity ${c.what}: ${out} keys out of ${n}`);
      samples[i]?.push(n / seconds);
    }
  }
  console.log(`### Key identity (informative): fill-drain of ${fmtInt(n)} keys, ${RUNS} runs each
`);
  const base = median(samples[0] ?? []);
  table(
    ['keys', 'min ops/s', 'median ops/s', 'max ops/s', 'vs string keys'],
    cases.map((c, i) => {
      const v = samples[i] ?? [];
      return [
        c.what,
        fmtInt(Math.min(...v)),
        fmtInt(median(v)),
        fmtInt(Math.max(...v)),
        fmt(median(v) / base),
      ];
    }),
  );
}

/**
 * Issue 16: the cost of @converge/metrics' work queue hooks (adds, retries, queue and work
 * durations, event-to-reconcile latency, each a prom-client counter or histogram) against the same
 * queue without hooks, in one run; and the event-to-reconcile histogram alone (hooks with it
 * against hooks without it). Every add carries an object-event cause, as an informer's does.
 */
async function metricsCost(allKeys: readonly string[]): Promise<void> {
  type MetricsLoops = typeof import('./queue-metrics.ts');
  const load = async (tag: string): Promise<MetricsLoops> =>
    (await import(new URL(`./queue-metrics.ts?${tag}`, import.meta.url).href)) as MetricsLoops;
  const n = Math.max(1, Math.floor(allKeys.length / 5));
  const keys = allKeys.slice(0, n);
  const metrics = new Metrics({ defaultMetrics: false });
  const hooks = metrics.queueHooks('bench');
  const { onEventLatency: _withoutEvents, ...withoutEvents } = hooks;
  const cases: { name: string; make: () => WorkQueue<string>; loops: MetricsLoops }[] = [
    { name: 'no metrics', make: () => new WorkQueue<string>(), loops: await load('plain') },
    {
      name: 'metrics without event latency',
      make: () => new WorkQueue<string>({ metrics: withoutEvents as WorkQueueMetrics }),
      loops: await load('no-event'),
    },
    { name: 'metrics', make: () => new WorkQueue<string>({ metrics: hooks }), loops: await load('metrics') },
  ];
  for (const c of cases) {
    const queue = c.make();
    queue.add('resident/processing');
    queue.tryGet();
    queue.add('resident/queued');
    resident.push(queue);
  }
  const shapes = [
    { id: 'one-by-one', run: (l: MetricsLoops, q: WorkQueue<string>) => l.oneByOneWithCause(q, keys) },
    { id: 'batch-1000', run: (l: MetricsLoops, q: WorkQueue<string>) => l.batchedWithCause(q, keys) },
  ];
  const warm = keys.slice(0, Math.min(n, 20_000));
  for (let i = 0; i < WARMUP_RUNS; i++) {
    for (const c of cases) {
      await c.loops.oneByOneWithCause(c.make(), warm);
      await c.loops.batchedWithCause(c.make(), warm);
    }
  }
  console.log(
    `### Metrics instrumentation (issue 16): ${fmtInt(n)} keys per run, ${RUNS} runs each, orders rotated\n`,
  );
  console.log(
    "ops/s of add (with a `modified` cause) + get + done, by wall time and by the bench thread's CPU time (user + system: what the work itself cost, little changed by other processes on the machine); the verdicts use CPU time.\n",
  );
  const rows: (string | number)[][] = [];
  for (const shape of shapes) {
    const wall = cases.map(() => [] as number[]);
    const cpu = cases.map(() => [] as number[]);
    for (let r = 0; r < RUNS; r++) {
      for (let j = 0; j < cases.length; j++) {
        const i = (j + r) % cases.length;
        const c = cases[i] as (typeof cases)[number];
        const queue = c.make();
        collectGarbage(1);
        const cpu0 = process.threadCpuUsage();
        const t0 = performance.now();
        const out = await shape.run(c.loops, queue);
        const seconds = (performance.now() - t0) / 1000;
        const used = process.threadCpuUsage(cpu0);
        check(out === n, `metrics ${shape.id} ${c.name}: ${out} keys out of ${n}`);
        check(
          queue.length === 0 && queue.processingCount === 0,
          `metrics ${shape.id} ${c.name}: queue not empty`,
        );
        wall[i]?.push(n / seconds);
        cpu[i]?.push(n / ((used.user + used.system) / 1e6));
      }
    }
    const wallMedians = wall.map((v) => median(v));
    const cpuMedians = cpu.map((v) => median(v));
    for (const [i, c] of cases.entries()) {
      const w = wallMedians[i] as number;
      const m = cpuMedians[i] as number;
      rows.push([
        shape.id,
        c.name,
        fmtInt(w),
        fmt(1e9 / w, 0),
        fmtInt(m),
        fmt(1e9 / m, 0),
        fmt(m / (cpuMedians[0] as number)),
      ]);
    }
    const ratio = (cpuMedians[2] as number) / (cpuMedians[0] as number);
    const eventNs = 1e9 / (cpuMedians[2] as number) - 1e9 / (cpuMedians[1] as number);
    const costNs = 1e9 / (cpuMedians[2] as number) - 1e9 / (cpuMedians[0] as number);
    verdict(
      ratio >= GOAL_METRICS_RATIO,
      `metrics ${shape.id}: with/without instrumentation = ${fmt(ratio)} by CPU time, +${fmt(costNs, 0)} ns per key (goal >= ${GOAL_METRICS_RATIO}, cost <= 10 %)`,
    );
    verdict(
      eventNs <= GOAL_EVENT_LATENCY_NS,
      `metrics ${shape.id}: event-to-reconcile histogram ${fmt(eventNs, 0)} ns per key by CPU time (goal <= ${GOAL_EVENT_LATENCY_NS} ns)`,
    );
  }
  table(
    [
      'shape',
      'queue',
      'median ops/s (wall)',
      'ns/op (wall)',
      'median ops/s (CPU)',
      'ns/op (CPU)',
      'vs no metrics (CPU)',
    ],
    rows,
  );
  await controllerCost(load, keys);
}

/**
 * The same cost per reconcile of a controller (4 workers, a no-op reconcile that returns at once),
 * with and without `metrics.instrument(controller)`: the reconcile metrics (result counters, time
 * histogram, causes) come on top of the queue's.
 */
async function controllerCost(
  load: (tag: string) => Promise<typeof import('./queue-metrics.ts')>,
  keys: readonly string[],
): Promise<void> {
  const n = keys.length;
  const cases = [
    { name: 'controller, no metrics', instrument: false, loops: await load('controller-plain') },
    { name: 'controller, metrics', instrument: true, loops: await load('controller-metrics') },
  ];
  const once = async (
    c: (typeof cases)[number],
    k: readonly string[],
  ): Promise<{ wall: number; cpu: number }> => {
    let left = k.length;
    let finished: () => void = () => {};
    const all = new Promise<void>((resolve) => (finished = resolve));
    const controller = new Controller<string>({
      name: 'bench',
      maxConcurrentReconciles: 4,
      reconciler: () => {
        if (--left === 0) finished();
      },
    });
    if (c.instrument) new Metrics({ defaultMetrics: false }).instrument(controller);
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await nextMacrotask();
    collectGarbage(1);
    const cpu0 = process.threadCpuUsage();
    const t0 = performance.now();
    const out = await c.loops.controllerRun(controller, k, () => all);
    const seconds = (performance.now() - t0) / 1000;
    const used = process.threadCpuUsage(cpu0);
    stop.abort();
    await running;
    check(out === k.length, `metrics ${c.name}: ${out} reconciles out of ${k.length}`);
    return { wall: k.length / seconds, cpu: k.length / ((used.user + used.system) / 1e6) };
  };
  for (let i = 0; i < WARMUP_RUNS; i++)
    for (const c of cases) await once(c, keys.slice(0, Math.min(n, 20_000)));
  const wall = cases.map(() => [] as number[]);
  const cpu = cases.map(() => [] as number[]);
  for (let r = 0; r < RUNS; r++) {
    for (let j = 0; j < cases.length; j++) {
      const i = (j + r) % cases.length;
      const result = await once(cases[i] as (typeof cases)[number], keys);
      wall[i]?.push(result.wall);
      cpu[i]?.push(result.cpu);
    }
  }
  const cpuMedians = cpu.map((v) => median(v));
  table(
    [
      'reconciles',
      'median reconciles/s (wall)',
      'ns/reconcile (wall)',
      'median reconciles/s (CPU)',
      'ns/reconcile (CPU)',
      'vs no metrics (CPU)',
    ],
    cases.map((c, i) => {
      const w = median(wall[i] ?? []);
      const m = cpuMedians[i] as number;
      return [
        c.name,
        fmtInt(w),
        fmt(1e9 / w, 0),
        fmtInt(m),
        fmt(1e9 / m, 0),
        fmt(m / (cpuMedians[0] as number)),
      ];
    }),
  );
  const ratio = (cpuMedians[1] as number) / (cpuMedians[0] as number);
  const costNs = 1e9 / (cpuMedians[1] as number) - 1e9 / (cpuMedians[0] as number);
  verdict(
    ratio >= GOAL_METRICS_RATIO,
    `metrics controller: with/without instrumentation = ${fmt(ratio)} by CPU time, +${fmt(costNs, 0)} ns per reconcile (goal >= ${GOAL_METRICS_RATIO}, cost <= 10 %)`,
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Update storm

interface StormConfig {
  readonly id: string;
  readonly keys: number;
  readonly addsPerKey: number;
  readonly workers: number;
  readonly reconcileMs: number;
  /** Distinct keys added back to back (round-robin over the keys), then a pause. */
  readonly burst: number;
  /** Pause between bursts: milliseconds of setTimeout, or 0 for one setImmediate turn. */
  readonly pauseMs: number;
}

const ADD = 0;
const START = 1;
const END = 2;

interface TraceEvent {
  readonly kind: typeof ADD | typeof START | typeof END;
  readonly key: number;
  readonly t: number;
}

interface StormResult {
  readonly config: StormConfig;
  readonly queue: string;
  readonly adds: number;
  readonly reconciles: number;
  readonly perKeyMean: number;
  readonly perKeyMax: number;
  readonly windows: number;
  readonly windowsPerKeyMean: number;
  readonly windowsPerKeyMax: number;
  readonly perWindowMean: number;
  readonly perWindowMax: number;
  readonly extra: number;
  readonly waitP50: number;
  readonly waitP99: number;
  readonly waitMax: number;
  readonly maxInFlight: number;
  readonly addSpanMs: number;
  readonly totalMs: number;
  readonly violations: readonly string[];
}

async function storm(name: string, queue: BenchQueue, config: StormConfig): Promise<StormResult> {
  const names = Array.from({ length: config.keys }, (_, i) => `storm/key-${i}`);
  const index = new Map(names.map((n, i) => [n, i]));
  const trace: TraceEvent[] = [];
  const violations: string[] = [];
  const controller = new AbortController();
  let inFlight = 0;
  let maxInFlight = 0;

  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get(controller.signal);
      if (key === undefined) return;
      const k = index.get(key);
      if (k === undefined) {
        violations.push(`get() returned an unknown key ${key}`);
        queue.done(key);
        continue;
      }
      trace.push({ kind: START, key: k, t: performance.now() });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await sleep(config.reconcileMs);
      } finally {
        inFlight--;
        trace.push({ kind: END, key: k, t: performance.now() });
        queue.done(key);
      }
    }
  };

  const t0 = performance.now();
  const workers = Array.from({ length: config.workers }, () => worker());
  // Round-robin over the keys, `burst` distinct keys at a time. A burst never holds a key twice,
  // so no add of a key can fall between the queue handing it to a waiting worker and that
  // worker recording START (which happens in the microtask after the burst).
  let next = 0;
  const total = config.keys * config.addsPerKey;
  for (let sent = 0; sent < total; ) {
    const n = Math.min(config.burst, config.keys, total - sent);
    for (let i = 0; i < n; i++) {
      trace.push({ kind: ADD, key: next, t: performance.now() });
      queue.add(names[next] as string);
      next = (next + 1) % config.keys;
    }
    sent += n;
    if (config.pauseMs > 0) await sleep(config.pauseMs);
    else await nextMacrotask();
  }
  const addSpanMs = performance.now() - t0;
  // All adds are in; wait until nothing is queued or running, then stop the workers.
  while (queue.length > 0 || inFlight > 0 || queue.processingCount > 0) await sleep(1);
  controller.abort();
  await Promise.all(workers);
  const totalMs = performance.now() - t0;

  // Trace analysis. Per key, in trace order:
  // - a *window* opens with an add that finds no add of that key still waiting for a reconcile
  //   start (i.e. the first add after the previous START, or the very first add);
  // - a START closes the open window (it covers every add before it); a START with no open
  //   window is *extra* and is charged to the window it follows;
  // - exclusivity: START while the key is in flight, END without START are violations;
  // - liveness: a window still open at the end is an add that was never reconciled.
  const open = new Array<boolean>(config.keys).fill(false);
  const running = new Array<boolean>(config.keys).fill(false);
  const openedAt = new Array<number>(config.keys).fill(0);
  const starts = new Array<number>(config.keys).fill(0);
  const windows = new Array<number>(config.keys).fill(0);
  const lastWindowStarts = new Array<number>(config.keys).fill(0);
  const waits: number[] = [];
  let perWindowMax = 0;
  let extra = 0;
  let adds = 0;
  for (const ev of trace) {
    const k = ev.key;
    if (ev.kind === ADD) {
      adds++;
      if (!open[k]) {
        open[k] = true;
        openedAt[k] = ev.t;
        windows[k] = (windows[k] as number) + 1;
      }
    } else if (ev.kind === START) {
      if (running[k]) violations.push(`key ${k} started while already in flight (t=${fmt(ev.t - t0)} ms)`);
      running[k] = true;
      starts[k] = (starts[k] as number) + 1;
      if (open[k]) {
        open[k] = false;
        waits.push(ev.t - (openedAt[k] as number));
        lastWindowStarts[k] = 1;
      } else if (windows[k] === 0) {
        violations.push(`key ${k} started before it was ever added`);
      } else {
        extra++;
        lastWindowStarts[k] = (lastWindowStarts[k] as number) + 1;
      }
      perWindowMax = Math.max(perWindowMax, lastWindowStarts[k] as number);
    } else {
      if (!running[k]) violations.push(`key ${k} ended without a start`);
      running[k] = false;
    }
  }
  for (let k = 0; k < config.keys; k++) {
    if (open[k]) violations.push(`key ${k}: an add was never followed by a reconcile (lost update)`);
    if (starts[k] === 0) violations.push(`key ${k} was never reconciled`);
  }
  if (maxInFlight > config.workers)
    violations.push(`${maxInFlight} reconciles in flight > ${config.workers} workers`);
  if (adds !== total) violations.push(`${adds} adds traced instead of ${total}`);

  const reconciles = starts.reduce((a, b) => a + b, 0);
  const windowCount = windows.reduce((a, b) => a + b, 0);
  return {
    config,
    queue: name,
    adds,
    reconciles,
    perKeyMean: reconciles / config.keys,
    perKeyMax: Math.max(...starts),
    windows: windowCount,
    windowsPerKeyMean: windowCount / config.keys,
    windowsPerKeyMax: Math.max(...windows),
    perWindowMean: reconciles / windowCount,
    perWindowMax,
    extra,
    waitP50: quantile(waits, 0.5),
    waitP99: quantile(waits, 0.99),
    waitMax: quantile(waits, 1),
    maxInFlight,
    addSpanMs,
    totalMs,
    violations,
  };
}

async function storms(): Promise<void> {
  const base = { keys: 1000, addsPerKey: 50, workers: 4, reconcileMs: 5 };
  const configs: StormConfig[] = [
    { id: 'spread', ...base, burst: 100, pauseMs: 4 },
    { id: 'burst', ...base, burst: 1000, pauseMs: 0 },
  ];
  const results: StormResult[] = [];
  for (const config of configs) {
    results.push(await storm('WorkQueue', new WorkQueue<string>(), config));
    results.push(await storm('naive', new NaiveQueue<string>(), config));
  }

  console.log('### Update storm: 1 000 keys × 50 adds, 4 workers, 5 ms reconciles (real timers)\n');
  for (const c of configs) {
    const how =
      c.pauseMs > 0
        ? `bursts of ${c.burst} distinct keys every ${c.pauseMs} ms`
        : `one round of all ${c.burst} keys per setImmediate turn`;
    console.log(`- ${c.id}: adds round-robin over the keys, ${how}`);
  }
  console.log('');
  table(
    [
      'storm',
      'queue',
      'adds',
      'reconciles',
      'per key mean / max',
      'windows',
      'windows per key mean / max',
      'reconciles per window mean / max',
      'extra',
      'window wait p50 / p99 / max ms',
      'adds span ms',
      'total ms',
    ],
    results.map((r) => [
      r.config.id,
      r.queue,
      fmtInt(r.adds),
      fmtInt(r.reconciles),
      `${fmt(r.perKeyMean)} / ${r.perKeyMax}`,
      fmtInt(r.windows),
      `${fmt(r.windowsPerKeyMean)} / ${r.windowsPerKeyMax}`,
      `${fmt(r.perWindowMean, 3)} / ${r.perWindowMax}`,
      r.extra,
      `${fmt(r.waitP50, 0)} / ${fmt(r.waitP99, 0)} / ${fmt(r.waitMax, 0)}`,
      fmt(r.addSpanMs, 0),
      fmt(r.totalMs, 0),
    ]),
  );

  // Self-test of the trace checker: on queues known to break the contract it must find violations.
  // Long reconciles and adds every millisecond, so adds keep landing on processing keys. With
  // fewer keys than workers an add of a processing key finds an idle worker at once (exclusivity
  // probe); with more keys than workers some keys are always processing when the last round of
  // adds lands (lost-update probe).
  const probe = { id: 'self-test', addsPerKey: 20, workers: 4, reconcileMs: 5, pauseMs: 1 };
  const broken = [
    {
      what: 'a queue without per-key exclusivity',
      queue: new NoExclusivityQueue<string>(),
      config: { ...probe, keys: 2, burst: 2 },
    },
    {
      what: 'WorkQueue with coalesceWhileProcessing: false (drops adds while processing)',
      queue: new WorkQueue<string>({ coalesceWhileProcessing: false }),
      config: { ...probe, keys: 8, burst: 8 },
    },
  ];
  console.log('Checker self-test (each must be caught):\n');
  for (const b of broken) {
    const r = await storm(b.what, b.queue, b.config);
    const caught = r.violations.length > 0;
    console.log(`- ${b.what}: ${r.violations.length} violations, e.g. "${r.violations[0] ?? 'none'}"`);
    check(caught, `storm checker self-test: ${b.what} was not caught`);
  }
  console.log('');

  for (const r of results) {
    const tag = `storm ${r.config.id} ${r.queue}`;
    for (const v of r.violations.slice(0, 10)) correctness.push(`${tag}: ${v}`);
    if (r.violations.length > 10) correctness.push(`${tag}: … ${r.violations.length - 10} more violations`);
    if (r.queue === 'WorkQueue') {
      verdict(
        r.perWindowMax <= GOAL_RECONCILES_PER_WINDOW,
        `storm ${r.config.id}: at most ${r.perWindowMax} reconciles per key per window, mean ${fmt(r.perWindowMean, 3)} (goal <= ${GOAL_RECONCILES_PER_WINDOW})`,
      );
      verdict(
        r.violations.length === 0,
        `storm ${r.config.id}: never concurrent per key, every add reconciled (${r.violations.length} violations)`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Fairness

async function getsUntil(queue: BenchQueue, target: string): Promise<number> {
  for (let n = 1; ; n++) {
    const key = await queue.get();
    if (key === undefined) throw new Error(`queue bench: ${target} never came out`);
    queue.done(key);
    if (key === target) return n;
  }
}

async function fairness(): Promise<void> {
  const backlog = 10_000;
  const fill = (queue: BenchQueue): void => {
    for (let i = 0; i < backlog; i++) queue.add(`a/key-${i}`);
  };
  const rows: (string | number)[][] = [];

  const fair = new WorkQueue<string>({ partitionOf: (key) => key.slice(0, key.indexOf('/')) });
  fill(fair);
  fair.add('b/key');
  rows.push(['WorkQueue, partitionOf = prefix before "/"', await getsUntil(fair, 'b/key')]);

  const plain = new WorkQueue<string>();
  fill(plain);
  plain.add('b/key');
  rows.push(['WorkQueue, one partition (default)', await getsUntil(plain, 'b/key')]);

  const prio = new WorkQueue<string>();
  fill(prio);
  prio.add('b/key', { priority: Priority.high });
  rows.push(['WorkQueue, one partition, B added with Priority.high', await getsUntil(prio, 'b/key')]);

  const naive = new NaiveQueue<string>();
  fill(naive);
  naive.add('b/key');
  rows.push(['naive (FIFO)', await getsUntil(naive, 'b/key')]);

  console.log(`### Fairness: ${fmtInt(backlog)} keys queued in partition A, then 1 key in partition B\n`);
  table(['queue', "gets until B's key comes out"], rows);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log('## Converge WorkQueue benchmark\n');
  console.log(`- date: ${new Date().toISOString()}`);
  console.log(
    `- machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} logical cores (${os.availableParallelism()} available), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM`,
  );
  console.log(`- os: ${os.type()} ${os.release()} ${os.arch()}`);
  console.log(`- load average at start (1/5/15 min): ${loadavg()}`);
  console.log(`- node: ${process.version}, V8 ${process.versions.v8}`);
  console.log(
    `- flags: ${process.execArgv.join(' ') || '(none)'}; gc between runs: ${globalThis.gc === undefined ? 'no (run with --expose-gc)' : 'yes'}`,
  );
  console.log(
    `- throughput: ${fmtInt(KEYS)} keys per run, ${WARMUP_RUNS} warm-up runs of ${fmtInt(WARMUP_KEYS)} keys, ${RUNS} counted runs per queue and variant, A/B alternated\n`,
  );
  if (RUNS < 5) console.log('(fewer than 5 runs: figures are indicative only)\n');

  const keys = makeKeys(KEYS, (i) => `namespace-${i % 1000}/object-${i}`);
  const subjects: [Subject, Subject] = [
    { name: 'WorkQueue', make: () => new WorkQueue<string>(), loops: await loadLoops('workqueue') },
    { name: 'naive', make: () => new NaiveQueue<string>(), loops: await loadLoops('naive') },
  ];
  // One resident queue of each kind stays alive for the whole process, with a key queued and one
  // processing, as a controller's queue would. Without it, gc() between runs frees every object
  // of the queue's internal classes, V8 drops their hidden classes from the inline caches, and each
  // run re-learns them: WorkQueue measured about 2x slower that way (and its dedupe add 3-4x).
  for (const s of subjects) {
    const queue = s.make();
    queue.add('resident/processing');
    queue.tryGet();
    queue.add('resident/queued');
    resident.push(queue);
  }

  if (process.env.BENCH_ONLY === 'metrics') {
    await metricsCost(keys);
    for (const line of verdicts) console.log(line);
    return;
  }
  await throughput(subjects, keys);
  await dedupe(subjects);
  await keyIdentity();
  await metricsCost(keys);
  await storms();
  await fairness();

  const share = median(cpuShares);
  console.log('### Machine contention\n');
  console.log(`- load average at end (1/5/15 min): ${loadavg()}`);
  console.log(
    `- bench thread CPU / wall over the throughput runs: median ${fmt(share)}, min ${fmt(Math.min(...cpuShares))} (1.00 = never waited for a CPU)`,
  );
  if (share < 0.9) {
    console.log('- WARNING: the machine was busy during the throughput runs; re-run on a quiet machine.');
  }
  console.log('');

  console.log('### Verdicts\n');
  for (const line of verdicts) console.log(line);
  if (correctness.length > 0) {
    console.log('\nCORRECTNESS FAILURES:');
    for (const c of correctness) console.log(`- ${c}`);
    process.exitCode = 1;
  } else {
    console.log(
      '\nCorrectness checks: all passed (keys in = keys out, queues empty after each run, storm traces clean).',
    );
  }
}

await main();
