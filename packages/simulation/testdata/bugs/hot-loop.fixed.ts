/**
 * hot-loop, fixed. The same mirror, noting what it mirrored as a hash of the ConfigMap's data: a
 * fact about the desired state that the note itself does not change, so the write it causes finds
 * nothing to do (controller-runtime's advice: record `observedGeneration` or a content hash, never
 * the object's own resourceVersion).
 */
import { createHash } from 'node:crypto';
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

const SYNCED = 'mirror.example.com/synced-hash';

function hashOf(data: Readonly<Record<string, string>> | undefined): string {
  const sorted = Object.entries(data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

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
      const hash = hashOf(source.data);
      if (source.metadata.annotations?.[SYNCED] !== hash) {
        const noted: ConfigMap = {
          ...source,
          metadata: { ...source.metadata, annotations: { ...source.metadata.annotations, [SYNCED]: hash } },
        };
        await client.update(configMapType, noted);
      }
      return done();
    });
}

export default defineScenario({
  name: 'hot-loop (fixed)',
  operator,
  setup: mirrorSetup,
  invariants: { 'every mirror holds its source data': mirrorsMatch },
});
