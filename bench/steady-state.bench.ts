/**
 * Steady state, write → reconcile start: run alone with `npm run bench:steady-state`, or as part 2
 * of `npm run bench`. One embedded API server process (kube-sync-server.ts) holds BENCH_OBJECTS
 * (1 000) Widgets; a controller process (steady-state-client.ts) syncs them, then the server updates
 * them round-robin at BENCH_RATES (100, 1 000, 5 000) writes per second for BENCH_SECONDS (5),
 * stamping each write with the wall-clock time just before it. The controller records, once per
 * write it sees, the time from that stamp to the start of the reconcile that read it. Converge
 * (Informer + Controller) against client-node's informer feeding the simplest correct queue
 * (bench/naive-queue.ts), BENCH_RUNS (3) runs each, alternating. Figures: p50 / p99 / max per run,
 * median (min–max) over runs; writes seen (the rest were coalesced: a newer write of the same
 * object came first, which a level-based controller is allowed to do).
 *
 * BENCH_WARMUP_SECONDS (10) of the same writes, not measured, start each rate (V8 grows the young
 * generation of a controller whose cache keeps little only after a few seconds of writes).
 * Profiling knobs: BENCH_CLIENT_FLAGS (Node flags of the controller processes, e.g. `--trace-gc`),
 * BENCH_ALLOC_PROFILE=PREFIX (a sampling heap profile of each controller's measured writes) and
 * BENCH_ALLOC_PROFILE_SURVIVORS=1 (only what outlived the young generation).
 * BENCH_LOADS (quiet,cpu): each rate on a quiet machine, then beside one CPU-bound process. Per
 * write the latency is split where the controller's handler saw the event (before: the server's
 * fan-out, loopback, decode and informer; after: queue and worker), and each controller reports its
 * garbage collections and largest event-loop delay during the writes: the profile of a tail.
 *
 * Correctness (exit 1): every object's last write was seen by a reconcile, in every run.
 * Goals: Converge's p99 ≤ 10 ms at 1 000 writes/s; Converge's p99 ≤ client-node + the simplest
 * correct queue's at every rate and load (issue 29).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fmt, median, nonNegativeInt, positiveInt } from './harness.ts';
import type { ServerReady, WriteCommand, WriteDone } from './kube-sync-server.ts';
import {
  type ChartSpec,
  type CorrectnessCheck,
  finishPart,
  type GoalVerdict,
  type ResultTable,
} from './part-result.ts';
import type { LatencyReport, ReportRequest } from './steady-state-client.ts';

const OBJECTS = positiveInt('BENCH_OBJECTS', 1_000);
const SECONDS = positiveInt('BENCH_SECONDS', 5);
/** Seconds of the same writes before the measured ones (0: none). */
const WARMUP_SECONDS = nonNegativeInt('BENCH_WARMUP_SECONDS', 10);
const RUNS = positiveInt('BENCH_RUNS', 3);
const RATES = (process.env.BENCH_RATES ?? '100,1000,5000').split(',').map(Number);
if (RATES.some((r) => !Number.isSafeInteger(r) || r <= 0))
  throw new Error('BENCH_RATES must be positive integers');
const LOADS = (process.env.BENCH_LOADS ?? 'quiet,cpu').split(',') as Load[];
if (LOADS.length === 0 || LOADS.some((l) => l !== 'quiet' && l !== 'cpu'))
  throw new Error('BENCH_LOADS must list quiet and/or cpu');
type Load = 'quiet' | 'cpu';
const LOAD_LABEL: Record<Load, string> = {
  quiet: 'quiet',
  cpu: 'beside a CPU-bound process',
};
/** Extra Node flags for the controller processes, to profile them (e.g. `--trace-gc`, `--cpu-prof`). */
const CLIENT_FLAGS = (process.env.BENCH_CLIENT_FLAGS ?? '').split(' ').filter((f) => f !== '');
const PEERS = ['converge', 'client-node'] as const;
type Peer = (typeof PEERS)[number];
const LABEL: Record<Peer, string> = {
  converge: 'Converge (Informer + Controller)',
  'client-node': 'client-node informer + simplest correct queue',
};

interface Run {
  readonly rate: number;
  readonly load: Load;
  readonly peer: Peer;
  readonly p50: number;
  readonly p99: number;
  /** p99 of the part before the handler (server fan-out, loopback, decode, informer). */
  readonly deliveryP99: number;
  /** p99 of the part after it (handler → reconcile start: the queue and the worker). */
  readonly queueP99: number;
  readonly gcCount: number;
  readonly gcMaxMs: number;
  readonly loopDelayMaxMs: number;
  readonly max: number;
  readonly seen: number;
  readonly written: number;
  readonly writerLagMs: number;
}

const correctness: CorrectnessCheck[] = [];
const runs: Run[] = [];

function script(name: string): string {
  return fileURLToPath(new URL(name, import.meta.url));
}

/** The key of Widget `i` as the server names it (kube-sync-server.ts). */
function widgetKey(i: number): string {
  return `team-${(i % 100).toString().padStart(2, '0')}/widget-${i.toString().padStart(6, '0')}`;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

function once<T>(child: ChildProcess, accept: (message: unknown) => message is T, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      if (!accept(message)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number | null): void => {
      child.off('message', onMessage);
      reject(new Error(`${what}: the process exited (${code}) first`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function measure(
  server: ChildProcess,
  ready: ServerReady,
  peer: Peer,
  rate: number,
  load: Load,
  run: number,
): Promise<void> {
  const client = spawn(
    process.execPath,
    [...CLIENT_FLAGS, '--conditions=@converge/source', script('./steady-state-client.ts')],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_PEER: peer, BENCH_SERVER: JSON.stringify(ready) },
    },
  );
  try {
    await once(
      client,
      (m): m is { synced: true } => (m as { synced?: boolean }).synced === true,
      `${peer} sync`,
    );
    const tag = `${peer}-${rate}-${load}-${run}`;
    if (WARMUP_SECONDS > 0) {
      // The same writes, not measured: the process's young generation grows to what this rate
      // needs (V8 sizes it by what survives; a cache that just synced keeps little), the JIT warms.
      const warm: WriteCommand = {
        write: { rate, count: rate * WARMUP_SECONDS, objects: OBJECTS, tag: `${tag}-warm-up` },
      };
      server.send(warm);
      await once(server, (m): m is WriteDone => (m as WriteDone).tag === warm.write.tag, 'warm-up writes');
    }
    client.send({ measure: true });
    await once(
      client,
      (m): m is { measuring: true } => (m as { measuring?: boolean }).measuring === true,
      `${peer} measuring`,
    );
    const count = rate * SECONDS;
    const command: WriteCommand = { write: { rate, count, objects: OBJECTS, tag } };
    server.send(command);
    const done = await once(server, (m): m is WriteDone => (m as WriteDone).tag === tag, 'writes');
    // Each object's last write of the run, by key: the report waits until a reconcile saw them all
    // (a hang detector of 60 s, not a bound: on a loaded machine the last writes take their time).
    const lastOf = new Map<number, number>();
    for (let n = Math.max(0, count - OBJECTS); n < count; n++) lastOf.set(n % OBJECTS, done.firstSeq + n);
    const until: Record<string, number> = {};
    for (const [i, seq] of lastOf) until[widgetKey(i)] = seq;
    const request: ReportRequest = { report: true, until, waitMs: 60_000 };
    client.send(request);
    const report = await once(
      client,
      (m): m is LatencyReport => Array.isArray((m as LatencyReport).latenciesMs),
      'report',
    );
    const inRun = (_: number, i: number): boolean => {
      const seq = report.seqs[i] as number;
      return seq >= done.firstSeq && seq < done.firstSeq + count;
    };
    const sorted = report.latenciesMs.filter(inRun).sort((a, b) => a - b);
    const delivery = report.deliveryMs.filter(inRun).sort((a, b) => a - b);
    const queued = report.latenciesMs
      .map((ms, i) => ms - (report.deliveryMs[i] as number))
      .filter(inRun)
      .sort((a, b) => a - b);
    let lost = 0;
    for (const [key, seq] of Object.entries(until)) if ((report.lastSeqSeen[key] ?? -1) !== seq) lost++;
    correctness.push({
      check: `${LABEL[peer]} at ${rate}/s (${LOAD_LABEL[load]}) run ${run}: every object's last write reconciled`,
      ok: lost === 0,
      ...(lost > 0
        ? { detail: `${lost} of ${lastOf.size} objects never reconciled at their last write` }
        : {}),
    });
    const result: Run = {
      rate,
      load,
      peer,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      deliveryP99: quantile(delivery, 0.99),
      queueP99: quantile(queued, 0.99),
      gcCount: report.gc.count,
      gcMaxMs: report.gc.maxMs,
      loopDelayMaxMs: report.loopDelayMaxMs,
      max: quantile(sorted, 1),
      seen: sorted.length,
      written: done.written,
      writerLagMs: done.maxLagMs,
    };
    runs.push(result);
    console.log(
      `${rate}/s ${load.padEnd(5)} run ${run} ${peer.padEnd(11)} p50 ${fmt(result.p50, 2)}  p99 ${fmt(result.p99, 2)} (delivery ${fmt(result.deliveryP99, 2)}, queue ${fmt(result.queueP99, 2)})  max ${fmt(result.max, 1)} ms; ${result.seen}/${result.written} writes seen; writer at most ${fmt(result.writerLagMs, 1)} ms behind; GC ${result.gcCount}× max ${fmt(result.gcMaxMs, 1)} ms; loop delay max ${fmt(result.loopDelayMaxMs, 1)} ms`,
    );
  } finally {
    client.kill('SIGKILL');
  }
}

function show(values: readonly number[], digits = 2): string {
  if (values.length === 0) return '—';
  const med = median(values);
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? fmt(med, digits) : `${fmt(med, digits)} (${fmt(lo, digits)}–${fmt(hi, digits)})`;
}

async function main(): Promise<void> {
  const server = spawn(process.execPath, ['--conditions=@converge/source', script('./kube-sync-server.ts')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      BENCH_OBJECTS: String(OBJECTS),
      BENCH_SHAPE: 'widget',
      BENCH_TOKEN: randomBytes(24).toString('base64url'),
    },
  });
  try {
    const ready = await once(
      server,
      (m): m is ServerReady => typeof (m as ServerReady).url === 'string',
      'server',
    );
    for (const load of LOADS) {
      // The other work of a user's laptop or a CI runner: one process spinning on one of the cores.
      const spinner =
        load === 'cpu' ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
      try {
        for (const rate of RATES)
          for (let run = 0; run < RUNS; run++)
            for (const peer of run % 2 === 0 ? PEERS : [...PEERS].reverse())
              await measure(server, ready, peer, rate, load, run);
      } finally {
        spinner?.kill('SIGKILL');
      }
    }
  } finally {
    server.disconnect();
    server.kill();
  }

  const pick = (rate: number, peer: Peer, load: Load = 'quiet'): Run[] =>
    runs.filter((r) => r.rate === rate && r.peer === peer && r.load === load);
  const table: ResultTable = {
    title: `Write → reconcile start, ms (${OBJECTS.toLocaleString('en-US')} Widgets updated round-robin for ${SECONDS} s; median (min–max) over ${RUNS} runs)`,
    columns: [
      'machine',
      'writes/s',
      'system',
      'p50',
      'p99',
      'max',
      'writes seen / written',
      'writer behind schedule at worst, ms',
    ],
    rows: LOADS.flatMap((load) =>
      RATES.flatMap((rate) =>
        PEERS.map((peer) => {
          const r = pick(rate, peer, load);
          return [
            LOAD_LABEL[load],
            rate.toLocaleString('en-US'),
            LABEL[peer],
            show(r.map((x) => x.p50)),
            show(r.map((x) => x.p99)),
            show(
              r.map((x) => x.max),
              1,
            ),
            show(
              r.map((x) => x.seen),
              0,
            ) + ` / ${(rate * SECONDS).toLocaleString('en-US')}`,
            show(
              r.map((x) => x.writerLagMs),
              1,
            ),
          ];
        }),
      ),
    ),
  };
  const where: ResultTable = {
    title:
      'Where the p99 goes, ms (median (min–max) over runs): before the handler (server fan-out, loopback, decode, informer) and after it (queue and worker); the controller process’s garbage collections and event-loop delay during the writes',
    columns: [
      'machine',
      'writes/s',
      'system',
      'p99 before the handler',
      'p99 after it',
      'GCs',
      'largest GC pause',
      'largest loop delay',
    ],
    rows: LOADS.flatMap((load) =>
      RATES.flatMap((rate) =>
        PEERS.map((peer) => {
          const r = pick(rate, peer, load);
          return [
            LOAD_LABEL[load],
            rate.toLocaleString('en-US'),
            LABEL[peer],
            show(r.map((x) => x.deliveryP99)),
            show(r.map((x) => x.queueP99)),
            show(
              r.map((x) => x.gcCount),
              0,
            ),
            show(
              r.map((x) => x.gcMaxMs),
              1,
            ),
            show(
              r.map((x) => x.loopDelayMaxMs),
              1,
            ),
          ];
        }),
      ),
    ),
  };
  const chart = (what: 'p50' | 'p99'): ChartSpec => ({
    id: `steady-state-${what}`,
    title: `Write → reconcile start, ${what}`,
    xLabel: 'writes per second (log scale)',
    yLabel: 'ms (lower is better)',
    logX: true,
    series: PEERS.map((peer) => ({
      name: LABEL[peer],
      points: RATES.map((rate) => {
        const v = pick(rate, peer).map((x) => x[what]);
        return { x: rate, y: median(v), min: Math.min(...v), max: Math.max(...v) };
      }),
    })),
  });
  const goals: GoalVerdict[] = [];
  const at1000 = pick(1000, 'converge');
  const cn1000 = pick(1000, 'client-node');
  if (at1000.length === 0)
    goals.push({
      goal: 'Write → reconcile start p99 ≤ 10 ms at 1 000 writes/s on loopback',
      met: false,
      measured: 'not measured in this run (1 000 writes/s)',
    });
  else {
    const p99 = median(at1000.map((x) => x.p99));
    goals.push({
      goal: 'Write → reconcile start p99 ≤ 10 ms at 1 000 writes/s on loopback',
      met: p99 <= 10,
      measured: `p99 ${fmt(p99, 2)} ms (runs ${fmt(Math.min(...at1000.map((x) => x.p99)), 2)}–${fmt(Math.max(...at1000.map((x) => x.p99)), 2)})${cn1000.length === 0 ? '' : `; client-node + queue ${fmt(median(cn1000.map((x) => x.p99)), 2)} ms`}`,
    });
  }
  // Issue 29: the tail no worse than the simplest correct TypeScript controller's, at every rate,
  // on a quiet machine and beside a CPU-bound process.
  for (const load of LOADS)
    for (const rate of RATES) {
      const ours = pick(rate, 'converge', load);
      const theirs = pick(rate, 'client-node', load);
      if (ours.length === 0 || theirs.length === 0) continue;
      const a = median(ours.map((x) => x.p99));
      const b = median(theirs.map((x) => x.p99));
      goals.push({
        goal: `Write → reconcile start p99 ≤ client-node + the simplest correct queue at ${rate.toLocaleString('en-US')} writes/s, ${LOAD_LABEL[load]}`,
        met: a <= b,
        measured: `p99 ${fmt(a, 2)} against ${fmt(b, 2)} ms (${fmt(a / b, 2)}×; medians of ${ours.length} runs each)`,
      });
    }
  finishPart({
    part: 'steady-state',
    title: 'Steady state: write → reconcile start, Converge against client-node + the simplest correct queue',
    method: [
      'The embedded API server runs in its own process and updates Widgets straight in its store at a fixed rate, stamping each with the wall-clock time (performance.timeOrigin + now) just before the write; the write goes through the watch to the controller over loopback HTTP.',
      `Each rate starts with ${WARMUP_SECONDS} s of the same writes that are not measured (the controller's young generation grows to what the rate needs: V8 sizes it by what survives, and a cache that just synced keeps little); then ${SECONDS} s measured.`,
      'Each controller runs in its own process with one worker and a reconciler that reads the object from its cache and records, once per write, stamp → reconcile start. A write overtaken by a newer write of the same object before its reconcile is coalesced (not counted).',
      'client-node side: makeInformer + bench/naive-queue.ts (FIFO, dirty and processing sets: client-go semantics, nothing else) drained by one loop.',
      'Machine: quiet (nothing else running), then beside a CPU-bound process (one `node -e "for (;;) {}"` for the whole variant: the server, the controller and it share the 2 cores), as users\' laptops and CI runners are.',
    ],
    tables: [table, where],
    charts: [chart('p50'), chart('p99')],
    goals,
    correctness,
    notes: [],
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
