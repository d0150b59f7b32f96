/**
 * The README's copier operator (every ConfigMap labelled `copy: "yes"` gets an owned copy holding
 * its data), the correct operator the simulator's tests, its Node-versions check and its benchmark
 * run, and the benchmark's scenario of it. Not part of the package.
 */
import {
  type ConfigMap,
  configMapType,
  createOrUpdate,
  done,
  ignoreNotFound,
  type Manager,
  setControllerReference,
} from '@converge/runtime';
import { defineScenario, type Scenario } from './scenario.ts';

export function copier(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('copier')
    .complete(async (key) => {
      const source = await client.get<ConfigMap>(configMapType, key).catch(ignoreNotFound);
      if (source?.metadata.labels?.copy !== 'yes') return done();
      const copy: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: key.namespace, name: `${key.name}-copy` },
      };
      await createOrUpdate(client, configMapType, copy, (current) =>
        setControllerReference(source, { ...current, data: { ...source.data } }),
      );
      return done();
    });
}

/** How many ConfigMaps {@link copierScenario} creates. */
export const COPIER_OBJECTS = 20;

/**
 * bench:simulation's scenario (and the tests of the seeds it found): 20 labelled ConfigMaps
 * created, 5 updated, 3 deleted; the invariant checks every copy.
 */
export const copierScenario: Scenario = defineScenario({
  name: 'copier',
  operator: copier,
  setup: async ({ client, sleep }) => {
    for (let i = 0; i < COPIER_OBJECTS; i++) {
      await client.create(configMapType, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: 'default', labels: { copy: 'yes' } },
        data: { v: '0' },
      });
      await sleep(50);
    }
    for (let i = 0; i < 5; i++) {
      await client.patch(
        configMapType,
        { namespace: 'default', name: `cm-${i}` },
        { type: 'merge', patch: { data: { v: '1' } } },
      );
      await sleep(100);
    }
    for (let i = 17; i < COPIER_OBJECTS; i++)
      await client.delete(configMapType, { namespace: 'default', name: `cm-${i}` });
  },
  invariants: {
    'every copy holds its source data': async ({ client }) => {
      for (let i = 0; i < 17; i++) {
        const copy = await client.get<ConfigMap>(configMapType, {
          namespace: 'default',
          name: `cm-${i}-copy`,
        });
        if (copy.data?.v !== (i < 5 ? '1' : '0'))
          throw new Error(`cm-${i}-copy holds ${JSON.stringify(copy.data)}`);
      }
    },
  },
});
