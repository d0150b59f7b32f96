/**
 * The server process of `kube-sync.bench.ts` and `steady-state.bench.ts`: spawned with
 * `process.execPath` so serving never shares an event loop or a V8 heap with the clients being
 * measured. It starts the embedded API server (plain HTTP on 127.0.0.1, bearer token, TLS off: the
 * figures are the clients', not the cipher's), registers a small namespaced CRD
 * (`widgets.bench.converge.dev`) over its own HTTP API, puts BENCH_OBJECTS (default 100 000)
 * objects straight into its store — Widgets of ~0.6 KB, or with BENCH_SHAPE=pod realistic Pods of
 * ~4.5 KB (managedFields of two managers, status, two containers and an init container) — and
 * then sends one {@link ServerReady} message over the IPC channel. It exits when the parent
 * disconnects. Not meant to be run by hand.
 *
 * Steady state: a {@link WriteCommand} from the parent makes it update Widgets round-robin at a
 * fixed rate straight in its store, each stamped with the wall-clock time (ms, fractional) just
 * before the write in `spec.sentAt`; it answers {@link WriteDone}.
 */
import { performance } from 'node:perf_hooks';
import type { KubeObject, ResourceType } from '@converge/runtime';
import { createApiServer } from '../packages/apiserver/src/server/api-server.ts';
import { GROUP, KIND, PLURAL, pod, podApp, replicaSet, VERSION, widget } from './kube-objects.ts';

/** What the server tells its parent once the store is full. */
export interface ServerReady {
  readonly url: string;
  readonly token: string;
  readonly objects: number;
  /** JSON size of one stored Widget (with uid, resourceVersion, creationTimestamp). */
  readonly objectBytes: number;
  readonly fillMs: number;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly shape: 'widget' | 'pod';
}

/** Parent → server: update `objects` Widgets round-robin, `rate` per second, for `count` writes. */
export interface WriteCommand {
  readonly write: {
    readonly rate: number;
    readonly count: number;
    readonly objects: number;
    readonly tag: string;
  };
}

/** Server → parent: the writes are done; how late the writer fell behind its schedule at worst. */
export interface WriteDone {
  readonly written: number;
  /** The `spec.seq` of the first write; write k of the command has `firstSeq + k` (seqs never repeat). */
  readonly firstSeq: number;
  readonly tag: string;
  readonly maxLagMs: number;
  readonly ms: number;
}

function widgetCrd(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: PLURAL, singular: 'widget', kind: KIND, listKind: `${KIND}List` },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as unknown as KubeObject;
}

async function main(): Promise<void> {
  const objects = Number(process.env.BENCH_OBJECTS ?? '100000');
  const shape = process.env.BENCH_SHAPE === 'pod' ? 'pod' : 'widget';
  const token = process.env.BENCH_TOKEN ?? '';
  if (token === '' || !Number.isSafeInteger(objects) || objects <= 0 || process.send === undefined) {
    throw new Error('kube-sync-server.ts is started by kube-sync.bench.ts');
  }
  const server = createApiServer({ tls: false, token });
  const { url } = await server.listen();

  const res = await fetch(`${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(widgetCrd()),
  });
  if (res.status !== 201) throw new Error(`creating the CRD: ${res.status} ${await res.text()}`);
  let type: ResourceType | undefined;
  for (let tries = 0; type === undefined && tries < 200; tries++) {
    type = server.store.types().find((t) => t.group === GROUP && t.kind === KIND);
    if (type === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (type === undefined) throw new Error('the CRD never registered its type in the store');

  const podType = server.store.types().find((t) => t.group === '' && t.kind === 'Pod');
  if (podType === undefined) throw new Error('the store serves no Pods');
  const filled = shape === 'pod' ? podType : type;
  const started = performance.now();
  if (shape === 'pod') {
    const rsType = server.store.types().find((t) => t.group === 'apps' && t.kind === 'ReplicaSet');
    if (rsType === undefined) throw new Error('the store serves no ReplicaSets');
    const owners = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      const rs = await server.store.create(rsType, replicaSet(i));
      owners.set(podApp(i), rs.metadata.uid as string);
    }
    const ownerUid = (app: string): string => owners.get(app) as string;
    for (let i = 0; i < objects; i++) await server.store.create(podType, pod(i, ownerUid));
  } else for (let i = 0; i < objects; i++) await server.store.create(type, widget(i));
  const fillMs = performance.now() - started;
  const page = await server.store.list(filled, { limit: 1 });
  const first = page.items[0];
  const ready: ServerReady = {
    url,
    token,
    objects,
    objectBytes: first === undefined ? 0 : JSON.stringify(first).length,
    fillMs,
    group: shape === 'pod' ? '' : GROUP,
    version: shape === 'pod' ? 'v1' : VERSION,
    kind: shape === 'pod' ? 'Pod' : KIND,
    plural: shape === 'pod' ? 'pods' : PLURAL,
    shape,
  };
  process.send(ready);
  const widgetType = type;
  process.on('message', (message: WriteCommand) => {
    if (message.write !== undefined) void write(server.store, widgetType, message.write);
  });
  process.on('disconnect', () => {
    void server.close().then(() => process.exit(0));
  });
}

let nextSeq = 0;

/** Updates Widgets round-robin at `rate` per second, each stamped with the time just before its write. */
async function write(
  store: ReturnType<typeof createApiServer>['store'],
  type: ResourceType,
  command: WriteCommand['write'],
): Promise<void> {
  const started = performance.now();
  const firstSeq = nextSeq;
  nextSeq += command.count;
  const intervalMs = 1000 / command.rate;
  let maxLagMs = 0;
  for (let n = 0; n < command.count; n++) {
    const due = started + n * intervalMs;
    let now = performance.now();
    if (due > now + 1) {
      await new Promise((resolve) => setTimeout(resolve, due - now));
      now = performance.now();
    }
    maxLagMs = Math.max(maxLagMs, now - due);
    const i = n % command.objects;
    const key = widget(i).metadata;
    const current = await store.get(type, { namespace: key.namespace ?? '', name: key.name ?? '' });
    const spec = {
      ...(current as KubeObject & { spec: Record<string, unknown> }).spec,
      seq: firstSeq + n,
      sentAt: 0,
    };
    spec.sentAt = performance.timeOrigin + performance.now();
    await store.update(type, { ...current, spec } as KubeObject);
  }
  const done: WriteDone = {
    written: command.count,
    firstSeq,
    tag: command.tag,
    maxLagMs,
    ms: performance.now() - started,
  };
  process.send?.(done);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
