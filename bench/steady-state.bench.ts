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
 * Correctness (exit 1): every object's last write was seen by a reconcile, in every run.
 * Goal: Converge's p99 ≤ 10 ms at 1 000 writes/s.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fmt, median, positiveInt } from './harness.ts';
import type { ServerReady, WriteCommand, WriteDone } from './kube-sync-server.ts';
import {
  type ChartSpec,
  type CorrectnessCheck,
  finishPart,
  type GoalVerdict,
  type ResultTable,
} from './part-result.ts';
import type { LatencyReport } from './steady-state-client.ts';

const OBJECTS = positiveInt('BENCH_OBJECTS', 1_000);
const SECONDS = positiveInt('BENCH_SECONDS', 5);
const RUNS = positiveInt('BENCH_RUNS', 3);
const RATES = (process.env.BENCH_RATES ?? '100,1000,5000').split(',').map(Number);
if (RATES.some((r) => !Number.isSafeInteger(r) || r <= 0))
  throw new Error('BENCH_RATES must be positive integers');
const PEERS = ['converge', 'client-node'] as const;
type Peer = (typeof PEERS)[number];
const LABEL: Record<Peer, string> = {
  converge: 'Converge (Informer + Controller)',
  'client-node': 'client-node informer + simplest correct queue',
};

interface Run {
  readonly rate: number;
  readonly peer: Peer;
  readonly p50: number;
  readonly p99: number;
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
  run: number,
): Promise<void> {
  const client = spawn(
    process.execPath,
    ['--conditions=@converge/source', script('./steady-state-client.ts')],
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
    const count = rate * SECONDS;
    const tag = `${peer}-${rate}-${run}`;
    const command: WriteCommand = { write: { rate, count, objects: OBJECTS, tag } };
    server.send(command);
    const done = await once(server, (m): m is WriteDone => (m as WriteDone).tag === tag, 'writes');
    // Let the last writes arrive: until no new reconcile for 300 ms is overkill; 500 ms after the last write is plenty on loopback.
    await new Promise((resolve) => setTimeout(resolve, 500));
    client.send({ report: true });
    const report = await once(
      client,
      (m): m is LatencyReport => Array.isArray((m as LatencyReport).latenciesMs),
      'report',
    );
    const mine = report.latenciesMs.filter((_, i) => {
      const seq = report.seqs[i] as number;
      return seq >= done.firstSeq && seq < done.firstSeq + count;
    });
    const sorted = mine.sort((a, b) => a - b);
    const lastOf = new Map<number, number>();
    for (let n = Math.max(0, count - OBJECTS); n < count; n++) lastOf.set(n % OBJECTS, done.firstSeq + n);
    let lost = 0;
    for (const [i, seq] of lastOf) {
      const key = `team-${(i % 100).toString().padStart(2, '0')}/widget-${i.toString().padStart(6, '0')}`;
      if ((report.lastSeqSeen[key] ?? -1) !== seq) lost++;
    }
    correctness.push({
      check: `${LABEL[peer]} at ${rate}/s run ${run}: every object's last write reconciled`,
      ok: lost === 0,
      ...(lost > 0
        ? { detail: `${lost} of ${lastOf.size} objects never reconciled at their last write` }
        : {}),
    });
    const result: Run = {
      rate,
      peer,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      max: quantile(sorted, 1),
      seen: sorted.length,
      written: done.written,
      writerLagMs: done.maxLagMs,
    };
    runs.push(result);
    console.log(
      `${rate}/s run ${run} ${peer.padEnd(11)} p50 ${fmt(result.p50, 2)}  p99 ${fmt(result.p99, 2)}  max ${fmt(result.max, 1)} ms; ${result.seen}/${result.written} writes seen; writer at most ${fmt(result.writerLagMs, 1)} ms behind`,
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
    for (const rate of RATES)
      for (let run = 0; run < RUNS; run++)
        for (const peer of run % 2 === 0 ? PEERS : [...PEERS].reverse())
          await measure(server, ready, peer, rate, run);
  } finally {
    server.disconnect();
    server.kill();
  }

  const pick = (rate: number, peer: Peer): Run[] => runs.filter((r) => r.rate === rate && r.peer === peer);
  const table: ResultTable = {
    title: `Write → reconcile start, ms (${OBJECTS.toLocaleString('en-US')} Widgets updated round-robin for ${SECONDS} s; median (min–max) over ${RUNS} runs)`,
    columns: [
      'writes/s',
      'system',
      'p50',
      'p99',
      'max',
      'writes seen / written',
      'writer behind schedule at worst, ms',
    ],
    rows: RATES.flatMap((rate) =>
      PEERS.map((peer) => {
        const r = pick(rate, peer);
        return [
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
  finishPart({
    part: 'steady-state',
    title: 'Steady state: write → reconcile start, Converge against client-node + the simplest correct queue',
    method: [
      'The embedded API server runs in its own process and updates Widgets straight in its store at a fixed rate, stamping each with the wall-clock time (performance.timeOrigin + now) just before the write; the write goes through the watch to the controller over loopback HTTP.',
      'Each controller runs in its own process with one worker and a reconciler that reads the object from its cache and records, once per write, stamp → reconcile start. A write overtaken by a newer write of the same object before its reconcile is coalesced (not counted).',
      'client-node side: makeInformer + bench/naive-queue.ts (FIFO, dirty and processing sets: client-go semantics, nothing else) drained by one loop.',
    ],
    tables: [table],
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
