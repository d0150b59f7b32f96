/**
 * The runtime-kinds operator under simulation (`npx converge simulate
 * examples/runtime-kinds/operator.scenario.ts`): the user installs CRDs (two labelled, one not),
 * creates objects of each kind, installs another labelled CRD while the operator runs, changes an
 * object, labels the unlabelled CRD and deletes an object, while the simulator injects faults. Once
 * things settle, every object of a labelled kind has a summary ConfigMap of its current spec and
 * generation, owned by it, and a Ready condition for that generation; a deleted object's summary was
 * garbage-collected.
 *
 * The simulated server has no apiextensions controller: a CRD is not established by itself. The
 * setup does what kube-apiserver does once it accepted a CRD's names — it sets the `NamesAccepted`
 * and `Established` conditions on its status — before creating objects of its kind (the
 * simulator serves a kind's objects on first use; there is no schema validation either).
 */
import {
  type Client,
  type ConfigMap,
  type CustomResourceDefinition,
  configMapType,
  customResourceDefinitionType,
  ignoreNotFound,
  type KubeObject,
  type ResourceType,
  resourceTypeOfCrd,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import operator, { RUNTIME_KINDS_LABEL, summaryName } from './operator.ts';

const GROUP = 'examples.converge.dev';
const namespace = 'default';

interface CustomResource extends KubeObject {
  readonly spec?: unknown;
  readonly status?: {
    readonly observedGeneration?: number;
    readonly conditions?: readonly { type: string; status: string; observedGeneration?: number }[];
  };
}

/** A namespaced CRD of `kind` in the examples group, labelled for the operator or not. */
function crd(kind: string, labelled: boolean): CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.${GROUP}`,
      ...(labelled ? { labels: { [RUNTIME_KINDS_LABEL]: 'true' } } : {}),
    },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
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
  };
}

/** Creates the CRD and establishes it, as kube-apiserver would; returns its kind's type. */
async function installCrd(client: Client, kind: string, labelled: boolean): Promise<ResourceType> {
  const created = await client.create(customResourceDefinitionType, crd(kind, labelled));
  const conditions = ['NamesAccepted', 'Established'].map((type) => ({
    type,
    status: 'True',
    reason: type === 'Established' ? 'InitialNamesAccepted' : 'NoConflicts',
    message: '',
    lastTransitionTime: new Date(0).toISOString(),
  }));
  const established = await client.updateStatus(customResourceDefinitionType, {
    ...created,
    status: { conditions, acceptedNames: created.spec.names, storedVersions: ['v1alpha1'] },
  });
  return resourceTypeOfCrd(established);
}

const object = (type: ResourceType, name: string, spec: unknown): CustomResource => ({
  apiVersion: `${GROUP}/v1alpha1`,
  kind: type.kind,
  metadata: { name, namespace },
  spec,
});

/** The kinds served at the end, by name, with their objects. */
const expected: Record<string, string[]> = {
  Gizmo: ['hello'],
  Doohickey: ['hello'],
  Whatsit: ['first'],
  Thingamajig: ['hello'],
};

export default defineScenario({
  name: 'runtime-kinds',
  operator,
  setup: async ({ client, sleep }) => {
    const gizmo = await installCrd(client, 'Gizmo', true);
    const doohickey = await installCrd(client, 'Doohickey', true);
    const thingamajig = await installCrd(client, 'Thingamajig', false);
    // The same name in two served kinds: two objects, two summaries.
    await client.create(gizmo, object(gizmo, 'hello', { colour: 'teal', sprockets: 3 }));
    await client.create(doohickey, object(doohickey, 'hello', { purpose: 'holding the door' }));
    await client.create(gizmo, object(gizmo, 'doomed', { n: 1 }));
    await client.create(thingamajig, object(thingamajig, 'hello', { whatever: true }));
    await sleep(500);
    // A labelled CRD installed while it runs: served without a restart.
    const whatsit = await installCrd(client, 'Whatsit', true);
    await client.create(whatsit, object(whatsit, 'first', { colour: 'teal' }));
    await sleep(300);
    await client.patch(
      whatsit,
      { namespace, name: 'first' },
      { type: 'merge', patch: { spec: { colour: 'red' } } },
    );
    await client.delete(gizmo, { namespace, name: 'doomed' });
    // The label is the only difference: with it, the Thingamajig is reconciled too.
    await client.patch(
      customResourceDefinitionType,
      { namespace: '', name: `thingamajigs.${GROUP}` },
      { type: 'merge', patch: { metadata: { labels: { [RUNTIME_KINDS_LABEL]: 'true' } } } },
    );
  },
  invariants: {
    'every object of a served kind has a summary of its spec and generation, owned by it': async ({
      client,
    }) => {
      for (const [kind, names] of Object.entries(expected)) {
        const found = await client.get<CustomResourceDefinition>(customResourceDefinitionType, {
          namespace: '',
          name: `${kind.toLowerCase()}s.${GROUP}`,
        });
        const type = resourceTypeOfCrd(found);
        for (const name of names) {
          const o = await client.get<CustomResource>(type, { namespace, name });
          const cm = await client.get<ConfigMap>(configMapType, { namespace, name: summaryName(type, name) });
          const wanted = { kind, generation: String(o.metadata.generation), spec: JSON.stringify(o.spec) };
          if (JSON.stringify(cm.data) !== JSON.stringify(wanted))
            throw new Error(
              `${cm.metadata.name} holds ${JSON.stringify(cm.data)}, wants ${JSON.stringify(wanted)}`,
            );
          const owners = cm.metadata.ownerReferences ?? [];
          if (owners.length !== 1 || owners[0]?.uid !== o.metadata.uid || owners[0]?.controller !== true)
            throw new Error(
              `${cm.metadata.name} is not controlled by ${kind} ${name}: ${JSON.stringify(owners)}`,
            );
        }
      }
    },
    'every object of a served kind is Ready for its current generation': async ({ client }) => {
      for (const [kind, names] of Object.entries(expected)) {
        const found = await client.get<CustomResourceDefinition>(customResourceDefinitionType, {
          namespace: '',
          name: `${kind.toLowerCase()}s.${GROUP}`,
        });
        const type = resourceTypeOfCrd(found);
        for (const name of names) {
          const o = await client.get<CustomResource>(type, { namespace, name });
          const ready = o.status?.conditions?.find((c) => c.type === 'Ready');
          if (
            o.status?.observedGeneration !== o.metadata.generation ||
            ready?.status !== 'True' ||
            ready.observedGeneration !== o.metadata.generation
          )
            throw new Error(
              `${kind} ${name}: generation ${o.metadata.generation}, status ${JSON.stringify(o.status)}`,
            );
        }
      }
    },
    "a deleted object's summary is gone": async ({ client }) => {
      const left = await client.get(configMapType, { namespace, name: 'gizmo-doomed' }).catch(ignoreNotFound);
      if (left !== undefined) throw new Error('gizmo-doomed is left behind');
    },
  },
});
