/**
 * hot-loop, buggy. A ConfigMap labelled `mirror: "yes"` gets a Secret `<name>-mirror` holding its
 * data, and the operator notes on the ConfigMap which version it mirrored — as the ConfigMap's own
 * resourceVersion. Writing the note gives the ConfigMap a new resourceVersion, whose event runs the
 * reconcile again, which notes the new one: the key never goes quiet. The simulator's hot-loop
 * oracle stops it after `maxReconcilesPerKey` reconciles of one key once the faults are over.
 */
import {
  type ConfigMap,
  configMapType,
  createOrUpdate,
  done,
  ignoreNotFound,
  type Manager,
  secretType,
  setControllerReference,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import { mirrorSetup, mirrorsMatch, secretData } from './hot-loop.shared.ts';

const SYNCED = 'mirror.example.com/synced-version';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('mirror')
    .owns(secretType)
    .complete(async (key) => {
      const source = await client.get(configMapType, key).catch(ignoreNotFound);
      if (source?.metadata.labels?.mirror !== 'yes') return done();
      await createOrUpdate(
        client,
        secretType,
        { metadata: { namespace: key.namespace, name: `${key.name}-mirror` } },
        (secret) => setControllerReference(source, { ...secret, data: secretData(source.data) }),
      );
      // BUG: the object's own resourceVersion changes with every write, this one included.
      const version = source.metadata.resourceVersion ?? '';
      if (source.metadata.annotations?.[SYNCED] !== version) {
        const noted: ConfigMap = {
          ...source,
          metadata: {
            ...source.metadata,
            annotations: { ...source.metadata.annotations, [SYNCED]: version },
          },
        };
        await client.update(configMapType, noted);
      }
      return done();
    });
}

export default defineScenario({
  name: 'hot-loop (buggy)',
  operator,
  setup: mirrorSetup,
  invariants: { 'every mirror holds its source data': mirrorsMatch },
});
