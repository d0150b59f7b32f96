/**
 * The ReplicaSet controller under simulation (`npx converge simulate
 * examples/replicaset/operator.scenario.ts`): the user creates two ReplicaSets, scales one up,
 * deletes one of its Pods, relabels a Pod of the other out of its selector, leaves an orphan Pod
 * that matches the first, scales the first down and deletes the second, while the simulator
 * injects faults. Once things settle, the first has exactly `spec.replicas` Pods, all controlled by
 * it, and a status that counts them for its current generation; the relabelled Pod was released
 * and kept; the deleted ReplicaSet's Pods were garbage-collected.
 */
import {
  type Client,
  ignoreNotFound,
  type Pod,
  podType,
  type ReplicaSet,
  replicaSetType,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import operator from './operator.ts';

const namespace = 'default';

const template = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: app, image: 'nginx:1.27' }] },
});

const replicaSet = (name: string, replicas: number): ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: template(name) },
});

const podsOf = (client: Client, app: string) =>
  client.list<Pod>(podType, { namespace, labelSelector: `app=${app}` });

/** Waits (as `kubectl wait` would) until `app` has at least `n` Pods. */
async function waitForPods(client: Client, sleep: (ms: number) => Promise<void>, app: string, n: number) {
  for (;;) {
    const pods = await podsOf(client, app);
    if (pods.length >= n) return pods;
    await sleep(250);
  }
}

export default defineScenario({
  name: 'replicaset',
  operator,
  setup: async ({ client, sleep }) => {
    await client.create(replicaSetType, replicaSet('web', 3));
    await client.create(replicaSetType, replicaSet('api', 2));
    await waitForPods(client, sleep, 'web', 3);
    // kubectl scale rs web --replicas=5
    await client.patch(
      replicaSetType,
      { namespace, name: 'web' },
      { type: 'merge', patch: { spec: { replicas: 5 } } },
    );
    const [gone] = await waitForPods(client, sleep, 'web', 5);
    // A Pod deleted by hand is replaced.
    await client.delete(podType, { namespace, name: gone?.metadata.name ?? '' }).catch(ignoreNotFound);
    // A Pod relabelled out of its selector is released (and replaced). The ReplicaSet may delete
    // the Pod we picked before our label lands (a restarted operator's stale cache made one too
    // many): as a user would, pick another and label that.
    for (;;) {
      const [moved] = await waitForPods(client, sleep, 'api', 2);
      const name = moved?.metadata.name ?? '';
      const labelled = await client
        .patch(
          podType,
          { namespace, name },
          { type: 'merge', patch: { metadata: { labels: { app: 'other' } } } },
        )
        .catch(ignoreNotFound);
      if (labelled === undefined) continue;
      // Waits until it is released (as the user would before deleting its ReplicaSet: it would go with it).
      let pod: Pod | undefined = labelled as Pod;
      while (pod !== undefined && (pod.metadata.ownerReferences ?? []).length > 0) {
        await sleep(250);
        pod = await client.get<Pod>(podType, { namespace, name }).catch(ignoreNotFound);
      }
      if (pod !== undefined) break;
    }
    // An orphan Pod that matches web's selector, made as web's own are: adopted, then one too many.
    await client.create(podType, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'web-', namespace, ...template('web').metadata },
      spec: template('web').spec,
    });
    await sleep(500);
    await client.patch(
      replicaSetType,
      { namespace, name: 'web' },
      { type: 'merge', patch: { spec: { replicas: 2 } } },
    );
    await client.delete(replicaSetType, { namespace, name: 'api' });
  },
  invariants: {
    'web has exactly spec.replicas Pods, all controlled by it': async ({ client }) => {
      const rs = await client.get<ReplicaSet>(replicaSetType, { namespace, name: 'web' });
      const pods = (await podsOf(client, 'web')).filter((p) => p.metadata.deletionTimestamp === undefined);
      if (pods.length !== rs.spec?.replicas)
        throw new Error(
          `web has ${pods.length} Pods, wants ${rs.spec?.replicas}: ${pods.map((p) => p.metadata.name).join(', ')}`,
        );
      for (const pod of pods) {
        const owners = pod.metadata.ownerReferences ?? [];
        if (owners.length !== 1 || owners[0]?.uid !== rs.metadata.uid || owners[0]?.controller !== true)
          throw new Error(`Pod ${pod.metadata.name} is not controlled by web: ${JSON.stringify(owners)}`);
        if (!/^web-[a-z0-9]{5}$/.test(pod.metadata.name ?? '')) throw new Error(`Pod ${pod.metadata.name}`);
      }
    },
    "web's status counts its Pods for its current generation": async ({ client }) => {
      const rs = await client.get<ReplicaSet>(replicaSetType, { namespace, name: 'web' });
      const wanted = {
        replicas: rs.spec?.replicas,
        fullyLabeledReplicas: rs.spec?.replicas,
        observedGeneration: rs.metadata.generation,
      };
      if (JSON.stringify(rs.status) !== JSON.stringify(wanted))
        throw new Error(`web's status is ${JSON.stringify(rs.status)}, wants ${JSON.stringify(wanted)}`);
    },
    'the Pod relabelled out of the selector was released and kept': async ({ client }) => {
      const released = await podsOf(client, 'other');
      if (released.length !== 1) throw new Error(`${released.length} Pods are labelled app=other`);
      const owners = released[0]?.metadata.ownerReferences ?? [];
      if (owners.length > 0) throw new Error(`the released Pod is still owned: ${JSON.stringify(owners)}`);
    },
    'the deleted ReplicaSet took its Pods with it': async ({ client }) => {
      const left = await podsOf(client, 'api');
      if (left.length > 0) throw new Error(`api left ${left.map((p) => p.metadata.name).join(', ')}`);
    },
  },
});
