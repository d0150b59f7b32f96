/**
 * Informer cold sync over the Kubernetes backend: run with `npm run bench:kube-sync` (see
 * BENCHMARKS.md at the repo root). The embedded API server runs in a separate process
 * (kube-sync-server.ts, spawned with process.execPath) holding BENCH_OBJECTS (100 000) custom
 * resources (a namespaced `Widget` CRD) of ~0.6 KB, served over plain HTTP on 127.0.0.1 with a
 * bearer token. This process is the client; per run, alternating, it measures
 *
 * 1. Converge: an `Informer` over `KubeBackend` (pages of 500), from `start` until `waitForSync`,
 *    with one counting listener.
 * 2. The limit: the same pages (`limit=500` + `continue`, the same bytes) over raw node:http with a
 *    keep-alive agent, `JSON.parse` of each page and one `Map.set` per item — nothing else.
 * 3. `@kubernetes/client-node`'s informer (`makeInformer` over `CustomObjectsApi`
 *    .listClusterCustomObject, which lists everything in one response as its ListWatch does) from
 *    `start()` until its 'add' callback has fired for every object.
 *
 * Figures: objects/s (median and min–max over BENCH_RUNS, default 3) and the largest event-loop
 * delay of this process during each sync (perf_hooks.monitorEventLoopDelay, 1 ms resolution).
 * Goals: Converge >= 70 % of the limit's throughput (median of per-run ratios), >= 2x
 * client-node's, largest event-loop delay <= 50 ms (median of the per-run maxima; the worst run is
 * printed too). Exit status 1 only when a correctness check fails (any of the three did not see
 * exactly BENCH_OBJECTS distinct objects); a missed performance goal prints FAIL and exits 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, type IncomingMessage, request } from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { KubeObject, ResourceType } from '@converge/runtime';
import {
  KubeConfig as ClientNodeConfig,
  CustomObjectsApi,
  type KubernetesListObject,
  type KubernetesObject,
  makeInformer,
} from '@kubernetes/client-node';
import { KubeBackend } from '../packages/kube/src/index.ts';
import { Informer } from '../packages/runtime/src/informer/index.ts';
import { collectGarbage, fmt, median, positiveInt } from './harness.ts';
import type { ServerReady } from './kube-sync-server.ts';

const OBJECTS = positiveInt('BENCH_OBJECTS', 100_000);
const RUNS = positiveInt('BENCH_RUNS', 3);
const PAGE_SIZE = 500;
const GOAL_OF_LIMIT = 0.7;
const GOAL_OF_CLIENT_NODE = 2;
const GOAL_DELAY_MS = 50;

const correctness: string[] = [];
const verdicts: string[] = [];

/** `median (min–max)` */
function show(values: readonly number[], digits = 1): string {
  return `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`;
}

function check(ok: boolean, what: string): void {
  if (!ok) correctness.push(what);
}

function verdict(ok: boolean, text: string): void {
  verdicts.push(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
}

function keyOf(object: { metadata?: { namespace?: string; name?: string } }): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

// ---------------------------------------------------------------------------------------------
// The server process

async function startServer(token: string): Promise<{ child: ChildProcess; ready: ServerReady }> {
  const script = fileURLToPath(new URL('./kube-sync-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=@converge/source', script], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_OBJECTS: String(OBJECTS), BENCH_TOKEN: token },
  });
  const ready = await new Promise<ServerReady>((resolve, reject) => {
    child.once('message', (msg) => resolve(msg as ServerReady));
    child.once('exit', (code) => reject(new Error(`the server process exited with ${code}`)));
    child.once('error', reject);
  });
  child.removeAllListeners('exit');
  return { child, ready };
}

// ---------------------------------------------------------------------------------------------
// The three syncs

interface Sync {
  readonly ms: number;
  readonly objects: number;
  readonly delayMs: number;
}

/** Runs `body` with the event-loop delay histogram on; returns its time and the largest delay. */
async function measured(body: () => Promise<number>): Promise<Sync> {
  collectGarbage(3);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  const objects = await body();
  const ms = performance.now() - started;
  histogram.disable();
  return { ms, objects, delayMs: histogram.max / 1e6 };
}

function listPath(ready: ServerReady): string {
  return `/apis/${ready.group}/${ready.version}/${ready.plural}`;
}

/** Converge: Informer over KubeBackend until waitForSync. */
async function convergeSync(ready: ServerReady, type: ResourceType): Promise<Sync> {
  const backend = new KubeBackend({
    config: { server: ready.url, namespace: 'default', tls: {}, auth: { type: 'token', token: ready.token } },
    fieldManager: 'bench',
  });
  let events = 0;
  try {
    const sync = await measured(async () => {
      const informer = new Informer({ backend, type, pageSize: PAGE_SIZE });
      informer.subscribe(() => {
        events++;
      });
      const stop = new AbortController();
      const run = informer.start(stop.signal);
      await informer.waitForSync(stop.signal);
      const size = informer.cache.size;
      stop.abort();
      await run;
      return size;
    });
    check(events === OBJECTS, `converge: ${events} events, expected ${OBJECTS}`);
    return sync;
  } finally {
    await backend.close();
  }
}

/** One GET over the keep-alive agent; resolves with the whole body. */
function get(agent: Agent, ready: ServerReady, path: string): Promise<Buffer> {
  const url = new URL(ready.url);
  return new Promise<Buffer>((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        agent,
        headers: { accept: 'application/json', authorization: `Bearer ${ready.token}` },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
          else resolve(Buffer.concat(chunks));
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The limit: the same pages over raw node:http, JSON.parse per page, Map.set per item. */
async function limitSync(ready: ServerReady): Promise<Sync> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    return await measured(async () => {
      const map = new Map<string, KubeObject>();
      let token = '';
      do {
        const query = `limit=${PAGE_SIZE}${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`;
        const page = JSON.parse(
          (await get(agent, ready, `${listPath(ready)}?${query}`)).toString('utf8'),
        ) as {
          items: KubeObject[];
          metadata: { continue?: string };
        };
        for (const item of page.items) map.set(keyOf(item), item);
        token = page.metadata.continue ?? '';
      } while (token !== '');
      return map.size;
    });
  } finally {
    agent.destroy();
  }
}

/** client-node: makeInformer until 'add' fired for every object (its first list is done). */
async function clientNodeSync(ready: ServerReady): Promise<Sync> {
  const kc = new ClientNodeConfig();
  kc.loadFromOptions({
    // client-node refuses an http:// server unless skipTLSVerify is set; there is no TLS to skip.
    clusters: [{ name: 'bench', server: ready.url, skipTLSVerify: true }],
    users: [{ name: 'bench', token: ready.token }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  const api = kc.makeApiClient(CustomObjectsApi);
  const listFn = (): Promise<KubernetesListObject<KubernetesObject>> =>
    api.listClusterCustomObject({
      group: ready.group,
      version: ready.version,
      plural: ready.plural,
    }) as Promise<KubernetesListObject<KubernetesObject>>;
  const informer = makeInformer(kc, listPath(ready), listFn);
  let adds = 0;
  const keys = new Set<string>();
  let listed: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    listed = resolve;
  });
  informer.on('add', (object) => {
    adds++;
    keys.add(keyOf(object));
    if (adds === OBJECTS) listed();
  });
  let failure: unknown;
  informer.on('error', (error) => {
    failure = error;
    listed();
  });
  try {
    const sync = await measured(async () => {
      await informer.start();
      await done;
      return keys.size;
    });
    check(failure === undefined, `client-node: informer error ${String(failure)}`);
    check(adds === OBJECTS, `client-node: ${adds} 'add' events, expected ${OBJECTS}`);
    return sync;
  } finally {
    await informer.stop();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(
    `# Informer cold sync over the Kubernetes backend: ${OBJECTS.toLocaleString('en-US')} custom resources, ${RUNS} runs, pages of ${PAGE_SIZE}`,
  );
  console.log(
    `node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average at start ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
  );
  const token = randomBytes(24).toString('base64url');
  const { child, ready } = await startServer(token);
  try {
    console.log(
      `server process ${child.pid}: ${ready.url}, plain HTTP + bearer token; ${ready.objects.toLocaleString('en-US')} ${ready.kind}s of ${ready.objectBytes} B of JSON each, put in its store in ${fmt(ready.fillMs / 1000, 2)} s\n`,
    );
    const discovery = new KubeBackend({
      config: { server: ready.url, namespace: 'default', tls: {}, auth: { type: 'token', token } },
    });
    await discovery.discover();
    const type = discovery.resolveType(`${ready.group}/${ready.version}`, ready.kind);
    await discovery.close();
    if (type === undefined)
      throw new Error(`discovery does not serve ${ready.group}/${ready.version} ${ready.kind}`);

    const runs = { converge: [] as Sync[], limit: [] as Sync[], clientNode: [] as Sync[] };
    const orders = [
      ['converge', 'limit', 'clientNode'],
      ['limit', 'clientNode', 'converge'],
      ['clientNode', 'converge', 'limit'],
    ] as const;
    for (let run = 0; run < RUNS; run++) {
      for (const which of orders[run % orders.length] ?? orders[0]) {
        let sync: Sync;
        if (which === 'converge') sync = await convergeSync(ready, type);
        else if (which === 'limit') sync = await limitSync(ready);
        else sync = await clientNodeSync(ready);
        check(
          sync.objects === OBJECTS,
          `${which} run ${run}: ${sync.objects} distinct objects, expected ${OBJECTS}`,
        );
        runs[which].push(sync);
        console.log(
          `run ${run} ${which.padEnd(10)} ${fmt(sync.ms, 0).padStart(7)} ms  ${fmt((OBJECTS / sync.ms) * 1000, 0).padStart(9)} objects/s  max loop delay ${fmt(sync.delayMs, 0)} ms`,
        );
      }
    }
    console.log('');

    const perS = (s: readonly Sync[]): number[] => s.map((r) => OBJECTS / r.ms);
    const delays = (s: readonly Sync[]): number[] => s.map((r) => r.delayMs);
    const ofLimit = runs.converge.map((r, i) => (runs.limit[i] as Sync).ms / r.ms);
    const ofClientNode = runs.converge.map((r, i) => (runs.clientNode[i] as Sync).ms / r.ms);
    const rows = [
      [
        'figure',
        'limit (raw http + JSON.parse + Map.set)',
        'Converge Informer + KubeBackend',
        '@kubernetes/client-node informer',
      ],
      ['---', '---', '---', '---'],
      [
        'throughput, thousand objects/s',
        show(perS(runs.limit)),
        show(perS(runs.converge)),
        show(perS(runs.clientNode)),
      ],
      [
        'sync time, ms',
        show(
          runs.limit.map((r) => r.ms),
          0,
        ),
        show(
          runs.converge.map((r) => r.ms),
          0,
        ),
        show(
          runs.clientNode.map((r) => r.ms),
          0,
        ),
      ],
      [
        'max event-loop delay, ms',
        show(delays(runs.limit), 0),
        show(delays(runs.converge), 0),
        show(delays(runs.clientNode), 0),
      ],
    ];
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log('');

    const convergeDelay = median(delays(runs.converge));
    verdict(
      median(ofLimit) >= GOAL_OF_LIMIT,
      `Converge at ${fmt(median(ofLimit) * 100, 0)} % of the limit (${fmt(Math.min(...ofLimit) * 100, 0)}–${fmt(Math.max(...ofLimit) * 100, 0)} %; goal >= ${GOAL_OF_LIMIT * 100} %)`,
    );
    verdict(
      median(ofClientNode) >= GOAL_OF_CLIENT_NODE,
      `Converge at ${fmt(median(ofClientNode), 2)}x client-node's throughput (${fmt(Math.min(...ofClientNode), 2)}–${fmt(Math.max(...ofClientNode), 2)}x; goal >= ${GOAL_OF_CLIENT_NODE}x)`,
    );
    verdict(
      convergeDelay <= GOAL_DELAY_MS,
      `Converge's largest event-loop delay ${fmt(convergeDelay, 0)} ms (median of per-run maxima; worst run ${fmt(Math.max(...delays(runs.converge)), 0)} ms; goal <= ${GOAL_DELAY_MS} ms)`,
    );
    for (const v of verdicts) console.log(v);
  } finally {
    child.disconnect();
  }

  if (correctness.length > 0) {
    console.log('\nCORRECTNESS FAILURES:');
    for (const c of correctness) console.log(`  ${c}`);
    process.exitCode = 1;
  } else {
    console.log(
      `\ncorrect: all three syncs saw exactly ${OBJECTS.toLocaleString('en-US')} distinct objects in every run`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
