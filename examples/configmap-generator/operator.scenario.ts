/**
 * The ConfigMap generator under simulation (`npx converge simulate
 * examples/configmap-generator/operator.scenario.ts`): the user creates generators, changes their
 * copies and data, and deletes one, while the simulator injects faults. Once things settle, every
 * generator has exactly its `spec.copies` ConfigMaps, holding its data and controlled by it, and
 * reports Ready for its current generation; the deleted one's ConfigMaps were garbage-collected.
 */
import { type Client, type ConfigMap, configMapType, ignoreNotFound } from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import configMapGenerator, { type ConfigMapGenerator, GENERATOR_LABEL, generatorType } from './operator.ts';

const namespace = 'default';

const generator = (name: string, spec: ConfigMapGenerator['spec']): ConfigMapGenerator => ({
  apiVersion: 'examples.converge.dev/v1alpha1',
  kind: 'ConfigMapGenerator',
  metadata: { name, namespace },
  spec,
});

/** The generators the user leaves behind, with what they ask for. */
const kept = ['greetings', 'farewells', 'late'];

async function generatedBy(client: Client, name: string): Promise<ConfigMap[]> {
  const maps = await client.list<ConfigMap>(configMapType, {
    namespace,
    labelSelector: `${GENERATOR_LABEL}=${name}`,
  });
  return maps.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

export default defineScenario({
  name: 'configmap-generator',
  operator: configMapGenerator,
  setup: async ({ client, sleep }) => {
    await client.create(generatorType, generator('greetings', { copies: 2, data: { hello: 'world' } }));
    await client.create(generatorType, generator('farewells', { copies: 3, data: { bye: 'now' } }));
    await client.create(generatorType, generator('doomed', { copies: 2, data: { x: '1' } }));
    await sleep(500);
    // More copies and new data, as `kubectl patch --type=merge` sends them.
    await client.patch(
      generatorType,
      { namespace, name: 'greetings' },
      { type: 'merge', patch: { spec: { copies: 3, data: { hello: 'there' } } } },
    );
    await sleep(300);
    await client.delete(generatorType, { namespace, name: 'doomed' });
    await sleep(400);
    // Fewer copies: the extra ones go.
    await client.patch(
      generatorType,
      { namespace, name: 'farewells' },
      { type: 'merge', patch: { spec: { copies: 1 } } },
    );
    await client.create(generatorType, generator('late', { data: { a: 'b' } }));
    await sleep(200);
    await client.patch(
      generatorType,
      { namespace, name: 'greetings' },
      { type: 'merge', patch: { spec: { copies: 2 } } },
    );
  },
  invariants: {
    'every generator has exactly its copies, holding its data and controlled by it': async ({ client }) => {
      for (const name of kept) {
        const g = await client.get<ConfigMapGenerator>(generatorType, { namespace, name });
        const copies = g.spec.copies ?? 1;
        const maps = await generatedBy(client, name);
        const names = maps.map((m) => m.metadata.name);
        const wanted = Array.from({ length: copies }, (_, i) => `${name}-${i}`);
        if (JSON.stringify(names) !== JSON.stringify(wanted))
          throw new Error(`${name} has ConfigMaps ${JSON.stringify(names)}, wants ${JSON.stringify(wanted)}`);
        for (const m of maps) {
          if (JSON.stringify(m.data) !== JSON.stringify(g.spec.data))
            throw new Error(
              `${m.metadata.name} holds ${JSON.stringify(m.data)}, not ${JSON.stringify(g.spec.data)}`,
            );
          const owners = m.metadata.ownerReferences ?? [];
          if (owners.length !== 1 || owners[0]?.uid !== g.metadata.uid || owners[0]?.controller !== true)
            throw new Error(`${m.metadata.name} is not controlled by ${name}: ${JSON.stringify(owners)}`);
        }
      }
    },
    'every generator reports Ready for its current generation': async ({ client }) => {
      for (const name of kept) {
        const g = await client.get<ConfigMapGenerator>(generatorType, { namespace, name });
        const wanted = Array.from({ length: g.spec.copies ?? 1 }, (_, i) => `${name}-${i}`);
        const ready = g.status?.conditions?.find((c) => c.type === 'Ready');
        if (g.status?.observedGeneration !== g.metadata.generation)
          throw new Error(
            `${name}: observedGeneration ${g.status?.observedGeneration}, generation ${g.metadata.generation}`,
          );
        if (ready?.status !== 'True' || ready.observedGeneration !== g.metadata.generation)
          throw new Error(`${name}: Ready is ${JSON.stringify(ready)}`);
        if (JSON.stringify(g.status?.configMaps) !== JSON.stringify(wanted))
          throw new Error(`${name}: status.configMaps ${JSON.stringify(g.status?.configMaps)}`);
      }
    },
    'a deleted generator leaves no ConfigMaps behind': async ({ client }) => {
      const g = await client.get(generatorType, { namespace, name: 'doomed' }).catch(ignoreNotFound);
      if (g !== undefined) throw new Error('doomed still exists');
      const left = await generatedBy(client, 'doomed');
      if (left.length > 0) throw new Error(`doomed left ${left.map((m) => m.metadata.name).join(', ')}`);
    },
  },
});
