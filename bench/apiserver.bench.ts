/**
 * Embedded API server benchmark (packages/apiserver): run with `npm run bench:apiserver` (see
 * BENCHMARKS.md at the repo root). This process is the server; every request comes from a client
 * in a separate process (apiserver-client.ts, spawned with process.execPath) so reading and
 * checking responses never takes the server's event loop or CPU. Plain HTTP on 127.0.0.1 with a
 * bearer token (TLS off: the figures are the server's, not the cipher's).
 *
 * 1. LIST of BENCH_OBJECTS (100 000) ConfigMaps of ~0.6 KB (put in the store directly), one
 *    `GET /api/v1/configmaps`, against the limit: `JSON.stringify` of the same objects in the same
 *    envelope, written with one `res.end` by a bare node:http server in this process, read by the
 *    same client. Goals: the LIST at >= 50 % of the limit's MB/s; the largest event-loop delay of
 *    this process during the LIST <= 50 ms (monitorEventLoopDelay, 1 ms resolution); and no giant
 *    string: the largest single write to the response <= 1 MiB, and the peak growth of V8's
 *    large-object spaces (where any string over ~128 KiB is allocated) during the LIST <= 0.1x the
 *    body. The limit, which does build one string, shows that the sampler sees one.
 *    Checked: the client counts one `"uid":"` per item in every run; one untimed run of each is
 *    hashed and parsed, and the two bodies must be byte-identical.
 * 2. Creates per second: BENCH_CREATES sequential POSTs over one keep-alive connection, against the
 *    same client's requests per second to a trivial node:http handler (reads the body, echoes it
 *    with a 201).
 * 3. Fan-out: BENCH_WATCHERS (100) watches open in the client; BENCH_CHANGES sequential PUTs of a
 *    watched ConfigMap; per change, PUT sent → every watch has the event (p50/p99), and this
 *    process's CPU time per change, next to the same PUTs of an object nobody watches. The watch
 *    encoder's counters must show one encoding per change (goal: encode once).
 *
 * Every figure is shown as median (min–max) over BENCH_RUNS (default 5) runs. Knobs for quick
 * local runs (the published figures use the defaults): BENCH_OBJECTS, BENCH_RUNS, BENCH_CREATES
 * (1 000), BENCH_WATCHERS, BENCH_CHANGES (200). The client needs Node >= 22.18 or 23.6 (it is
 * TypeScript run directly); `npm run` uses the repo's pinned Node. Exit status 1 only
 * when a correctness check fails (wrong item count, different bytes, a failed create, a lost or
 * misordered watch event); a missed performance goal prints FAIL and exits 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { KubeObject, ResourceType } from '@converge/runtime';
import { createApiServer } from '../packages/apiserver/src/server/api-server.ts';
import { WatchEncoder } from '../packages/apiserver/src/server/watch-encoder.ts';
import { benchPods } from './apiserver-protobuf.ts';
import {
  type ChangesReply,
  type ClientRequest,
  type CreatesReply,
  configMapBody,
  type ListReply,
  type ReplyEnvelope,
  type Target,
  type WatchCloseReply,
  type WatchOpenReply,
} from './apiserver-protocol.ts';
import { collectGarbage, fmt, median, positiveInt } from './harness.ts';

const OBJECTS = positiveInt('BENCH_OBJECTS', 100_000);
const RUNS = positiveInt('BENCH_RUNS', 5);
const CREATES = positiveInt('BENCH_CREATES', 1_000);
const WATCHERS = positiveInt('BENCH_WATCHERS', 100);
const CHANGES = positiveInt('BENCH_CHANGES', 200);
const PODS = positiveInt('BENCH_PODS', 100_000);

const GOAL_LIST_RATIO = 0.5;
const GOAL_DELAY_MS = 50;
/** "Streamed": no single write above this, and large-object space growth below this × the body. */
const GOAL_MAX_WRITE = 1024 * 1024;
const GOAL_LARGE_OF_BODY = 0.1;

const correctness: string[] = [];
const verdicts: string[] = [];

function check(ok: boolean, what: string): void {
  if (!ok) correctness.push(what);
}

function verdict(ok: boolean, text: string): void {
  verdicts.push(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
}

function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

function quantile(values: readonly number[], q: number): number {
  const s = sorted(values);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? Number.NaN;
}

interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

function spread(values: readonly number[]): Spread {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

/** `median (min–max)` */
function show(s: Spread, digits = 1): string {
  return `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): void {
  console.log(row(header));
  console.log(row(header.map(() => '---')));
  for (const r of rows) console.log(row(r));
  console.log('');
}

function loadavg(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

// ---------------------------------------------------------------------------------------------
// The client process

class Client {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #next = 0;

  constructor() {
    const script = fileURLToPath(new URL('./apiserver-client.ts', import.meta.url));
    this.#child = spawn(process.execPath, [script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.#child.on('message', (msg: ReplyEnvelope) => {
      const waiter = this.#waiting.get(msg.id);
      if (waiter === undefined) return;
      this.#waiting.delete(msg.id);
      if (msg.error !== undefined) waiter.reject(new Error(`client: ${msg.error}`));
      else waiter.resolve(msg.reply);
    });
    this.#child.on('exit', (code) => {
      for (const waiter of this.#waiting.values()) waiter.reject(new Error(`client exited with ${code}`));
      this.#waiting.clear();
    });
  }

  call<R>(request: ClientRequest): Promise<R> {
    const id = this.#next++;
    return new Promise<R>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.send({ ...request, id });
    });
  }

  close(): void {
    this.#child.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// The limit server: what any server has to do at least

/** A bare node:http server: GET answers `list` as one JSON.stringify; any other method echoes the body. */
interface LimitServer {
  readonly server: Server;
  readonly port: number;
  /** The LIST's objects and resourceVersion (set before the LIST runs). */
  list: { items: readonly KubeObject[]; resourceVersion: string };
}

async function startLimit(): Promise<LimitServer> {
  const server = createServer((req: IncomingMessage, res) => {
    if (req.method === 'GET') {
      // JSON.stringify of the same objects in the same envelope, written at once.
      const body = `${JSON.stringify({
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: limit.list.resourceVersion },
        items: limit.list.items,
      })}\n`;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
      res.end(body);
      return;
    }
    // A trivial handler: read the body, answer 201 with it.
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': String(body.length) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const limit: LimitServer = {
    server,
    port: (server.address() as AddressInfo).port,
    list: { items: [], resourceVersion: '0' },
  };
  return limit;
}

// ---------------------------------------------------------------------------------------------
// Instruments (this process)

/** The largest single chunk passed to a ServerResponse's write/end while installed. */
class WriteSizes {
  largest = 0;
  readonly #write = ServerResponse.prototype.write;
  readonly #end = ServerResponse.prototype.end;

  install(): void {
    this.largest = 0;
    const self = this;
    const write = this.#write;
    const end = this.#end;
    const size = (chunk: unknown): number =>
      typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk.length : 0;
    ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      self.largest = Math.max(self.largest, size(chunk));
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof write;
    ServerResponse.prototype.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'function') self.largest = Math.max(self.largest, size(chunk));
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as typeof end;
  }

  uninstall(): void {
    ServerResponse.prototype.write = this.#write;
    ServerResponse.prototype.end = this.#end;
  }
}

/** Bytes in V8's large-object spaces, where any string over ~128 KiB lives (a 64 KiB chunk does not). */
function largeObjectBytes(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'large_object_space' || space.space_name === 'new_large_object_space')
      bytes += space.space_used_size;
  }
  return bytes;
}

/**
 * Samples the heap every 2 ms (and at the end): the peak growth over the start of the used heap
 * and of the large-object spaces. A sampler only runs when the event loop turns, so it misses what
 * is built and collected within one blocking stretch; the limit's figures show that it does see a
 * string built at once.
 */
class HeapPeak {
  #timer: NodeJS.Timeout | undefined;
  #baseHeap = 0;
  #baseLarge = 0;
  peakHeap = 0;
  peakLarge = 0;

  start(): void {
    this.#baseHeap = getHeapStatistics().used_heap_size;
    this.#baseLarge = largeObjectBytes();
    this.peakHeap = 0;
    this.peakLarge = 0;
    this.#timer = setInterval(() => this.#sample(), 2);
  }

  #sample(): void {
    this.peakHeap = Math.max(this.peakHeap, getHeapStatistics().used_heap_size - this.#baseHeap);
    this.peakLarge = Math.max(this.peakLarge, largeObjectBytes() - this.#baseLarge);
  }

  stop(): void {
    this.#sample();
    clearInterval(this.#timer);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. LIST

interface ListRun {
  readonly mbPerS: number;
  readonly firstByteMs: number;
  readonly delayMs: number;
  readonly largestWrite: number;
  readonly peakHeap: number;
  readonly peakLarge: number;
  readonly bytes: number;
}

async function listOnce(
  client: Client,
  target: Target,
  path: string,
  expected: number,
  label: string,
): Promise<ListRun> {
  collectGarbage(2);
  const writes = new WriteSizes();
  const heap = new HeapPeak();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  writes.install();
  heap.start();
  delay.enable();
  const reply = await client.call<ListReply>({ op: 'list', target, path, verify: false });
  // Let the histogram's timer fire once more: a loop blocked until the end of the response has
  // recorded nothing yet, and its delay shows only in that late tick.
  await sleep(5);
  delay.disable();
  heap.stop();
  writes.uninstall();
  check(reply.status === 200, `${label}: status ${reply.status}`);
  check(reply.uids === expected, `${label}: ${reply.uids} items in the body, expected ${expected}`);
  return {
    mbPerS: reply.bytes / 1e6 / (reply.ms / 1000),
    firstByteMs: reply.firstByteMs,
    delayMs: delay.max / 1e6,
    largestWrite: writes.largest,
    peakHeap: heap.peakHeap,
    peakLarge: heap.peakLarge,
    bytes: reply.bytes,
  };
}

async function benchList(
  client: Client,
  api: Target,
  limit: Target,
  expected: number,
  storeList: () => Promise<unknown>,
): Promise<void> {
  const apiPath = '/api/v1/configmaps';
  const limitPath = '/list';
  // Warm-up and verification: one untimed run of each, hashed and parsed by the client.
  const verify = async (target: Target, path: string, label: string): Promise<ListReply> => {
    const reply = await client.call<ListReply>({ op: 'list', target, path, verify: true });
    check(reply.status === 200, `${label}: status ${reply.status}`);
    check(
      reply.parsed?.kind === 'ConfigMapList' &&
        reply.parsed.items === expected &&
        reply.parsed.distinctNames === expected,
      `${label}: parsed ${JSON.stringify(reply.parsed)}, expected ${expected} distinct ConfigMaps`,
    );
    return reply;
  };
  const apiVerified = await verify(api, apiPath, 'LIST');
  const limitVerified = await verify(limit, limitPath, 'limit');
  check(
    apiVerified.sha256 === limitVerified.sha256 && apiVerified.bytes === limitVerified.bytes,
    `LIST body (${apiVerified.bytes} B) differs from JSON.stringify of the same objects (${limitVerified.bytes} B)`,
  );
  const bytes = apiVerified.bytes;
  console.log(
    `body ${fmt(bytes / 1e6)} MB, ${fmt(bytes / expected, 0)} B per item; verified: ${expected.toLocaleString('en-US')} distinct items, byte-identical to JSON.stringify`,
  );

  // The store's part of a LIST: one synchronous list of every item, which no chunking can split.
  const storeMs: number[] = [];
  for (let run = 0; run < 3; run++) {
    collectGarbage(2);
    const started = performance.now();
    await storeList();
    storeMs.push(performance.now() - started);
  }
  console.log(
    `store.list of all ${expected.toLocaleString('en-US')} items, in process: ${show(spread(storeMs))} ms\n`,
  );

  const apiRuns: ListRun[] = [];
  const limitRuns: ListRun[] = [];
  for (let run = 0; run < RUNS; run++) {
    const order = run % 2 === 0 ? (['api', 'limit'] as const) : (['limit', 'api'] as const);
    for (const which of order) {
      if (which === 'api') apiRuns.push(await listOnce(client, api, apiPath, expected, `LIST run ${run}`));
      else limitRuns.push(await listOnce(client, limit, limitPath, expected, `limit run ${run}`));
    }
  }
  for (const r of [...apiRuns, ...limitRuns])
    check(r.bytes === bytes, `a LIST run read ${r.bytes} B, not ${bytes}`);
  const ratios = apiRuns.map((r, i) => r.mbPerS / (limitRuns[i] as ListRun).mbPerS);
  const of = (runs: readonly ListRun[], pick: (r: ListRun) => number): Spread => spread(runs.map(pick));
  const mb = 1e6;
  table(
    ['figure', 'limit (JSON.stringify + one write)', 'LIST (apiserver)'],
    [
      ['throughput, MB/s', show(of(limitRuns, (r) => r.mbPerS)), show(of(apiRuns, (r) => r.mbPerS))],
      [
        'items/s (thousands)',
        show(of(limitRuns, (r) => (r.mbPerS * 1e6) / (bytes / expected) / 1000)),
        show(of(apiRuns, (r) => (r.mbPerS * 1e6) / (bytes / expected) / 1000)),
      ],
      [
        'time to first byte, ms',
        show(of(limitRuns, (r) => r.firstByteMs)),
        show(of(apiRuns, (r) => r.firstByteMs)),
      ],
      [
        'max event-loop delay, ms',
        show(of(limitRuns, (r) => r.delayMs)),
        show(of(apiRuns, (r) => r.delayMs)),
      ],
      [
        'largest single write, KB',
        show(of(limitRuns, (r) => r.largestWrite / 1e3)),
        show(of(apiRuns, (r) => r.largestWrite / 1e3)),
      ],
      [
        'peak used heap growth, MB',
        show(of(limitRuns, (r) => r.peakHeap / mb)),
        show(of(apiRuns, (r) => r.peakHeap / mb)),
      ],
      [
        'peak large-object space growth, MB',
        show(of(limitRuns, (r) => r.peakLarge / mb)),
        show(of(apiRuns, (r) => r.peakLarge / mb)),
      ],
    ],
  );
  const ratio = median(apiRuns.map((r) => r.mbPerS)) / median(limitRuns.map((r) => r.mbPerS));
  const ratioSpread = spread(ratios);
  console.log(
    `LIST / limit: ${fmt(ratio * 100)} % of the median MB/s (per alternating pair: ${fmt(ratioSpread.min * 100)}–${fmt(ratioSpread.max * 100)} %)`,
  );
  const delay = spread(apiRuns.map((r) => r.delayMs));
  const largest = Math.max(...apiRuns.map((r) => r.largestWrite));
  const peakLarge = Math.max(...apiRuns.map((r) => r.peakLarge));
  verdict(
    ratio >= GOAL_LIST_RATIO,
    `LIST throughput >= ${GOAL_LIST_RATIO * 100} % of the limit (${fmt(ratio * 100)} %)`,
  );
  verdict(
    delay.median <= GOAL_DELAY_MS,
    `server event-loop delay during the LIST <= ${GOAL_DELAY_MS} ms (median of per-run maxima ${fmt(delay.median)} ms, worst run ${fmt(delay.max)} ms)`,
  );
  verdict(
    largest <= GOAL_MAX_WRITE && peakLarge <= GOAL_LARGE_OF_BODY * bytes,
    `LIST streamed, no giant string: largest write ${fmt(largest / 1e3)} KB <= ${GOAL_MAX_WRITE / 1024} KiB, peak large-object growth ${fmt(peakLarge / mb)} MB <= ${GOAL_LARGE_OF_BODY}x the ${fmt(bytes / mb)} MB body (the limit: ${fmt(median(limitRuns.map((r) => r.peakLarge)) / mb)} MB)`,
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Creates

async function benchCreates(client: Client, api: Target, limit: Target): Promise<void> {
  const apiPath = '/api/v1/namespaces/bench-create/configmaps';
  const run = async (target: Target, path: string, prefix: string, count: number): Promise<number> => {
    const reply = await client.call<CreatesReply>({
      op: 'creates',
      target,
      path,
      namespace: 'bench-create',
      namePrefix: prefix,
      count,
    });
    check(reply.failures === 0, `creates ${prefix}: ${reply.failures} failed, first: ${reply.firstFailure}`);
    return count / (reply.ms / 1000);
  };
  const warm = Math.min(CREATES, 300);
  await run(api, apiPath, 'warm', warm);
  await run(limit, '/create', 'warm', warm);
  const apiRates: number[] = [];
  const limitRates: number[] = [];
  const cpuPerCreate: number[] = [];
  const cpuPerLimit: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const order = r % 2 === 0 ? (['api', 'limit'] as const) : (['limit', 'api'] as const);
    for (const which of order) {
      collectGarbage(2);
      if (which === 'api') {
        const cpu = process.cpuUsage();
        apiRates.push(await run(api, apiPath, `run${r}`, CREATES));
        const used = process.cpuUsage(cpu);
        cpuPerCreate.push((used.user + used.system) / CREATES);
      } else {
        const cpu = process.cpuUsage();
        limitRates.push(await run(limit, '/create', `run${r}`, CREATES));
        const used = process.cpuUsage(cpu);
        cpuPerLimit.push((used.user + used.system) / CREATES);
      }
    }
  }
  const ratios = apiRates.map((a, i) => a / (limitRates[i] as number));
  table(
    ['figure', 'limit (trivial node:http handler)', 'apiserver (POST ConfigMap)'],
    [
      ['requests/s', show(spread(limitRates), 0), show(spread(apiRates), 0)],
      [
        'ms per request',
        show(spread(limitRates.map((r) => 1000 / r)), 3),
        show(spread(apiRates.map((r) => 1000 / r)), 3),
      ],
      ['server CPU per request, µs', show(spread(cpuPerLimit), 0), show(spread(cpuPerCreate), 0)],
    ],
  );
  console.log(
    `creates / limit: ${fmt((median(apiRates) / median(limitRates)) * 100)} % of the median (per alternating pair: ${fmt(Math.min(...ratios) * 100)}–${fmt(Math.max(...ratios) * 100)} %); no goal set`,
  );
}

// ---------------------------------------------------------------------------------------------
// 3. Fan-out

/** Finds the server's WatchEncoder: the first `encode` call (the watch path's) records its receiver, then unhooks. */
function captureEncoder(): () => WatchEncoder | undefined {
  const original = WatchEncoder.prototype.encode;
  let found: WatchEncoder | undefined;
  WatchEncoder.prototype.encode = function (this: WatchEncoder, ...args: Parameters<WatchEncoder['encode']>) {
    found = this;
    WatchEncoder.prototype.encode = original;
    return original.apply(this, args);
  };
  return () => found;
}

async function benchFanout(
  client: Client,
  api: Target,
  openWatches: () => number,
  targetRv: string,
): Promise<void> {
  const encoder = captureEncoder();
  const watchPath = `/api/v1/namespaces/bench-fanout/configmaps?watch=true&resourceVersion=${targetRv}&timeoutSeconds=600`;
  const opened = await client.call<WatchOpenReply>({
    op: 'watch-open',
    target: api,
    path: watchPath,
    count: WATCHERS,
  });
  check(opened.opened === WATCHERS, `opened ${opened.opened} of ${WATCHERS} watches`);
  check(openWatches() === WATCHERS, `the server counts ${openWatches()} open watches, expected ${WATCHERS}`);
  let seq = 1;
  const changes = async (watched: boolean, count: number): Promise<ChangesReply> => {
    const namespace = watched ? 'bench-fanout' : 'bench-quiet';
    const reply = await client.call<ChangesReply>({
      op: 'changes',
      target: api,
      path: `/api/v1/namespaces/${namespace}/configmaps/target`,
      namespace,
      name: 'target',
      firstSeq: seq,
      changes: count,
      watched,
    });
    seq += count;
    check(reply.problems.length === 0, `fan-out: ${reply.problems.join('; ')}`);
    return reply;
  };
  await changes(false, Math.min(CHANGES, 50));
  await changes(true, Math.min(CHANGES, 50));
  const enc = encoder();
  check(enc !== undefined, 'the watch encoder was never used');

  const p50: number[] = [];
  const p99: number[] = [];
  const max: number[] = [];
  const first50: number[] = [];
  const put50: number[] = [];
  const quietPut50: number[] = [];
  const cpuWatched: number[] = [];
  const cpuQuiet: number[] = [];
  const encodesPerChange: number[] = [];
  const reusesPerChange: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    collectGarbage(2);
    let cpu = process.cpuUsage();
    const quiet = await changes(false, CHANGES);
    let used = process.cpuUsage(cpu);
    cpuQuiet.push((used.user + used.system) / CHANGES);
    quietPut50.push(median(quiet.putMs));
    collectGarbage(2);
    const before = enc?.stats ?? { hits: 0, misses: 0 };
    cpu = process.cpuUsage();
    const watched = await changes(true, CHANGES);
    used = process.cpuUsage(cpu);
    const after = enc?.stats ?? { hits: 0, misses: 0 };
    cpuWatched.push((used.user + used.system) / CHANGES);
    encodesPerChange.push((after.misses - before.misses) / CHANGES);
    reusesPerChange.push((after.hits - before.hits) / CHANGES);
    p50.push(quantile(watched.allMs, 0.5));
    p99.push(quantile(watched.allMs, 0.99));
    max.push(Math.max(...watched.allMs));
    first50.push(quantile(watched.firstMs, 0.5));
    put50.push(median(watched.putMs));
  }
  const closed = await client.call<WatchCloseReply>({ op: 'watch-close' });
  check(closed.closed === 0, `${closed.closed} watches ended early`);

  const perWatcher = cpuWatched.map((c, i) => (c - (cpuQuiet[i] as number)) / WATCHERS);
  table(
    ['figure (per change)', `${WATCHERS} watchers`, 'nobody watching'],
    [
      ['PUT sent → all watchers have it, p50 ms', show(spread(p50), 2), ''],
      ['PUT sent → all watchers have it, p99 ms', show(spread(p99), 2), ''],
      ['PUT sent → all watchers have it, max ms', show(spread(max), 2), ''],
      ['PUT sent → first watcher has it, p50 ms', show(spread(first50), 2), ''],
      ['PUT round trip, p50 ms', show(spread(put50), 2), show(spread(quietPut50), 2)],
      ['server CPU, µs', show(spread(cpuWatched), 0), show(spread(cpuQuiet), 0)],
      ['server CPU per watcher, µs', show(spread(perWatcher), 1), ''],
      ['JSON encodings of the event', show(spread(encodesPerChange), 2), ''],
      ['encodings reused', show(spread(reusesPerChange), 2), ''],
    ],
  );
  const encodes = Math.max(...encodesPerChange);
  verdict(
    encodes === 1 && Math.min(...encodesPerChange) === 1,
    `each change encoded once for ${WATCHERS} watchers (WatchEncoder: ${fmt(encodes, 2)} encodings, ${fmt(median(reusesPerChange), 2)} reuses per change)`,
  );
}

// ---------------------------------------------------------------------------------------------

/** A ConfigMap for the LIST, ~0.6 KB of JSON once the store adds uid, resourceVersion, timestamp. */
function listObject(i: number): KubeObject {
  return JSON.parse(configMapBody(`team-${i % 100}`, `cm-${i.toString().padStart(6, '0')}`, i)) as KubeObject;
}

function namespaceObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  } as KubeObject;
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(
    `# Embedded API server: LIST ${OBJECTS.toLocaleString('en-US')} objects, creates, fan-out to ${WATCHERS} watchers`,
  );
  console.log(
    `node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; ${RUNS} runs per figure, shown as median (min–max)`,
  );
  console.log(`load average at start: ${loadavg()}`);

  const token = randomBytes(24).toString('base64url');
  const server = createApiServer({ tls: false, token });
  const { url } = await server.listen();
  const api: Target = { port: Number(new URL(url).port), token };
  const limitServer = await startLimit();
  const limit: Target = { port: limitServer.port, token: undefined };
  const client = new Client();
  try {
    const types = server.store.types();
    const find = (kind: string): ResourceType => {
      const type = types.find((t) => t.group === '' && t.kind === kind);
      if (type === undefined) throw new Error(`no core/v1 ${kind}`);
      return type;
    };
    const configMaps = find('ConfigMap');
    const namespaces = find('Namespace');

    let started = performance.now();
    for (let i = 0; i < OBJECTS; i++) await server.store.create(configMaps, listObject(i));
    const page = await server.store.list(configMaps);
    console.log(
      `store filled in ${fmt((performance.now() - started) / 1000, 2)} s: ${page.items.length.toLocaleString('en-US')} ConfigMaps, ${fmt(JSON.stringify(page.items[0]).length, 0)} B of JSON each`,
    );
    // The server's own ConfigMaps (kube-root-ca.crt in every namespace) are listed too.
    const benchItems = page.items.filter((item) => (item.metadata.name ?? '').startsWith('cm-')).length;
    check(benchItems === OBJECTS, `the store holds ${benchItems} bench ConfigMaps, expected ${OBJECTS}`);
    limitServer.list = { items: page.items, resourceVersion: page.resourceVersion };

    console.log(`\n## 1. LIST of ${OBJECTS.toLocaleString('en-US')} ConfigMaps (GET /api/v1/configmaps)\n`);
    started = performance.now();
    await benchList(client, api, limit, page.items.length, () => server.store.list(configMaps));
    limitServer.list = { items: [], resourceVersion: '0' };
    console.log(`(${fmt((performance.now() - started) / 1000)} s)`);

    for (const name of ['bench-create', 'bench-fanout', 'bench-quiet']) {
      await server.store.create(namespaces, namespaceObject(name));
    }
    console.log(`\n## 2. Creates over one keep-alive connection (${CREATES} sequential POSTs per run)\n`);
    started = performance.now();
    await benchCreates(client, api, limit);
    console.log(`(${fmt((performance.now() - started) / 1000)} s)`);

    console.log(
      `\n## 3. One change fanned out to ${WATCHERS} watchers (${CHANGES} sequential PUTs per run)\n`,
    );
    started = performance.now();
    await server.store.create(
      configMaps,
      JSON.parse(configMapBody('bench-quiet', 'target', 0)) as KubeObject,
    );
    const target = await server.store.create(
      configMaps,
      JSON.parse(configMapBody('bench-fanout', 'target', 0)) as KubeObject,
    );
    await benchFanout(client, api, () => server.openWatches, target.metadata.resourceVersion ?? '');
    console.log(`(${fmt((performance.now() - started) / 1000)} s)`);

    console.log(
      `\n## 4. Built-in kinds: LIST of ${PODS.toLocaleString('en-US')} Pods, protobuf vs JSON; strict creates\n`,
    );
    started = performance.now();
    await server.store.create(namespaces, namespaceObject('bench-pods'));
    await benchPods({
      store: server.store,
      pods: find('Pod'),
      url,
      token,
      count: PODS,
      runs: RUNS,
      creates: CREATES,
      check,
      verdict,
      table,
    });
    console.log(`(${fmt((performance.now() - started) / 1000)} s)`);
  } finally {
    client.close();
    await server.close();
    await new Promise<void>((resolve) => limitServer.server.close(() => resolve()));
  }

  console.log(`load average at end: ${loadavg()}\n`);
  for (const line of verdicts) console.log(line);
  if (correctness.length > 0) {
    console.log(`\nCORRECTNESS FAILURES:\n${correctness.join('\n')}`);
    process.exitCode = 1;
  }
}

await main();
