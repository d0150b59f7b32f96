/**
 * Test support for the watch-fault tests (not part of the package's API): an Informer over a
 * KubeBackend on an embedded server, a writer on its own backend, and checks that the informer's
 * cache ends equal to the server's state with no event going backwards.
 *
 * @module
 */
import {
  Informer,
  type InitialListMode,
  type KubeObject,
  MemoryLogger,
  type ObjectEvent,
  type ResourceType,
  resourceType,
} from '@converge/runtime';
import type { KubeBackend } from './kube-backend.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from './test-harness.ts';

export const NAMESPACE = 'faults';

export const configMaps: ResourceType = resourceType({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  generation: false,
});

/** The collection path the informer lists and watches (for fault rules). */
export const COLLECTION = `/api/v1/namespaces/${NAMESPACE}/configmaps`;

export interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

/** A running informer over a faulty server, with what it saw. */
export interface FaultRig {
  readonly cluster: EmbeddedCluster;
  /** The informer's backend. */
  readonly backend: KubeBackend;
  /** A second backend for writes (its own pool; faults target the informer's paths). */
  readonly writer: KubeBackend;
  readonly informer: Informer<ConfigMap>;
  readonly logger: MemoryLogger;
  /** Per object name, the resourceVersions the informer's listener received, in order. */
  readonly seen: Map<string, string[]>;
  /** Starts the informer and waits for its first sync. */
  start(): Promise<void>;
  /** Writes `rounds` updates (each a change) to each of `names`, creating them first if needed. */
  write(names: readonly string[], rounds: number): Promise<void>;
  /** Polls until the cache equals the server's state (name → resourceVersion and data). */
  converged(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function state(objects: readonly ConfigMap[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const o of objects)
    out[o.metadata.name ?? ''] = `${o.metadata.resourceVersion}:${JSON.stringify(o.data)}`;
  return out;
}

/**
 * Starts a server (bookmarks every 200 ms), a backend that declares a stream stalled after 600 ms,
 * and an informer with a short backoff that reads the state as `initialList` says (default `auto`).
 */
export async function startFaultRig(options: { initialList?: InitialListMode } = {}): Promise<FaultRig> {
  const logger = new MemoryLogger();
  const cluster = await startEmbeddedCluster({
    namespaces: [NAMESPACE],
    bookmarkIntervalMs: 200,
    backend: { watchBookmarkIntervalMs: 200, watchStallFactor: 3, logger },
  });
  const { backend } = cluster;
  const writer = cluster.connect();
  const informer = new Informer<ConfigMap>({
    backend,
    type: configMaps,
    namespace: NAMESPACE,
    logger,
    backoff: { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0 },
    ...(options.initialList === undefined ? {} : { initialList: options.initialList }),
  });
  const seen = new Map<string, string[]>();
  informer.subscribe((event: ObjectEvent<ConfigMap>) => {
    const name = event.object.metadata.name ?? '';
    const list = seen.get(name) ?? [];
    list.push(
      event.type === 'delete'
        ? `deleted@${event.object.metadata.resourceVersion}`
        : (event.object.metadata.resourceVersion ?? ''),
    );
    seen.set(name, list);
  });
  const stop = new AbortController();
  let writes = 0;
  let running: Promise<void> | undefined;
  return {
    cluster,
    backend,
    writer,
    informer,
    logger,
    seen,
    async start() {
      running = informer.start(stop.signal);
      await informer.waitForSync(AbortSignal.timeout(10_000));
    },
    async write(names, rounds) {
      for (const name of names) {
        await writer
          .create(configMaps, { metadata: { name, namespace: NAMESPACE }, data: { round: '0' } } as ConfigMap)
          .catch(() => {});
      }
      for (let round = 1; round <= rounds; round++) {
        for (const name of names) {
          const patch = { data: { round: String(++writes) } };
          await writer.patch(configMaps, { namespace: NAMESPACE, name }, { type: 'merge', patch });
        }
      }
    },
    async converged(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const server = state((await writer.list<ConfigMap>(configMaps, { namespace: NAMESPACE })).items);
        const cache = state(informer.cache.list());
        if (JSON.stringify(server) === JSON.stringify(cache)) return;
        if (Date.now() > deadline) {
          throw new Error(
            `the cache did not converge: server ${JSON.stringify(server)} cache ${JSON.stringify(cache)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      stop.abort();
      await running;
      await cluster.close();
    },
  };
}

/** True when every name's resourceVersions were delivered in increasing order (no update went backwards). */
export function monotonic(seen: ReadonlyMap<string, readonly string[]>): boolean {
  for (const versions of seen.values()) {
    const numbers = versions.map((v) => Number(v.replace(/^deleted@/, '')));
    for (let i = 1; i < numbers.length; i++)
      if ((numbers[i] as number) < (numbers[i - 1] as number)) return false;
  }
  return true;
}
