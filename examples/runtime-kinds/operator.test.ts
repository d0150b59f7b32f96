import type { KindRequest, Manager, ResourceType } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, eventually, type KubeJson, manifest, startCluster } from '../test-support.ts';
import { RUNTIME_KINDS_LABEL, type RuntimeKinds, runtimeKinds } from './operator.ts';

type ResourceJson = KubeJson & {
  readonly spec?: unknown;
  readonly status?: {
    readonly observedGeneration?: number;
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  };
};
type ConfigMapJson = KubeJson & { readonly data?: Readonly<Record<string, string>> };

const WORKERS = 4;
const STORM = 5_000;
const GROUP = 'examples.converge.dev';

let cluster: Cluster;
let manager: Manager;
let kinds: RuntimeKinds;
const kubectl = (...args: string[]) => cluster.kubectl(args);

/** Reconciles started, by resource (plural). */
const started = new Map<string, number>();
const startedOf = (resource: string): number => started.get(resource) ?? 0;
/** Test-set observers of reconcile starts and of enqueued events. */
let onStart: ((request: KindRequest) => void) | undefined;
let onEnqueue: ((kind: string, type: string) => void) | undefined;

beforeAll(async () => {
  cluster = await startCluster({
    operator: (m) => {
      manager = m;
      kinds = runtimeKinds(m, {
        workers: WORKERS,
        onReconcile: (request) => {
          started.set(request.kind.resource, startedOf(request.kind.resource) + 1);
          onStart?.(request);
        },
        metrics: {
          onEvent: (_, kind, type, enqueued) => {
            if (enqueued) onEnqueue?.(kind, type);
          },
        },
      });
    },
    crds: [manifest(import.meta.url, 'manifests/crds.yaml')],
  });
  await kinds.follower.waitForSync(AbortSignal.timeout(15_000));
});
afterAll(async () => {
  await cluster?.close();
});

/** A namespaced CRD of `kind` in the examples group, labelled for the operator or not. */
function crd(kind: string, labelled: boolean): string {
  const plural = `${kind.toLowerCase()}s`;
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}`, labels: labelled ? { [RUNTIME_KINDS_LABEL]: 'true' } : {} },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  });
}

async function installCrd(kind: string, labelled: boolean): Promise<void> {
  await cluster.kubectl(['apply', '-f', '-'], { input: crd(kind, labelled) });
  await kubectl(
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    `crd/${kind.toLowerCase()}s.${GROUP}`,
  );
}

/** Applies one object of `kind` in the default namespace. */
async function applyObject(kind: string, name: string, spec: unknown): Promise<void> {
  const object = { apiVersion: `${GROUP}/v1alpha1`, kind, metadata: { name, namespace: 'default' }, spec };
  await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(object) });
}

/** Waits until `resource/name` reports Ready for `generation`, and checks its summary ConfigMap. */
async function expectSummarised(kind: string, name: string, generation: number): Promise<void> {
  const ref = `${kind.toLowerCase()}s.${GROUP}/${name}`;
  await kubectl('wait', `--for=jsonpath={.status.observedGeneration}=${generation}`, '--timeout=60s', ref);
  await kubectl('wait', '--for=condition=Ready', '--timeout=60s', ref);
  const object = await cluster.getJson<ResourceJson>([ref]);
  const cm = await cluster.getJson<ConfigMapJson>(['configmap', `${kind.toLowerCase()}-${name}`]);
  expect(cm.data).toEqual({ kind, generation: String(generation), spec: JSON.stringify(object.spec) });
  expect(cm.metadata.ownerReferences).toEqual([
    expect.objectContaining({ kind, name, uid: object.metadata.uid, controller: true }),
  ]);
}

const servedResources = (): string[] => kinds.dynamic.served().map((t) => t.plural);
const informedResources = (): string[] => manager.informers.informers().map((i) => i.type.plural);

describe('runtime kinds over HTTP, driven by kubectl', () => {
  it('serves the labelled CRDs it found at start: the same name in two kinds is two summaries', async () => {
    expect(servedResources().sort()).toEqual(['doohickeys', 'gizmos']);
    await kubectl('apply', '-f', manifest(import.meta.url, 'manifests/sample.yaml'));
    await expectSummarised('Gizmo', 'hello', 1);
    await expectSummarised('Doohickey', 'hello', 1);
  });

  it('a labelled CRD applied while it runs has its objects reconciled, and spec changes followed, without a restart', async () => {
    await installCrd('Whatsit', true);
    await applyObject('Whatsit', 'first', { colour: 'teal' });
    await expectSummarised('Whatsit', 'first', 1);
    await kubectl('patch', `whatsits.${GROUP}/first`, '--type=merge', '-p', '{"spec":{"colour":"red"}}');
    await expectSummarised('Whatsit', 'first', 2);
    expect(servedResources()).toContain('whatsits');
  });

  it('leaves the objects of an unlabelled CRD alone until the CRD is labelled, and stops when the label goes', async () => {
    // The sample applied a Thingamajig; its CRD (in crds.yaml) has no label.
    await applyObject('Gizmo', 'after-thingamajig', { n: 1 });
    await expectSummarised('Gizmo', 'after-thingamajig', 1);
    expect(servedResources()).not.toContain('thingamajigs');
    expect(informedResources()).not.toContain('thingamajigs');
    expect(startedOf('thingamajigs')).toBe(0);
    const untouched = await cluster.getJson<ResourceJson>([`thingamajigs.${GROUP}/hello`]);
    expect(untouched.status).toBeUndefined();
    await expect(kubectl('get', 'configmap', 'thingamajig-hello')).rejects.toThrow(/NotFound|not found/);

    // The label is the only difference: with it, the same object is reconciled.
    await kubectl('label', 'crd', `thingamajigs.${GROUP}`, `${RUNTIME_KINDS_LABEL}=true`);
    await expectSummarised('Thingamajig', 'hello', 1);
    await kubectl('label', 'crd', `thingamajigs.${GROUP}`, `${RUNTIME_KINDS_LABEL}-`);
    await eventually(
      'thingamajigs no longer served',
      async () => !servedResources().includes('thingamajigs'),
    );
    expect(informedResources()).not.toContain('thingamajigs');
  });

  it('a storm of 5 000 objects of one kind delays a fresh object of another kind by at most one worker slot; deleting the storm kind ends it', async () => {
    // 5 000 Sprockets exist before their CRD is labelled: serving the kind enqueues them all at once.
    await installCrd('Sprocket', false);
    const sprocketType = cluster.server.store.resolveType(`${GROUP}/v1alpha1`, 'Sprocket') as ResourceType;
    for (let i = 0; i < STORM; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, STORM - i) }, (_, j) =>
          cluster.server.store.create(sprocketType, {
            apiVersion: `${GROUP}/v1alpha1`,
            kind: 'Sprocket',
            metadata: { name: `s-${i + j}`, namespace: 'default' },
            spec: { teeth: i + j },
          }),
        ),
      );
    }
    const watchesBefore = cluster.server.openWatches;

    // Storm reconciles started when the fresh Gizmo was enqueued, and when its reconcile started.
    let atEnqueue: number | undefined;
    let queuedAtEnqueue = 0;
    let atStart: number | undefined;
    onEnqueue = (kind, type) => {
      if (kind !== `${GROUP}/v1alpha1/gizmos` || type !== 'create' || atEnqueue !== undefined) return;
      atEnqueue = startedOf('sprockets');
      queuedAtEnqueue = kinds.dynamic.stats().depth;
    };
    onStart = (request) => {
      if (request.kind.resource === 'gizmos' && request.name === 'fresh') atStart ??= startedOf('sprockets');
    };
    await kubectl('label', 'crd', `sprockets.${GROUP}`, `${RUNTIME_KINDS_LABEL}=true`);
    await eventually('the storm to start', async () => startedOf('sprockets') > 0);
    // The API server holds one more watch now: the Sprockets informer's.
    await eventually('the sprockets watch', async () => cluster.server.openWatches === watchesBefore + 1);
    await applyObject('Gizmo', 'fresh', { urgent: true });
    await expectSummarised('Gizmo', 'fresh', 1);
    onEnqueue = undefined;
    onStart = undefined;

    expect(atEnqueue).toBeDefined();
    expect(atStart).toBeDefined();
    // The fresh Gizmo jumped a queue of thousands of Sprockets…
    expect(queuedAtEnqueue).toBeGreaterThan(1_000);
    expect(atStart as number).toBeLessThan(STORM);
    // …behind at most one Sprocket per worker: round-robin across kinds, not first-in first-out.
    expect((atStart as number) - (atEnqueue as number)).toBeLessThanOrEqual(WORKERS);

    // Deleting the CRD deletes the Sprockets; the kind stops being served, its queued keys dropped.
    await kubectl('delete', 'crd', `sprockets.${GROUP}`, '--timeout=60s');
    await eventually('sprockets no longer served', async () => !servedResources().includes('sprockets'));
    const stormTotal = startedOf('sprockets');
    expect(informedResources()).not.toContain('sprockets');
    expect(kinds.dynamic.cache(sprocketType)).toBeUndefined();
    await eventually(
      'the sprockets watch to close',
      async () => cluster.server.openWatches === watchesBefore,
    );
    // Another kind still works, and no Sprocket reconcile started meanwhile.
    await kubectl('patch', `gizmos.${GROUP}/fresh`, '--type=merge', '-p', '{"spec":{"urgent":false}}');
    await expectSummarised('Gizmo', 'fresh', 2);
    expect(startedOf('sprockets')).toBe(stormTotal);
  });
});
