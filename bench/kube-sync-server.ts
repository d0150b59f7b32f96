/**
 * The server process of `kube-sync.bench.ts`: spawned with `process.execPath` so serving never
 * shares an event loop or a V8 heap with the clients being measured. It starts the embedded API
 * server (plain HTTP on 127.0.0.1, bearer token, TLS off: the figures are the clients', not the
 * cipher's), registers a small namespaced CRD (`widgets.bench.converge.dev`) over its own HTTP API,
 * puts BENCH_OBJECTS (default 100 000) Widgets of ~0.6 KB straight into its store, and then sends
 * one {@link ServerReady} message over the IPC channel. It exits when the parent disconnects. Not
 * meant to be run by hand.
 */
import { performance } from 'node:perf_hooks';
import type { KubeObject, ResourceType } from '@converge/runtime';
import { createApiServer } from '../packages/apiserver/src/server/api-server.ts';

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
}

const GROUP = 'bench.converge.dev';
const VERSION = 'v1';
const KIND = 'Widget';
const PLURAL = 'widgets';

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

/** A Widget of ~0.6 KB of JSON once the store adds uid, resourceVersion and creationTimestamp. */
function widget(i: number): KubeObject {
  const team = `team-${(i % 100).toString().padStart(2, '0')}`;
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    metadata: {
      name: `widget-${i.toString().padStart(6, '0')}`,
      namespace: team,
      labels: {
        'app.kubernetes.io/name': 'widget',
        'app.kubernetes.io/part-of': team,
        shard: String(i % 16),
      },
      annotations: { 'bench.converge.dev/note': 'cold-sync benchmark object' },
    },
    spec: {
      replicas: 1 + (i % 5),
      image: `registry.example.com/widgets/widget:v1.${i % 50}.0`,
      owner: `${team}@example.com`,
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9090, protocol: 'TCP' },
      ],
      settings: { mode: i % 2 === 0 ? 'active' : 'standby', weight: i % 100, tier: 'bronze' },
    },
  } as unknown as KubeObject;
}

async function main(): Promise<void> {
  const objects = Number(process.env.BENCH_OBJECTS ?? '100000');
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

  const started = performance.now();
  for (let i = 0; i < objects; i++) await server.store.create(type, widget(i));
  const fillMs = performance.now() - started;
  const page = await server.store.list(type, { limit: 1 });
  const first = page.items[0];
  const ready: ServerReady = {
    url,
    token,
    objects,
    objectBytes: first === undefined ? 0 : JSON.stringify(first).length,
    fillMs,
    group: GROUP,
    version: VERSION,
    kind: KIND,
    plural: PLURAL,
  };
  process.send(ready);
  process.on('disconnect', () => {
    void server.close().then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
