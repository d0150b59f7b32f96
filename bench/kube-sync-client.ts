/**
 * One cold sync of one peer, in a process of its own (so its peak RSS and heap are its own):
 * spawned by `kube-sync.bench.ts` with BENCH_PEER and BENCH_SERVER (the server's
 * {@link ServerReady}, as JSON); answers one {@link ClientResult} over IPC and exits. Peers:
 *
 * - `limit`: the informer's streamed-list request (`watch=true&sendInitialEvents=true`, the same
 *   bytes) over raw node:http, split into lines, `JSON.parse` per line, managedFields dropped, one
 *   `Map.set` per ADDED object until the initial-events-end bookmark — nothing else.
 * - `limit-pages`: `limit=500` + `continue` pages over raw node:http with a keep-alive agent,
 *   `JSON.parse` per page, managedFields dropped, one `Map.set` per item.
 * - `converge` / `converge-pages`: an `Informer` over `KubeBackend` (streamed list / pages of 500)
 *   from `start` until `waitForSync`, with one counting listener and the default transform.
 * - `client-node`: `@kubernetes/client-node`'s `makeInformer` over its typed list call (one
 *   unpaginated LIST, as its ListWatch does), until 'add' fired for every object.
 * - `fluent`: `kubernetes-fluent-client`'s `K8s(Model).Watch` (one unpaginated LIST, then a watch)
 *   until its callback saw every object as ADDED.
 *
 * Figures: time from the start call until synced, largest event-loop delay during it (1 ms
 * resolution), peak RSS of the process (`resourceUsage().maxRSS`) and its RSS before the sync, and
 * the heap retained per cached object (heapUsed after 3 forced GCs with the cache alive, minus the
 * same before the sync, over the object count). Not meant to be run by hand.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { KubeObject, ResourceType } from '@converge/runtime';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import type { KubeBackend } from '../packages/kube/src/backend/index.ts';
import type { Informer } from '../packages/runtime/src/informer/index.ts';
import { collectGarbage } from './harness.ts';
import { type ClientResult, PEERS, type Peer } from './kube-sync-protocol.ts';
import type { ServerReady } from './kube-sync-server.ts';

const PAGE_SIZE = 500;
/** @converge/kube's own undici (its version may differ from the one the root resolves). */
const KUBE_PACKAGE = new URL('../packages/kube/package.json', import.meta.url);

type Meta = { namespace?: string; name?: string; managedFields?: unknown };

function keyOf(object: { metadata?: Meta }): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

/** The limit keeps what the informer keeps: the object without managedFields. */
function strip(object: KubeObject): KubeObject {
  const meta = object.metadata as Meta;
  if (meta.managedFields !== undefined) meta.managedFields = undefined;
  return object;
}

function listPath(ready: ServerReady): string {
  return ready.group === ''
    ? `/api/${ready.version}/${ready.plural}`
    : `/apis/${ready.group}/${ready.version}/${ready.plural}`;
}

/** What a sync returns: how many distinct objects it holds, a value to keep alive, and notes. */
interface Synced {
  readonly objects: number;
  readonly keep: unknown;
  readonly note?: string;
  readonly stop: () => Promise<void>;
}

function limitStream(ready: ServerReady): Promise<Synced> {
  const url = new URL(ready.url);
  const query =
    'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=600';
  return new Promise<Synced>((resolve, reject) => {
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
              if (event.type === 'ADDED') map.set(keyOf(event.object), strip(event.object));
              else if (event.type === 'BOOKMARK') {
                done = true;
                req.destroy();
                resolve({ objects: map.size, keep: map, stop: async () => {} });
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
  });
}

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

async function limitPages(ready: ServerReady): Promise<Synced> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const map = new Map<string, KubeObject>();
  let token = '';
  do {
    const query = `limit=${PAGE_SIZE}${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`;
    const page = JSON.parse((await get(agent, ready, `${listPath(ready)}?${query}`)).toString('utf8')) as {
      items: KubeObject[];
      metadata: { continue?: string };
    };
    for (const item of page.items) map.set(keyOf(item), strip(item));
    token = page.metadata.continue ?? '';
  } while (token !== '');
  agent.destroy();
  return { objects: map.size, keep: map, stop: async () => {} };
}

/** Converge's backend and informer, loaded by main (for the Converge peers only) before the baseline. */
interface Converge {
  readonly KubeBackend: typeof KubeBackend;
  readonly Informer: typeof Informer;
}

/**
 * The backend and the informer, not the packages' indexes: the rest of @converge/kube (kinds and
 * TypeBox, webhooks, manifests: 580 modules) plays no part in a sync.
 */
async function loadConverge(): Promise<Converge> {
  const { KubeBackend } = await import('../packages/kube/src/backend/index.ts');
  const { Informer } = await import('../packages/runtime/src/informer/index.ts');
  createRequire(KUBE_PACKAGE)('undici');
  return { KubeBackend, Informer };
}

async function converge(
  { KubeBackend, Informer }: Converge,
  ready: ServerReady,
  initialList: 'watch-list' | 'paginated',
  metadataOnly = false,
): Promise<Synced> {
  const backend = new KubeBackend({
    config: { server: ready.url, namespace: 'default', tls: {}, auth: { type: 'token', token: ready.token } },
    fieldManager: 'bench',
  });
  const type: ResourceType = {
    group: ready.group,
    version: ready.version,
    kind: ready.kind,
    plural: ready.plural,
    namespaced: true,
  };
  let events = 0;
  const informer = new Informer({ backend, type, initialList, pageSize: PAGE_SIZE, metadataOnly });
  informer.subscribe(() => {
    events++;
  });
  const stop = new AbortController();
  const run = informer.start(stop.signal);
  await informer.waitForSync(stop.signal);
  const fallbacks = backend.stats().watchListFallbacks;
  return {
    objects: Math.min(informer.cache.size, events),
    keep: informer,
    ...(fallbacks > 0 ? { note: `fell back from the streamed list ${fallbacks} times` } : {}),
    stop: async () => {
      stop.abort();
      await run;
      await backend.close();
    },
  };
}

function writeKubeconfig(ready: ServerReady): string {
  const file = join(tmpdir(), `converge-bench-kubeconfig-${process.pid}.yaml`);
  // The clients may read it again at any time (kubernetes-fluent-client reads $KUBECONFIG lazily):
  // it goes when this process exits, not before.
  process.once('exit', () => rmSync(file, { force: true }));
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: bench',
      '  cluster:',
      `    server: ${ready.url}`,
      // client-node refuses an http:// server unless skipTLSVerify is set; there is no TLS to skip.
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: bench',
      '  user:',
      `    token: ${ready.token}`,
      'contexts:',
      '- name: bench',
      '  context: { cluster: bench, user: bench }',
      'current-context: bench',
      '',
    ].join('\n'),
  );
  return file;
}

async function clientNode(ready: ServerReady, expected: number): Promise<Synced> {
  const k8s = await import('@kubernetes/client-node'); // loaded before the heap baseline (main)
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(writeKubeconfig(ready));
  let listFn: () => Promise<KubernetesListObject<KubernetesObject>>;
  if (ready.kind === 'Pod') {
    const api = kc.makeApiClient(k8s.CoreV1Api);
    listFn = () => api.listPodForAllNamespaces() as Promise<KubernetesListObject<KubernetesObject>>;
  } else {
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    listFn = () =>
      api.listClusterCustomObject({
        group: ready.group,
        version: ready.version,
        plural: ready.plural,
      }) as Promise<KubernetesListObject<KubernetesObject>>;
  }
  const informer = k8s.makeInformer(kc, listPath(ready), listFn);
  const keys = new Set<string>();
  let failure: unknown;
  await new Promise<void>((resolve) => {
    informer.on('add', (object) => {
      keys.add(keyOf(object as { metadata?: Meta }));
      if (keys.size === expected) resolve();
    });
    informer.on('error', (error) => {
      failure = error;
      resolve();
    });
    informer.start().catch((error: unknown) => {
      failure = error;
      resolve();
    });
  });
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
  return { objects: keys.size, keep: informer, stop: () => informer.stop() };
}

async function fluent(ready: ServerReady, expected: number): Promise<Synced> {
  process.env.KUBECONFIG = writeKubeconfig(ready);
  const kfc = await import('kubernetes-fluent-client'); // loaded before the heap baseline (main)
  let model: typeof kfc.GenericKind = kfc.kind.Pod as unknown as typeof kfc.GenericKind;
  if (ready.kind !== 'Pod') {
    class Widget extends kfc.GenericKind {}
    kfc.RegisterKind(Widget, {
      group: ready.group,
      version: ready.version,
      kind: ready.kind,
      plural: ready.plural,
    });
    model = Widget;
  }
  const keys = new Set<string>();
  const notes: string[] = [];
  let watcher: { close(): void } | undefined;
  await new Promise<void>((resolve) => {
    const w = kfc.K8s(model).Watch((object, phase) => {
      if (phase === 'ADDED') keys.add(keyOf(object as { metadata?: Meta }));
      if (keys.size === expected) resolve();
    });
    watcher = w;
    w.events.on(kfc.WatchEvent.LIST_ERROR, (error: unknown) => {
      const text = error instanceof Error ? error.message : String(error);
      if (!notes.includes(text)) notes.push(`LIST failed: ${text.slice(0, 160)}`);
    });
    w.start().catch((error: unknown) => {
      notes.push(`start failed: ${String(error)}`);
      resolve();
    });
  });
  return {
    objects: keys.size,
    keep: watcher,
    ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
    stop: async () => watcher?.close(),
  };
}

/**
 * With BENCH_CPU_PROFILE=PREFIX: a CPU profile of the sync alone (from the start call until
 * synced, 100 µs sampling), written to PREFIX-PEER-PID.cpuprofile; `--cpu-prof` in
 * BENCH_CLIENT_FLAGS profiles the whole process instead (start-up, baseline GCs and the exit).
 */
async function startCpuProfile(): Promise<{ stop: () => Promise<void> } | undefined> {
  const prefix = process.env.BENCH_CPU_PROFILE;
  if (prefix === undefined || prefix === '') return undefined;
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    stop: async () => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(`${prefix}-${process.env.BENCH_PEER}-${process.pid}.cpuprofile`, JSON.stringify(profile));
    },
  };
}

async function main(): Promise<void> {
  const peer = process.env.BENCH_PEER as Peer;
  const ready = JSON.parse(process.env.BENCH_SERVER ?? '{}') as ServerReady;
  if (!PEERS.includes(peer) || process.send === undefined)
    throw new Error('kube-sync-client.ts is started by kube-sync.bench.ts');
  // Its parent gone (killed, or its output closed), the sync is no one's: a client whose server
  // went too would otherwise retry its watch for good.
  process.once('disconnect', () => process.exit(1));
  const expected = ready.objects;
  // A peer's library is loaded before the baseline and the clock, so neither its code nor the
  // time to load it is counted as sync: client-node and fluent here, and Converge's backend and
  // informer with its HTTP client, undici (@converge/kube loads it on its first connection
  // instead of at import, and it is ~110 modules: 0.1-0.3 s of a 10 000-object sync).
  if (peer === 'client-node') await import('@kubernetes/client-node');
  if (peer === 'fluent') await import('kubernetes-fluent-client');
  const lib = peer.startsWith('converge') ? await loadConverge() : undefined;
  collectGarbage(3);
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBeforeBytes = process.memoryUsage().rss;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const profile = await startCpuProfile();
  const started = performance.now();
  let synced: Synced | undefined;
  let note: string | undefined;
  try {
    if (peer === 'limit') synced = await limitStream(ready);
    else if (peer === 'limit-pages') synced = await limitPages(ready);
    else if (lib !== undefined)
      synced = await converge(
        lib,
        ready,
        peer.startsWith('converge-pages') ? 'paginated' : 'watch-list',
        peer === 'converge-metadata',
      );
    else if (peer === 'client-node') synced = await clientNode(ready, expected);
    else synced = await fluent(ready, expected);
  } catch (error) {
    note =
      error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : String(error).slice(0, 300);
  }
  const ms = performance.now() - started;
  histogram.disable();
  await profile?.stop();
  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  collectGarbage(3);
  const heapPerObject =
    synced === undefined ? 0 : (process.memoryUsage().heapUsed - heapBefore) / Math.max(1, synced.objects);
  const result: ClientResult = {
    peer,
    completed: synced !== undefined && synced.objects === expected,
    ...(note !== undefined || synced?.note !== undefined
      ? { note: [note, synced?.note].filter(Boolean).join('; ') }
      : {}),
    ms,
    objects: synced?.objects ?? 0,
    delayMs: histogram.max / 1e6,
    peakRssBytes,
    rssBeforeBytes,
    heapPerObject,
  };
  process.send(result, () => {
    void (synced?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
