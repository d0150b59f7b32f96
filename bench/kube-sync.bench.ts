/**
 * Informer cold sync over HTTP against the peers and the limit: run alone with
 * `npm run bench:kube-sync`, or as part 1 of `npm run bench` (see BENCHMARKS.md).
 *
 * For each shape and count — custom resources (a namespaced `Widget` CRD, ~0.6 KB of JSON) at
 * BENCH_CR_COUNTS (10 000, 100 000, 1 000 000) and realistic Pods (~4.5 KB with managedFields,
 * status, two containers and an init container) at BENCH_POD_COUNTS (10 000, 100 000) — one
 * embedded API server process (kube-sync-server.ts) holds the objects, and every sync of every
 * peer runs in a fresh client process of its own (kube-sync-client.ts): the limit (streamed and
 * paginated), Converge's Informer (streamed list and pages of 500), @kubernetes/client-node's
 * informer and kubernetes-fluent-client's watch; Converge runs twice more with the young generation
 * its deploy artefacts set (YOUNG_GENERATION_FLAG). BENCH_RUNS (3) runs per peer, BENCH_BIG_RUNS (1)
 * at 1 000 000 and more, the order of the peers rotating from run to run. BENCH_PEERS picks peers
 * (BENCH_POD_PEERS those of them on the Pods);
 * BENCH_CLIENT_FLAGS adds Node flags to every client process (`--trace-gc`, `--cpu-prof`);
 * `BENCH_POD_COUNTS=none` (or BENCH_CR_COUNTS) leaves that shape out.
 *
 * Figures per peer and count: time to synced, objects/s, % of the streamed limit, peak RSS, heap
 * per cached object, largest event-loop delay, whether it completed (and what it did if not). The
 * goals of issue 17 are judged from these (the orchestrator reads them from the full run only).
 * Exit status 1 only when a correctness check fails: the limit or Converge did not see exactly
 * the server's objects. A peer other than Converge that does not complete is a figure, not a
 * failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fmt, median, positiveInt } from './harness.ts';
import {
  type ClientResult,
  PEERS,
  type Peer,
  YOUNG_GENERATION_FLAG,
  youngGeneration,
} from './kube-sync-protocol.ts';
import type { ServerReady } from './kube-sync-server.ts';
import {
  type ChartSeries,
  type ChartSpec,
  type CorrectnessCheck,
  finishPart,
  type GoalVerdict,
  type ResultTable,
} from './part-result.ts';

function counts(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  if (raw === 'none') return [];
  const values = raw.split(',').map(Number);
  if (values.some((v) => !Number.isSafeInteger(v) || v <= 0))
    throw new Error(`${name} must be positive integers`);
  return values;
}

const CR_COUNTS = counts('BENCH_CR_COUNTS', [10_000, 100_000, 1_000_000]);
const POD_COUNTS = counts('BENCH_POD_COUNTS', [10_000, 100_000]);
const RUNS = positiveInt('BENCH_RUNS', 3);
const BIG_RUNS = positiveInt('BENCH_BIG_RUNS', 1);
/** Extra Node flags for the client processes, to profile a sync: `BENCH_CLIENT_FLAGS='--trace-gc'`. */
const CLIENT_FLAGS = (process.env.BENCH_CLIENT_FLAGS ?? '').split(' ').filter((f) => f !== '');
const SELECTED = (process.env.BENCH_PEERS ?? PEERS.join(',')).split(',') as Peer[];
if (SELECTED.some((p) => !PEERS.includes(p)))
  throw new Error(`BENCH_PEERS: known peers are ${PEERS.join(', ')}`);
/**
 * The peers run on the Pod shape (BENCH_POD_PEERS, default every selected one). The small run (CI's)
 * runs there only those the Pod goals compare, beside the streamed limit: every peer still runs on
 * the custom resources, and each client process is a second of CPU on a machine the suite fills.
 */
const POD_PEERS =
  process.env.BENCH_POD_PEERS === undefined
    ? SELECTED
    : (process.env.BENCH_POD_PEERS.split(',') as Peer[]).filter((p) => SELECTED.includes(p));
if (process.env.BENCH_POD_PEERS?.split(',').some((p) => !PEERS.includes(p as Peer)))
  throw new Error(`BENCH_POD_PEERS: known peers are ${PEERS.join(', ')}`);

const LABEL: Record<Peer, string> = {
  limit: 'limit (streamed)',
  'limit-pages': 'limit (pages of 500)',
  converge: 'Converge (streamed list)',
  'converge-pages': 'Converge (pages of 500)',
  'converge-young': `Converge (streamed list, ${YOUNG_GENERATION_FLAG})`,
  'converge-pages-young': `Converge (pages of 500, ${YOUNG_GENERATION_FLAG})`,
  'converge-metadata': 'Converge metadata-only (streamed list)',
  'client-node': '@kubernetes/client-node informer',
  fluent: 'kubernetes-fluent-client watch',
};

type Shape = 'widget' | 'pod';

interface Cell {
  readonly shape: Shape;
  readonly count: number;
  readonly objectBytes: number;
  readonly peer: Peer;
  readonly runs: ClientResult[];
}

const cells: Cell[] = [];
const correctness: CorrectnessCheck[] = [];
const notes: string[] = [];

function script(name: string): string {
  return fileURLToPath(new URL(name, import.meta.url));
}

async function startServer(
  shape: Shape,
  objects: number,
): Promise<{ child: ChildProcess; ready: ServerReady }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@converge/source', '--max-old-space-size=16384', script('./kube-sync-server.ts')],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        BENCH_OBJECTS: String(objects),
        BENCH_SHAPE: shape,
        BENCH_TOKEN: randomBytes(24).toString('base64url'),
      },
    },
  );
  const ready = await new Promise<ServerReady>((resolve, reject) => {
    child.once('message', (msg) => resolve(msg as ServerReady));
    child.once('exit', (code) => reject(new Error(`the server process exited with ${code}`)));
    child.once('error', reject);
  });
  child.removeAllListeners('exit');
  return { child, ready };
}

/** One sync of one peer in a fresh process; a sync that outlives `timeoutMs` is killed and counted as not completed. */
function runClient(peer: Peer, ready: ServerReady, timeoutMs: number): Promise<ClientResult> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--conditions=@converge/source',
      '--max-old-space-size=8192',
      ...(youngGeneration(peer) ? [YOUNG_GENERATION_FLAG] : []),
      ...CLIENT_FLAGS,
      script('./kube-sync-client.ts'),
    ],
    {
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      env: { ...process.env, BENCH_PEER: peer, BENCH_SERVER: JSON.stringify(ready) },
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const failed = (note: string): ClientResult => ({
    peer,
    completed: false,
    note,
    ms: Number.NaN,
    objects: 0,
    delayMs: Number.NaN,
    peakRssBytes: Number.NaN,
    rssBeforeBytes: Number.NaN,
    heapPerObject: Number.NaN,
  });
  return new Promise<ClientResult>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(failed(`not synced after ${Math.round(timeoutMs / 1000)} s (killed)`));
    }, timeoutMs);
    child.once('message', (msg) => {
      clearTimeout(timer);
      resolve(msg as ClientResult);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const last = stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300);
      resolve(failed(`the process died (${code ?? signal}) before it synced: ${last}`));
    });
  });
}

async function measure(shape: Shape, count: number): Promise<void> {
  const { child, ready } = await startServer(shape, count);
  const runs = count >= 1_000_000 ? BIG_RUNS : RUNS;
  console.log(
    `${shape} × ${count.toLocaleString('en-US')}: ${ready.objectBytes} B of JSON each, store filled in ${fmt(ready.fillMs / 1000, 1)} s; ${runs} runs of ${(shape === 'pod' ? POD_PEERS : SELECTED).join(', ')}`,
  );
  const timeoutMs = positiveInt('BENCH_SYNC_TIMEOUT_MS', 60_000 + count * (shape === 'pod' ? 2 : 0.5));
  const peers = shape === 'pod' ? POD_PEERS : SELECTED;
  const byPeer = new Map<Peer, ClientResult[]>(peers.map((p) => [p, []]));
  try {
    for (let run = 0; run < runs; run++) {
      const shift = run % peers.length;
      for (const peer of [...peers.slice(shift), ...peers.slice(0, shift)]) {
        const result = await runClient(peer, ready, timeoutMs);
        byPeer.get(peer)?.push(result);
        console.log(
          `  run ${run} ${peer.padEnd(15)} ${result.completed ? `${fmt(result.ms, 0).padStart(7)} ms  ${fmt((count / result.ms) * 1000, 0).padStart(9)} obj/s  delay ${fmt(result.delayMs, 0)} ms  rss ${fmt(result.peakRssBytes / 2 ** 20, 0)} MiB  heap ${fmt(result.heapPerObject, 0)} B/obj` : `did not complete: ${result.note ?? ''}`}`,
        );
      }
    }
  } finally {
    child.disconnect();
    child.kill();
  }
  for (const [peer, results] of byPeer) {
    cells.push({ shape, count, objectBytes: ready.objectBytes, peer, runs: results });
    if (peer !== 'client-node' && peer !== 'fluent') {
      const bad = results.filter((r) => !r.completed || r.objects !== count);
      correctness.push({
        check: `${LABEL[peer]} holds exactly the ${count.toLocaleString('en-US')} ${shape}s after its sync`,
        ok: bad.length === 0,
        ...(bad.length > 0
          ? {
              detail: bad
                .map((r) => `${r.objects} objects${r.note === undefined ? '' : `: ${r.note}`}`)
                .join('; '),
            }
          : {}),
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

function cell(shape: Shape, count: number, peer: Peer): Cell | undefined {
  return cells.find((c) => c.shape === shape && c.count === count && c.peer === peer);
}

function done(c: Cell | undefined): ClientResult[] {
  return c?.runs.filter((r) => r.completed) ?? [];
}

function stat(values: readonly number[]): { med: number; min: number; max: number } | undefined {
  if (values.length === 0) return undefined;
  return { med: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function show(values: readonly number[], digits = 0, scale = 1): string {
  const s = stat(values.map((v) => v * scale));
  if (s === undefined) return '—';
  return s.min === s.max
    ? fmt(s.med, digits)
    : `${fmt(s.med, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

/** Median objects per second of a cell's completed runs. */
function rate(c: Cell | undefined): number | undefined {
  const runs = done(c);
  return runs.length === 0 ? undefined : median(runs.map((r) => (r.objects / r.ms) * 1000));
}

function medianOf(c: Cell | undefined, pick: (r: ClientResult) => number): number | undefined {
  const runs = done(c);
  return runs.length === 0 ? undefined : median(runs.map(pick));
}

function tableFor(shape: Shape, list: readonly number[]): ResultTable {
  const rows: string[][] = [];
  for (const count of list) {
    const limit = rate(cell(shape, count, 'limit'));
    for (const peer of SELECTED) {
      const c = cell(shape, count, peer);
      if (c === undefined) continue;
      const runs = done(c);
      const r = rate(c);
      const failures = c.runs.filter((x) => !x.completed);
      const notesOf = [...new Set(c.runs.map((x) => x.note).filter((n): n is string => n !== undefined))];
      rows.push([
        count.toLocaleString('en-US'),
        LABEL[peer],
        `${runs.length} / ${c.runs.length}`,
        show(runs.map((x) => x.ms)),
        show(
          runs.map((x) => (x.objects / x.ms) * 1000),
          1,
          1 / 1000,
        ),
        r === undefined || limit === undefined ? '—' : `${fmt((r / limit) * 100, 0)} %`,
        show(
          runs.map((x) => x.peakRssBytes),
          0,
          1 / 2 ** 20,
        ),
        show(runs.map((x) => x.heapPerObject)),
        show(runs.map((x) => x.delayMs)),
        failures.length > 0 || notesOf.length > 0 ? notesOf.join('; ') : '',
      ]);
    }
  }
  return {
    title: `${shape === 'pod' ? 'Pods' : 'Custom resources'} (${cells.find((c) => c.shape === shape)?.objectBytes ?? '?'} B of JSON each)`,
    columns: [
      'objects',
      'system',
      'completed runs',
      'time to synced, ms',
      'thousand objects/s',
      '% of the streamed limit',
      'peak RSS, MiB',
      'heap per cached object, B',
      'largest event-loop delay, ms',
      'notes',
    ],
    rows,
  };
}

function series(shape: Shape, list: readonly number[], pick: (r: ClientResult) => number): ChartSeries[] {
  return (shape === 'pod' ? POD_PEERS : SELECTED).map((peer) => {
    const points = [];
    const failedAt: number[] = [];
    for (const count of list) {
      const c = cell(shape, count, peer);
      if (c === undefined) continue;
      const values = done(c).map(pick);
      const s = stat(values);
      if (s === undefined) failedAt.push(count);
      else points.push({ x: count, y: s.med, min: s.min, max: s.max });
    }
    return { name: LABEL[peer], points, failedAt };
  });
}

function charts(shape: Shape, list: readonly number[]): ChartSpec[] {
  if (list.length === 0) return [];
  const what = shape === 'pod' ? 'Pods' : 'custom resources';
  const id = shape === 'pod' ? 'cold-sync-pods' : 'cold-sync-crs';
  return [
    {
      id: `${id}-time-per-object`,
      title: `Cold sync of ${what}: time per object (flat = linear cost)`,
      xLabel: 'objects (log scale)',
      yLabel: 'µs per object (lower is better)',
      logX: true,
      series: series(shape, list, (r) => (r.ms * 1000) / r.objects),
    },
    {
      id: `${id}-heap-per-object`,
      title: `Cold sync of ${what}: heap per cached object`,
      xLabel: 'objects (log scale)',
      yLabel: 'bytes per object (lower is better)',
      logX: true,
      series: series(shape, list, (r) => r.heapPerObject),
    },
    {
      id: `${id}-loop-delay`,
      title: `Cold sync of ${what}: largest event-loop delay`,
      xLabel: 'objects (log scale)',
      yLabel: 'ms (log scale, lower is better)',
      logX: true,
      logY: true,
      series: series(shape, list, (r) => Math.max(1, r.delayMs)),
    },
    {
      id: `${id}-peak-rss`,
      title: `Cold sync of ${what}: peak RSS of the client process`,
      xLabel: 'objects (log scale)',
      yLabel: 'MiB (lower is better)',
      logX: true,
      series: series(shape, list, (r) => r.peakRssBytes / 2 ** 20),
    },
  ];
}

function ratioText(value: number | undefined, digits = 2, suffix = '×'): string {
  return value === undefined ? 'not measured in this run' : `${fmt(value, digits)}${suffix}`;
}

function goals(): GoalVerdict[] {
  const out: GoalVerdict[] = [];
  const at = (shape: Shape, count: number, peer: Peer) => cell(shape, count, peer);
  const notMeasured = (goal: string, what: string): GoalVerdict => ({
    goal,
    met: false,
    measured: `not measured in this run (${what})`,
  });

  // Custom resources at 100 000.
  {
    const goal =
      'Cold sync of custom resources ≥ 95 % of the streamed limit and ≥ 1.25× client-node at 100 000';
    const conv = rate(at('widget', 100_000, 'converge'));
    const limit = rate(at('widget', 100_000, 'limit'));
    const cn = rate(at('widget', 100_000, 'client-node'));
    if (conv === undefined || limit === undefined) out.push(notMeasured(goal, '100 000 custom resources'));
    else {
      const ofLimit = conv / limit;
      const ofCn = cn === undefined ? undefined : conv / cn;
      out.push({
        goal,
        met: ofLimit >= 0.95 && ofCn !== undefined && ofCn >= 1.25,
        measured: `${fmt(ofLimit * 100, 0)} % of the limit (${fmt(conv / 1000, 1)} vs ${fmt(limit / 1000, 1)} thousand/s), ${ratioText(ofCn)} client-node${cn === undefined ? ' (client-node did not complete)' : ''}`,
      });
    }
  }
  // Custom resources at 1 000 000: with Node's default heap settings and as deployed.
  for (const [peer, how] of [
    ['converge', "Node's default heap settings"],
    ['converge-young', `as deployed (${YOUNG_GENERATION_FLAG})`],
  ] as const) {
    const goal = `At 1 000 000 custom resources Converge completes, largest event-loop delay ≤ 50 ms, heap per object ≤ 1.0× a Map of the same parsed objects (managedFields stripped) — ${how}`;
    const c = at('widget', 1_000_000, peer);
    const l = at('widget', 1_000_000, 'limit');
    if (c === undefined) {
      if (SELECTED.includes(peer)) out.push(notMeasured(goal, '1 000 000 custom resources'));
      continue;
    }
    const completed = done(c).length === c.runs.length && c.runs.length > 0;
    const delay = medianOf(c, (r) => r.delayMs);
    const heap = medianOf(c, (r) => r.heapPerObject);
    const limitHeap = medianOf(l, (r) => r.heapPerObject);
    const heapRatio = heap === undefined || limitHeap === undefined ? undefined : heap / limitHeap;
    out.push({
      goal,
      met: completed && delay !== undefined && delay <= 50 && heapRatio !== undefined && heapRatio <= 1,
      measured: `${completed ? 'completed' : 'did NOT complete'}; largest delay ${delay === undefined ? '—' : `${fmt(delay, 0)} ms`}; heap ${heap === undefined ? '—' : `${fmt(heap, 0)} B`} per object = ${ratioText(heapRatio)} the limit's Map`,
    });
  }
  // Pods.
  {
    const goal = "Cold sync of Pods ≥ 2× client-node's throughput and ≤ 0.5× its heap per object";
    const count = Math.max(...POD_COUNTS.filter((n) => n <= 100_000), 0);
    const c = at('pod', count, 'converge');
    const cn = at('pod', count, 'client-node');
    const conv = rate(c);
    const cnRate = rate(cn);
    if (count === 0 || conv === undefined) out.push(notMeasured(goal, 'Pods'));
    else {
      const heap = medianOf(c, (r) => r.heapPerObject);
      const cnHeap = medianOf(cn, (r) => r.heapPerObject);
      const speed = cnRate === undefined ? undefined : conv / cnRate;
      const heapRatio = heap === undefined || cnHeap === undefined ? undefined : heap / cnHeap;
      out.push({
        goal: `${goal} (at ${count.toLocaleString('en-US')})`,
        met: speed !== undefined && speed >= 2 && heapRatio !== undefined && heapRatio <= 0.5,
        measured: `${ratioText(speed)} the throughput, ${ratioText(heapRatio)} the heap per object (${heap === undefined ? '—' : fmt(heap, 0)} vs ${cnHeap === undefined ? '—' : fmt(cnHeap, 0)} B)`,
      });
    }
  }
  // Metadata-only Pods (issue 29): what an operator that only maps Pods to owners holds.
  {
    const goal =
      "Metadata-only cache of Pods: heap per object ≤ 0.15× the full-object cache's, sync time ≤ 0.5×";
    const count = Math.max(...POD_COUNTS.filter((n) => n <= 100_000), 0);
    const full = at('pod', count, 'converge');
    const meta = at('pod', count, 'converge-metadata');
    const fullMs = medianOf(full, (r) => r.ms);
    const metaMs = medianOf(meta, (r) => r.ms);
    const fullHeap = medianOf(full, (r) => r.heapPerObject);
    const metaHeap = medianOf(meta, (r) => r.heapPerObject);
    if (
      count === 0 ||
      fullMs === undefined ||
      metaMs === undefined ||
      fullHeap === undefined ||
      metaHeap === undefined
    ) {
      if (SELECTED.includes('converge-metadata')) out.push(notMeasured(goal, 'Pods, full and metadata-only'));
    } else {
      const heapRatio = metaHeap / fullHeap;
      const timeRatio = metaMs / fullMs;
      out.push({
        goal: `${goal} (at ${count.toLocaleString('en-US')})`,
        met: heapRatio <= 0.15 && timeRatio <= 0.5,
        measured: `${ratioText(heapRatio)} the heap per object (${fmt(metaHeap, 0)} vs ${fmt(fullHeap, 0)} B), ${ratioText(timeRatio)} the sync time (${fmt(metaMs, 0)} vs ${fmt(fullMs, 0)} ms)`,
      });
    }
  }
  // Event-loop delay at 100 000: with Node's default heap settings and as deployed.
  for (const [peers, how] of [
    [['converge', 'converge-pages'], "Node's default heap settings"],
    [['converge-young', 'converge-pages-young'], `as deployed (${YOUNG_GENERATION_FLAG})`],
  ] as const) {
    const goal = `Largest event-loop delay during any Converge sync ≤ 25 ms at 100 000 objects — ${how}`;
    const delays: string[] = [];
    let worst = Number.NEGATIVE_INFINITY;
    for (const shape of ['widget', 'pod'] as const) {
      for (const peer of peers) {
        const d = medianOf(at(shape, 100_000, peer), (r) => r.delayMs);
        if (d === undefined) continue;
        worst = Math.max(worst, d);
        delays.push(
          `${shape === 'pod' ? 'Pods' : 'CRs'} ${peer.includes('pages') ? 'paginated' : 'streamed'} ${fmt(d, 0)} ms`,
        );
      }
    }
    const cn = medianOf(at('widget', 100_000, 'client-node'), (r) => r.delayMs);
    if (delays.length === 0) {
      if (peers.some((p) => SELECTED.includes(p))) out.push(notMeasured(goal, '100 000 objects'));
      continue;
    }
    out.push({
      goal,
      met: worst <= 25,
      measured: `${delays.join(', ')} (median of the runs' maxima)${cn === undefined ? '' : `; client-node ${fmt(cn, 0)} ms on CRs`}`,
    });
  }
  // Linear cost.
  {
    const goal =
      "Cost grows linearly: Converge's sync time per object at 1 000 000 within 1.2× of that at 100 000";
    const big = medianOf(at('widget', 1_000_000, 'converge'), (r) => r.ms / r.objects);
    const mid = medianOf(at('widget', 100_000, 'converge'), (r) => r.ms / r.objects);
    if (big === undefined || mid === undefined)
      out.push(notMeasured(goal, '100 000 and 1 000 000 custom resources'));
    else
      out.push({
        goal,
        met: big / mid <= 1.2,
        measured: `${fmt(big * 1000, 2)} µs vs ${fmt(mid * 1000, 2)} µs per object: ${fmt(big / mid, 2)}×`,
      });
  }
  return out;
}

async function main(): Promise<void> {
  // Every count below 1 000 000 first, so a long 1 000 000 run comes last.
  const order = [
    ...CR_COUNTS.map((n) => ['widget', n] as const),
    ...POD_COUNTS.map((n) => ['pod', n] as const),
  ];
  for (const [shape, count] of order.filter(([, n]) => n < 1_000_000)) await measure(shape, count);
  for (const [shape, count] of order.filter(([, n]) => n >= 1_000_000)) await measure(shape, count);

  for (const c of cells.filter((x) => x.count >= 1_000_000)) {
    const failures = c.runs.filter((r) => !r.completed);
    if (failures.length > 0)
      notes.push(
        `At ${c.count.toLocaleString('en-US')} ${c.shape}s, ${LABEL[c.peer]}: ${failures[0]?.note ?? 'did not complete'}`,
      );
    else if (c.runs.some((r) => r.note !== undefined))
      notes.push(
        `At ${c.count.toLocaleString('en-US')} ${c.shape}s, ${LABEL[c.peer]} completed after: ${c.runs.find((r) => r.note)?.note}`,
      );
  }
  finishPart({
    part: 'cold-sync',
    title: 'Informer cold sync over HTTP: Converge, client-node, kubernetes-fluent-client and the limit',
    method: [
      "The embedded API server runs in its own process (plain HTTP on 127.0.0.1, bearer token) holding the objects; every sync of every peer runs in a fresh client process, so peak RSS and heap are that peer's alone. The order of the peers rotates from run to run.",
      "limit (streamed): the informer's streamed-list request over raw node:http, lines, JSON.parse, managedFields dropped, Map.set — nothing else. limit (pages of 500): the same with limit/continue pages.",
      'Converge: Informer over KubeBackend, streamed list (sendInitialEvents) or pages of 500, until waitForSync, one counting listener, the default transform (drops managedFields).',
      `Converge (…, ${YOUNG_GENERATION_FLAG}): the same, in a process with the young generation the Dockerfile and Deployment of \`converge manifests\` give an operator (NODE_OPTIONS); every other process runs with Node's defaults.`,
      '@kubernetes/client-node: makeInformer over its typed list call (one unpaginated LIST, as its ListWatch does). kubernetes-fluent-client 3.11.6: K8s(Model).Watch (one unpaginated LIST, then a watch from its resourceVersion).',
      "Time: from the start call until synced (for client-node and fluent: until every object was added). Heap per cached object: heapUsed after 3 forced GCs with the cache alive, minus the same before the sync, over the objects. Peak RSS: the process's maxRSS. Event-loop delay: the largest monitorEventLoopDelay sample (1 ms resolution) during the sync.",
      `Runs: ${RUNS} per peer (${BIG_RUNS} at 1 000 000 and more); each figure is the median with the min–max of the completed runs.`,
    ],
    tables: [tableFor('widget', CR_COUNTS), tableFor('pod', POD_COUNTS)].filter((t) => t.rows.length > 0),
    charts: [...charts('widget', CR_COUNTS), ...charts('pod', POD_COUNTS)],
    goals: goals(),
    correctness,
    notes,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
