import type { Controller, ObjectKey } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Cluster,
  eventually,
  type KubeJson,
  type KubeListJson,
  manifest,
  startCluster,
} from '../test-support.ts';
import { replicaSets } from './operator.ts';

type ReplicaSetJson = KubeJson & {
  readonly status?: {
    readonly replicas?: number;
    readonly fullyLabeledReplicas?: number;
    readonly observedGeneration?: number;
  };
};

let cluster: Cluster;
let controller: Controller<ObjectKey>;
/** Reconciles finished, counted by the controller's metric hook. */
let reconciles = 0;
/** While set, every reconcile waits for it before reading anything. */
let hold: Promise<void> | undefined;
const kubectl = (...args: string[]) => cluster.kubectl(args);

beforeAll(async () => {
  cluster = await startCluster({
    operator: (manager) => {
      controller = replicaSets(manager, {
        metrics: { onReconcile: () => void reconciles++ },
        beforeReconcile: () => hold,
      });
    },
    crds: [],
  });
});
afterAll(async () => {
  hold = undefined;
  await cluster?.close();
});

/** The Pods labelled `app=web`, by name. */
async function pods(): Promise<KubeJson[]> {
  const list = await cluster.getJson<KubeListJson>(['pods', '-l', 'app=web']);
  return [...list.items].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/** Waits until the ReplicaSet has observed `generation` and counts `replicas`, then returns it. */
async function settled(generation: number, replicas: number): Promise<ReplicaSetJson> {
  const rs = 'replicaset/web';
  await kubectl('wait', `--for=jsonpath={.status.observedGeneration}=${generation}`, '--timeout=60s', rs);
  await kubectl('wait', `--for=jsonpath={.status.replicas}=${replicas}`, '--timeout=60s', rs);
  return cluster.getJson<ReplicaSetJson>([rs]);
}

/** Every Pod is controlled by `rs` and named after it; returns their names. */
function expectControlledBy(rs: ReplicaSetJson, list: readonly KubeJson[]): string[] {
  for (const pod of list) {
    expect(pod.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(pod.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'web',
        uid: rs.metadata.uid,
        controller: true,
      }),
    ]);
  }
  return list.map((p) => p.metadata.name);
}

/**
 * Waits until the controller's queue has taken `adds` more requests than `before` and has
 * nothing queued or running: every event up to then has been reconciled.
 */
async function quiet(before: number, adds: number): Promise<void> {
  await eventually(`${adds} adds and an idle queue`, async () => {
    const stats = controller.stats();
    return stats.adds - before >= adds && stats.depth === 0 && stats.processing === 0 && stats.running === 0;
  });
}

describe('ReplicaSet controller over HTTP, driven by kubectl', () => {
  it('its sample applied with kubectl gets three Pods from the template, controlled by it', async () => {
    await kubectl('apply', '-f', manifest(import.meta.url, 'manifests/sample.yaml'));
    const rs = await settled(1, 3);
    expect(rs.status).toEqual({ replicas: 3, fullyLabeledReplicas: 3, observedGeneration: 1 });
    const list = await pods();
    expect(expectControlledBy(rs, list)).toHaveLength(3);
    for (const pod of list) {
      expect(pod.spec).toMatchObject({
        containers: [expect.objectContaining({ name: 'web', image: 'nginx:1.27' })],
      });
    }
  });

  it('kubectl scale up creates Pods, kubectl scale down deletes the extra ones', async () => {
    const before = (await pods()).map((p) => p.metadata.name);
    await kubectl('scale', 'replicaset/web', '--replicas=5');
    const up = await settled(2, 5);
    const five = expectControlledBy(up, await pods());
    expect(five).toHaveLength(5);
    expect(five).toEqual(expect.arrayContaining(before));

    await kubectl('scale', 'replicaset/web', '--replicas=2');
    const down = await settled(3, 2);
    await eventually('two Pods left', async () => (await pods()).length === 2);
    expect(down.status).toEqual({ replicas: 2, fullyLabeledReplicas: 2, observedGeneration: 3 });
    expect(five).toEqual(expect.arrayContaining(expectControlledBy(down, await pods())));
  });

  it('a Pod deleted with kubectl is replaced by a new one', async () => {
    const rs = await cluster.getJson<ReplicaSetJson>(['replicaset/web']);
    const [gone, kept] = (await pods()).map((p) => p.metadata.name);
    await kubectl('delete', 'pod', gone as string, '--wait', '--timeout=60s');
    await eventually('a replacement Pod', async () => {
      const names = (await pods()).map((p) => p.metadata.name);
      return names.length === 2 && !names.includes(gone as string);
    });
    const names = expectControlledBy(rs, await pods());
    expect(names).toContain(kept);
  });

  it('a Pod relabelled out of the selector is released and replaced; labelled back, it is adopted and one Pod too many is deleted', async () => {
    const rs = await cluster.getJson<ReplicaSetJson>(['replicaset/web']);
    const [moved] = (await pods()).map((p) => p.metadata.name) as [string];
    await kubectl('label', 'pod', moved, 'app=other', '--overwrite');
    await eventually('the relabelled Pod released', async () => {
      const pod = await cluster.getJson<KubeJson>(['pod', moved]);
      return (pod.metadata.ownerReferences ?? []).length === 0;
    });
    await eventually('a replacement Pod', async () => (await pods()).length === 2);
    expect(expectControlledBy(rs, await pods())).not.toContain(moved);

    await kubectl('label', 'pod', moved, 'app=web', '--overwrite');
    await eventually('two controlled Pods, one of them adopted or the adopted one deleted', async () => {
      const list = await pods();
      return list.length === 2 && list.every((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid);
    });
    expect(expectControlledBy(rs, await pods())).toHaveLength(2);
    const status = (await settled(3, 2)).status;
    expect(status).toEqual({ replicas: 2, fullyLabeledReplicas: 2, observedGeneration: 3 });
  });

  it('50 Pod create events from one scale-up are reconciled a handful of times, not 50', async () => {
    await kubectl('scale', 'replicaset/web', '--replicas=0');
    await settled(4, 0);
    await eventually('no Pods left', async () => (await pods()).length === 0);
    await quiet(0, 0);
    const adds = controller.stats().adds;
    reconciles = 0;
    await kubectl('scale', 'replicaset/web', '--replicas=50');
    await settled(5, 50);
    // One request for the ReplicaSet's spec change, one for each Pod created: all taken by the queue.
    await quiet(adds, 51);
    expect(controller.stats().adds - adds).toBe(51);
    expect(reconciles).toBeGreaterThanOrEqual(1);
    expect(reconciles).toBeLessThanOrEqual(10);
  });

  it('50 Pod label events from a kubectl batch during a reconcile fold into one more reconcile', async () => {
    const adds = controller.stats().adds;
    reconciles = 0;
    let release = () => {};
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    await kubectl('label', 'pods', '-l', 'app=web', 'examples.converge.dev/touched=yes');
    // The first label event's reconcile is held; the other 49 requests arrive while it runs.
    await eventually('50 requests taken by the queue', async () => controller.stats().adds - adds >= 50);
    expect(reconciles).toBe(0);
    hold = undefined;
    release();
    await quiet(adds, 50);
    expect(controller.stats().adds - adds).toBe(50);
    expect(reconciles).toBe(2);
  });

  it('the ReplicaSet deleted with kubectl takes its Pods with it through the garbage collector', async () => {
    const names = (await pods()).map((p) => p.metadata.name);
    expect(names).toHaveLength(50);
    await kubectl('delete', 'replicaset', 'web', '--wait', '--timeout=60s');
    await eventually('its Pods deleted', async () => (await pods()).length === 0);
    const left = await cluster.getJson<KubeListJson>(['pods']);
    expect(left.items).toEqual([]);
  });
});
