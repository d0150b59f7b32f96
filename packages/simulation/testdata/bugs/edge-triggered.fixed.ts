/**
 * edge-triggered, fixed. Level-based: whatever the causes, the reconcile reads the settings object
 * as it is now and makes its Secret match (`createOrUpdate`). A replay after a restart, a relist,
 * two events coalesced into one run — each just runs the same comparison again.
 */
import {
  configMapType,
  createOrUpdate,
  done,
  ignoreNotFound,
  type Manager,
  secretType,
  setControllerReference,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import { PUBLISH, published, secretData, settingsSetup } from './edge-triggered.shared.ts';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('publisher')
    .owns(secretType)
    .complete(async (key) => {
      const settings = await client.get(configMapType, key).catch(ignoreNotFound);
      if (settings?.metadata.labels?.[PUBLISH] !== 'yes') return done();
      await createOrUpdate(
        client,
        secretType,
        { metadata: { namespace: key.namespace, name: `${key.name}-settings` } },
        (secret) => setControllerReference(settings, { ...secret, data: secretData(settings.data) }),
      );
      return done();
    });
}

export default defineScenario({
  name: 'edge-triggered (fixed)',
  operator,
  setup: settingsSetup,
  invariants: { 'every settings object is published': published },
});
