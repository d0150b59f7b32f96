/**
 * The Website operator under simulation (`npx converge simulate
 * examples/website/operator.scenario.ts`): the user creates Websites, changes one's replicas and
 * content, deletes a child Service and deletes a Website, while the simulator injects faults. Once
 * things settle, every Website carries the finalizer, owns a ConfigMap, Deployment and Service that
 * match its spec, and reports Ready for its current generation; the deleted one went through its
 * finalizer's cleanup and left no children.
 *
 * No admission runs in a simulation: no webhooks, and no CRD schema or CEL rules for a kind declared
 * as a plain ResourceType (its CRD is `manifests/crd.yaml`). The setup writes Websites as the
 * defaulting webhook would leave them (a lowercase domain) and never changes a domain (immutable by
 * the CRD's rule); the operator's own defaults (`DEFAULT_REPLICAS`, `DEFAULT_IMAGE`) cover what a
 * spec leaves out.
 */
import {
  type Client,
  type ConfigMap,
  configMapType,
  type Deployment,
  deploymentType,
  ignoreNotFound,
  type KubeObject,
  type ResourceType,
  serviceType,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import { DEFAULT_IMAGE, DEFAULT_REPLICAS } from './admission.ts';
import website, { FINALIZER, type Website, websiteType } from './operator.ts';

const namespace = 'default';

const site = (name: string, spec: Website['spec']): Website => ({
  apiVersion: 'examples.converge.dev/v1alpha1',
  kind: 'Website',
  metadata: { name, namespace },
  spec,
});

const childrenOf = (name: string): [ResourceType, string][] => [
  [configMapType, `${name}-content`],
  [deploymentType, name],
  [serviceType, name],
];

async function find(client: Client, type: ResourceType, name: string): Promise<KubeObject | undefined> {
  return client.get<KubeObject>(type, { namespace, name }).catch(ignoreNotFound);
}

export default defineScenario({
  name: 'website',
  operator: website,
  setup: async ({ client, sleep }) => {
    await client.create(
      websiteType,
      site('hello', { domain: 'hello.example.com', replicas: 2, content: '<h1>Hello</h1>' }),
    );
    await client.create(websiteType, site('shop', { domain: 'shop.example.com', content: '<h1>Shop</h1>' }));
    await client.create(websiteType, site('bye', { domain: 'bye.example.com', content: 'bye' }));
    await sleep(500);
    await client.patch(
      websiteType,
      { namespace, name: 'hello' },
      { type: 'merge', patch: { spec: { replicas: 3, content: '<h1>v2</h1>' } } },
    );
    await sleep(300);
    // A child deleted by hand is recreated (if it is there yet).
    await client.delete(serviceType, { namespace, name: 'hello' }).catch(ignoreNotFound);
    await client.delete(websiteType, { namespace, name: 'bye' });
    await sleep(200);
    await client.patch(
      websiteType,
      { namespace, name: 'shop' },
      { type: 'merge', patch: { spec: { image: 'nginx:1.27.3' } } },
    );
  },
  invariants: {
    'every Website carries the finalizer and reports Ready for its current generation': async ({
      client,
    }) => {
      for (const name of ['hello', 'shop']) {
        const s = await client.get<Website>(websiteType, { namespace, name });
        if (!s.metadata.finalizers?.includes(FINALIZER))
          throw new Error(`${name} has finalizers ${JSON.stringify(s.metadata.finalizers)}`);
        const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
        if (s.status?.observedGeneration !== s.metadata.generation || ready?.status !== 'True')
          throw new Error(`${name}: generation ${s.metadata.generation}, status ${JSON.stringify(s.status)}`);
        if (ready.observedGeneration !== s.metadata.generation)
          throw new Error(`${name}: Ready observed generation ${ready.observedGeneration}`);
        if (s.status?.url !== `http://${s.spec.domain}`) throw new Error(`${name}: url ${s.status?.url}`);
      }
    },
    'every Website owns a ConfigMap, Deployment and Service matching its spec': async ({ client }) => {
      for (const name of ['hello', 'shop']) {
        const s = await client.get<Website>(websiteType, { namespace, name });
        for (const [type, child] of childrenOf(name)) {
          const object = await find(client, type, child);
          if (object === undefined) throw new Error(`${type.kind} ${child} is missing`);
          const owners = object.metadata.ownerReferences ?? [];
          if (owners.length !== 1 || owners[0]?.uid !== s.metadata.uid || owners[0]?.controller !== true)
            throw new Error(`${type.kind} ${child} is not controlled by ${name}: ${JSON.stringify(owners)}`);
        }
        const cm = (await find(client, configMapType, `${name}-content`)) as ConfigMap;
        if (cm.data?.['index.html'] !== s.spec.content)
          throw new Error(`${name}-content holds ${JSON.stringify(cm.data)}`);
        const deployment = (await find(client, deploymentType, name)) as Deployment;
        const replicas = s.spec.replicas ?? DEFAULT_REPLICAS;
        const image = deployment.spec?.template.spec?.containers[0]?.image;
        if (deployment.spec?.replicas !== replicas || image !== (s.spec.image ?? DEFAULT_IMAGE))
          throw new Error(`Deployment ${name} runs ${deployment.spec?.replicas} × ${image}`);
      }
    },
    'a deleted Website went through its cleanup and left no children': async ({ client }) => {
      if ((await find(client, websiteType, 'bye')) !== undefined) throw new Error('bye still exists');
      for (const [type, child] of childrenOf('bye')) {
        if ((await find(client, type, child)) !== undefined) throw new Error(`${type.kind} ${child} is left`);
      }
    },
  },
});
