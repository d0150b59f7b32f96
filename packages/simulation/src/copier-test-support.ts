/**
 * The README's copier operator (every ConfigMap labelled `copy: "yes"` gets an owned copy holding
 * its data), the correct operator the simulator's tests, its Node-versions check and its benchmark
 * run. Not part of the package.
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
