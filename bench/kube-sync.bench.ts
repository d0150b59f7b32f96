/**
 * Informer cold sync over the Kubernetes backend: run with `npm run bench:kube-sync` (see
 * BENCHMARKS.md at the repo root). The embedded API server runs in a separate process
 * (kube-sync-server.ts, spawned with process.execPath) holding BENCH_OBJECTS (100 000) custom
 * resources (a namespaced `Widget` CRD) of ~0.6 KB, served over plain HTTP on 127.0.0.1 with a
 * bearer token. This process is the client. After one unmeasured warm-up round of every sync, per
 * run (the order rotates from run to run) it measures
 *
 * 1. The limit: the informer's streamed-list request (`watch=true&sendInitialEvents=true`, the same
 *    bytes) over raw node:http, split into lines, `JSON.parse` per line and one `Map.set` per
 *    ADDED object until the initial-events-end bookmark — nothing else.
 * 2. Converge: an `Informer` over `KubeBackend` with `initialList: 'watch-list'`, from `start`
 *    until `waitForSync`, with one counting listener.
 * 3. The paginated limit: `limit=500` + `continue` pages over raw node:http with a keep-alive agent,
 *    `JSON.parse` per page and one `Map.set` per item.
 * 4. Converge paginated: the same informer with `initialList: 'paginated'` (pages of 500).
 * 5. `@kubernetes/client-node`'s informer (`makeInformer` over `CustomObjectsApi`
 *    .listClusterCustomObject, which lists everything in one response as its ListWatch does) from
 *    `start()` until its 'add' callback has fired for every object.
 *
 * Figures: objects/s (median and min–max over BENCH_RUNS, default 3) and the largest event-loop
 * delay of this process during each sync (perf_hooks.monitorEventLoopDelay, 1 ms resolution).
 * Goals, for the streamed Converge: >= 70 % of the streamed limit's throughput (median of per-run
 * ratios), >= 2x client-node's, largest event-loop delay <= 50 ms (median of the per-run maxima;
 * the worst run is printed too). Exit status 1 only when a correctness check fails (any sync did
 * not see exactly BENCH_OBJECTS distinct objects); a missed performance goal prints FAIL and exits 0.
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

/** Converge: Informer over KubeBackend until waitForSync, with streamed or paginated lists. */
async function convergeSync(
  ready: ServerReady,
  type: ResourceType,
  initialList: 'watch-list' | 'paginated',
): Promise<Sync> {
  const backend = new KubeBackend({
    config: { server: ready.url, namespace: 'default', tls: {}, auth: { type: 'token', token: ready.token } },
    fieldManager: 'bench',
  });
  let events = 0;
  try {
    const sync = await measured(async () => {
      const informer = new Informer({ backend, type, initialList, pageSize: PAGE_SIZE });
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
    check(events === OBJECTS, `converge ${initialList}: ${events} events, expected ${OBJECTS}`);
    check(
      backend.stats().watchListFallbacks === 0,
      `converge ${initialList}: the server rejected sendInitialEvents`,
    );
    return sync;
  } finally {
    await backend.close();
  }
}

/**
 * The limit: the informer's streamed-list request (watch + sendInitialEvents, the same bytes) over
 * raw node:http, split into lines, JSON.parse per line, Map.set per ADDED object, until the
 * initial-events-end bookmark.
 */
async function limitStreamSync(ready: ServerReady): Promise<Sync> {
  const url = new URL(ready.url);
  const query =
    'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=600';
  return measured(
    () =>
      new Promise<number>((resolve, reject) => {
        const map = new Map<string, KubeObject>();
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: `${listPath(ready)}?${query}`,
            headers: { accept: 'application/json', authorization: `Bearer ${ready.token}` },
          },
          (res: IncomingMessage) => {
            if (res.statusCode !== 200) {
              reject(new Error(`watch: ${res.statusCode}`));
              res.destroy();
              return;
            }
            // read() hands over everything buffered at once: fewer, larger pieces than 'data'.
            let rest: Buffer | undefined;
            let done = false;
            res.on('readable', () => {
              for (let chunk = res.read() as Buffer | null; chunk !== null && !done; chunk = res.read()) {
                const data = rest === undefined ? chunk : Buffer.concat([rest, chunk]);
                let start = 0;
                for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, start)) {
                  const line = data.toString('utf8', start, nl);
                  start = nl + 1;
                  const event = JSON.parse(line) as { type: string; object: KubeObject };
                  if (event.type === 'ADDED') map.set(keyOf(event.object), event.object);
                  else if (event.type === 'BOOKMARK') {
                    done = true;
                    resolve(map.size);
                    req.destroy();
                    return;
                  }
                }
                rest = start < data.length ? data.subarray(start) : undefined;
              }
            });
            res.on('error', () => {});
          },
        );
        req.on('error', (error) => {
          if (!req.destroyed) reject(error);
        });
        req.end();
      }),
  );
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

/** The paginated limit: the same pages over raw node:http, JSON.parse per page, Map.set per item. */
async function limitPagesSync(ready: ServerReady): Promise<Sync> {
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

    const kinds = ['limit', 'converge', 'limitPages', 'convergePages', 'clientNode'] as const;
    type Kind = (typeof kinds)[number];
    const runs: Record<Kind, Sync[]> = {
      limit: [],
      converge: [],
      limitPages: [],
      convergePages: [],
      clientNode: [],
    };
    // One unmeasured round first: the server's and this process' JIT warm up on every path.
    await convergeSync(ready, type, 'watch-list');
    await limitStreamSync(ready);
    await convergeSync(ready, type, 'paginated');
    await limitPagesSync(ready);
    await clientNodeSync(ready);
    for (let run = 0; run < RUNS; run++) {
      // Rotate the order from run to run so no sync always runs first (or right after another).
      const shift = run % kinds.length;
      for (const which of [...kinds.slice(shift), ...kinds.slice(0, shift)]) {
        let sync: Sync;
        if (which === 'converge') sync = await convergeSync(ready, type, 'watch-list');
        else if (which === 'convergePages') sync = await convergeSync(ready, type, 'paginated');
        else if (which === 'limit') sync = await limitStreamSync(ready);
        else if (which === 'limitPages') sync = await limitPagesSync(ready);
        else sync = await clientNodeSync(ready);
        check(
          sync.objects === OBJECTS,
          `${which} run ${run}: ${sync.objects} distinct objects, expected ${OBJECTS}`,
        );
        runs[which].push(sync);
        console.log(
          `run ${run} ${which.padEnd(13)} ${fmt(sync.ms, 0).padStart(7)} ms  ${fmt((OBJECTS / sync.ms) * 1000, 0).padStart(9)} objects/s  max loop delay ${fmt(sync.delayMs, 0)} ms`,
        );
      }
    }
    console.log('');

    const perS = (s: readonly Sync[]): number[] => s.map((r) => OBJECTS / r.ms);
    const delays = (s: readonly Sync[]): number[] => s.map((r) => r.delayMs);
    const ratio = (num: readonly Sync[], den: readonly Sync[]): number[] =>
      den.map((r, i) => (num[i] as Sync).ms / r.ms);
    const ofLimit = ratio(runs.limit, runs.converge);
    const ofClientNode = ratio(runs.clientNode, runs.converge);
    const header: Record<Kind, string> = {
      limit: 'limit: streamed (raw http + lines + JSON.parse + Map.set)',
      converge: 'Converge Informer + KubeBackend, streamed list',
      limitPages: 'paginated limit (raw http, 500/page)',
      convergePages: 'Converge Informer + KubeBackend, paginated (500/page)',
      clientNode: '@kubernetes/client-node informer (one LIST)',
    };
    console.log('| figure | throughput, thousand objects/s | sync time, ms | max event-loop delay, ms |');
    console.log('| --- | --- | --- | --- |');
    for (const kind of kinds) {
      const r = runs[kind];
      console.log(
        `| ${header[kind]} | ${show(perS(r))} | ${show(
          r.map((x) => x.ms),
          0,
        )} | ${show(delays(r), 0)} |`,
      );
    }
    console.log('');

    const convergeDelay = median(delays(runs.converge));
    verdict(
      median(ofLimit) >= GOAL_OF_LIMIT,
      `Converge (streamed) at ${fmt(median(ofLimit) * 100, 0)} % of the streamed limit (${fmt(Math.min(...ofLimit) * 100, 0)}–${fmt(Math.max(...ofLimit) * 100, 0)} %; goal >= ${GOAL_OF_LIMIT * 100} %)`,
    );
    verdict(
      median(ofClientNode) >= GOAL_OF_CLIENT_NODE,
      `Converge (streamed) at ${fmt(median(ofClientNode), 2)}x client-node's throughput (${fmt(Math.min(...ofClientNode), 2)}–${fmt(Math.max(...ofClientNode), 2)}x; goal >= ${GOAL_OF_CLIENT_NODE}x)`,
    );
    verdict(
      convergeDelay <= GOAL_DELAY_MS,
      `Converge's (streamed) largest event-loop delay ${fmt(convergeDelay, 0)} ms (median of per-run maxima; worst run ${fmt(Math.max(...delays(runs.converge)), 0)} ms; goal <= ${GOAL_DELAY_MS} ms)`,
    );
    const limitVsClientNode = ratio(runs.clientNode, runs.limit);
    console.log(
      `(for reference: the streamed limit itself is at ${fmt(median(limitVsClientNode), 2)}x client-node's throughput; the paginated Converge at ${fmt(median(ratio(runs.limitPages, runs.convergePages)) * 100, 0)} % of the paginated limit and ${fmt(median(ratio(runs.clientNode, runs.convergePages)), 2)}x client-node)`,
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
      `\ncorrect: all five syncs saw exactly ${OBJECTS.toLocaleString('en-US')} distinct objects in every run`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
