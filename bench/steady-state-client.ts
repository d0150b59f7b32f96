/**
 * One controller of `steady-state.bench.ts`, in a process of its own: BENCH_PEER is `converge`
 * (Informer over KubeBackend feeding a Controller through `fromEventSource` + `enqueueForObject`,
 * one worker) or `client-node` (client-node's informer feeding the simplest correct queue a
 * TypeScript user would write — bench/naive-queue.ts: a FIFO with a dirty set and a processing set,
 * client-go semantics — drained by one worker loop). Both reconcilers do the same: read the object
 * from their cache and record, once per write, the time from the server's stamp (`spec.sentAt`,
 * wall-clock ms) to the reconcile's start. Messages: `{ synced }` once the cache is full, then on
 * `{ report }` a {@link LatencyReport}. Not meant to be run by hand.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import type { ObjectKey, ResourceType } from '@converge/runtime';
import { KubeBackend } from '../packages/kube/src/index.ts';
import { Controller } from '../packages/runtime/src/controller/index.ts';
import { enqueueForObject } from '../packages/runtime/src/handler/index.ts';
import { Informer } from '../packages/runtime/src/informer/index.ts';
import { fromEventSource } from '../packages/runtime/src/source/index.ts';
import type { ServerReady } from './kube-sync-server.ts';
import { NaiveQueue } from './naive-queue.ts';

/**
 * What a controller reports: per observed write its seq and its latency (the bench keeps the seqs
 * of its own command: the initial sync sees earlier runs' writes), and the last write each
 * object's reconcile saw.
 */
export interface LatencyReport {
  readonly seqs: number[];
  readonly latenciesMs: number[];
  /**
   * Per observed write, the part of its latency before the event reached the controller's handler
   * (server's watch fan-out, loopback, decode, informer): stamp → the handler saw its key's last
   * event. The rest (handler → reconcile start) is the queue and the worker.
   */
  readonly deliveryMs: number[];
  /** Garbage collections during the process's life after sync: count, total and largest pause (ms). */
  readonly gc: { readonly count: number; readonly totalMs: number; readonly maxMs: number };
  /** Largest event-loop delay after sync (ms, perf_hooks' histogram at 1 ms resolution). */
  readonly loopDelayMaxMs: number;
  readonly reconciles: number;
  readonly lastSeqSeen: Record<string, number>;
}

type Widget = { metadata: { namespace?: string; name?: string }; spec?: { sentAt?: number; seq?: number } };

const seqs: number[] = [];
const latenciesMs: number[] = [];
const deliveryMs: number[] = [];
/** When the handler last saw an event of each key (wall-clock ms, as the server's stamps). */
const arrivedAt = new Map<string, number>();

function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

function arrived(key: string): void {
  arrivedAt.set(key, wallNow());
}

const gc = { count: 0, totalMs: 0, maxMs: 0 };
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
let allocations: import('node:inspector/promises').Session | undefined;

/**
 * With BENCH_ALLOC_PROFILE=PREFIX: a sampling heap profile of every allocation from the end of the
 * sync to the report, collected objects included, written to PREFIX-PEER.heapprofile (open it in
 * Chrome's DevTools, Memory tab): what each peer allocates per write, which sets how often it
 * collects garbage.
 */
async function startAllocationProfile(): Promise<void> {
  if (process.env.BENCH_ALLOC_PROFILE === undefined) return;
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    // BENCH_ALLOC_PROFILE_SURVIVORS=1: only what outlived the young generation (promoted, then
    // collected by a full GC or still live): what makes scavenges long and full GCs come.
    includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_PROFILE_SURVIVORS !== '1',
  });
  allocations = session;
}

async function stopAllocationProfile(): Promise<void> {
  if (allocations === undefined) return;
  const { profile } = await allocations.post('HeapProfiler.stopSampling');
  writeFileSync(
    `${process.env.BENCH_ALLOC_PROFILE}-${process.env.BENCH_PEER}.heapprofile`,
    JSON.stringify(profile),
  );
}

/** From the bench's `{ measure }` on (after the warm-up): GC pauses and loop delay of the measured writes only. */
async function watchSteadyState(): Promise<void> {
  await startAllocationProfile();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++;
      gc.totalMs += entry.duration;
      if (entry.duration > gc.maxMs) gc.maxMs = entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  loopDelay.enable();
}
const lastSeqSeen: Record<string, number> = {};
let reconciles = 0;
/** While the bench waits for the last writes: the keys whose last write no reconcile saw yet. */
let awaited:
  | { readonly until: Record<string, number>; pending: number; readonly done: () => void }
  | undefined;

function observe(key: string, object: Widget | undefined): void {
  reconciles++;
  const now = wallNow();
  const seq = object?.spec?.seq;
  const sentAt = object?.spec?.sentAt;
  if (seq === undefined || sentAt === undefined) return;
  if ((lastSeqSeen[key] ?? -1) >= seq) return;
  const before = lastSeqSeen[key] ?? -1;
  lastSeqSeen[key] = seq;
  if (awaited !== undefined) {
    const last = awaited.until[key];
    if (last !== undefined && before < last && seq >= last && --awaited.pending === 0) awaited.done();
  }
  seqs.push(seq);
  latenciesMs.push(now - sentAt);
  deliveryMs.push((arrivedAt.get(key) ?? now) - sentAt);
}

async function converge(ready: ServerReady, signal: AbortSignal): Promise<void> {
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
  const informer = new Informer<Widget & import('@converge/runtime').KubeObject>({
    backend,
    type,
    initialList: 'watch-list',
  });
  const enqueue = enqueueForObject<Widget & import('@converge/runtime').KubeObject>();
  const controller = new Controller<ObjectKey>({
    name: 'bench',
    sources: [
      fromEventSource(informer, {
        handle(event, queue): void {
          arrived(`${event.object.metadata.namespace ?? ''}/${event.object.metadata.name}`);
          enqueue.handle(event, queue);
        },
      }),
    ],
    reconciler: (request: ObjectKey) => {
      observe(`${request.namespace ?? ''}/${request.name}`, informer.cache.get(request));
    },
  });
  const running = controller.start(signal);
  await informer.waitForSync(signal);
  process.send?.({ synced: true });
  await running;
  await backend.close();
}

async function clientNode(ready: ServerReady, signal: AbortSignal): Promise<void> {
  const k8s = await import('@kubernetes/client-node');
  const file = join(tmpdir(), `converge-bench-kubeconfig-${process.pid}.yaml`);
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: ${ready.url}\n    insecure-skip-tls-verify: true\nusers:\n- name: bench\n  user:\n    token: ${ready.token}\ncontexts:\n- name: bench\n  context: { cluster: bench, user: bench }\ncurrent-context: bench\n`,
  );
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(file);
  rmSync(file, { force: true }); // read once: client-node keeps what it loaded
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const path = `/apis/${ready.group}/${ready.version}/${ready.plural}`;
  const informer = k8s.makeInformer(
    kc,
    path,
    () =>
      api.listClusterCustomObject({
        group: ready.group,
        version: ready.version,
        plural: ready.plural,
      }) as Promise<
        import('@kubernetes/client-node').KubernetesListObject<
          import('@kubernetes/client-node').KubernetesObject
        >
      >,
  );
  const queue = new NaiveQueue<string>();
  const enqueue = (object: { metadata?: { namespace?: string; name?: string } }): void => {
    const key = `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
    arrived(key);
    queue.add(key);
  };
  informer.on('add', enqueue);
  informer.on('update', enqueue);
  let adds = 0;
  const synced = new Promise<void>((resolve) => {
    informer.on('add', () => {
      if (++adds === ready.objects) resolve();
    });
  });
  await informer.start();
  await synced;
  process.send?.({ synced: true });
  for (;;) {
    const key = await queue.get(signal);
    if (key === undefined) break;
    const slash = key.indexOf('/');
    observe(key, informer.get(key.slice(slash + 1), key.slice(0, slash)) as Widget | undefined);
    queue.done(key);
  }
  await informer.stop();
}

/**
 * `{ report }`: with `until` (each key's last seq written), the report waits until a reconcile saw
 * every key at its last write, or `waitMs` passed (the bench then counts the keys left as lost).
 */
export interface ReportRequest {
  readonly report?: boolean;
  readonly until?: Record<string, number>;
  readonly waitMs?: number;
}

function lastWrites(request: ReportRequest): Promise<void> {
  const until = request.until;
  if (until === undefined) return Promise.resolve();
  let pending = 0;
  for (const [key, seq] of Object.entries(until)) if ((lastSeqSeen[key] ?? -1) < seq) pending++;
  if (pending === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      awaited = undefined;
      resolve();
    }, request.waitMs ?? 60_000);
    awaited = {
      until,
      pending,
      done: () => {
        clearTimeout(timer);
        awaited = undefined;
        resolve();
      },
    };
  });
}

async function main(): Promise<void> {
  const peer = process.env.BENCH_PEER;
  const ready = JSON.parse(process.env.BENCH_SERVER ?? '{}') as ServerReady;
  if ((peer !== 'converge' && peer !== 'client-node') || process.send === undefined)
    throw new Error('steady-state-client.ts is started by steady-state.bench.ts');
  const stop = new AbortController();
  process.on('message', (message: ReportRequest & { measure?: boolean }) => {
    if (message.measure === true) {
      void watchSteadyState().then(() => process.send?.({ measuring: true }));
      return;
    }
    if (message.report !== true) return;
    void lastWrites(message)
      .then(stopAllocationProfile)
      .then(() => {
        const report: LatencyReport = {
          seqs,
          latenciesMs,
          deliveryMs,
          gc,
          loopDelayMaxMs: loopDelay.max / 1e6,
          reconciles,
          lastSeqSeen,
        };
        process.send?.(report, () => process.exit(0));
      });
  });
  if (peer === 'converge') await converge(ready, stop.signal);
  else await clientNode(ready, stop.signal);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
