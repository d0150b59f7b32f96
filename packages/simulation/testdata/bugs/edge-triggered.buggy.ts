/**
 * edge-triggered, buggy. Settings ConfigMaps labelled `settings.example.com/publish: "yes"` are
 * published as Secrets `<name>-settings`. The operator works only when something happened: a live
 * `added` or `modified` event of the settings object; the replay of every object when the process
 * starts (the informer's initial list) is skipped, "because those were handled before" — client-go's
 * `isInInitialList`, used as a shortcut to spare the API server a burst of reads at every start. A process that crashed between an
 * event and its write, or that was down while an object was created or edited, never hears of
 * that event again: its restart only replays, and the replay is skipped.
 */
import {
  type Cause,
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

/** A live event about the settings object itself (not the replay of a start or relist). */
function live(cause: Cause): boolean {
  return (
    (cause.type === 'added' || cause.type === 'modified') &&
    cause.secondary !== true &&
    cause.initialList !== true
  );
}

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('publisher')
    .owns(secretType)
    .complete(async (key, { causes }) => {
      // BUG: acts on events, not on state; a replay or a lost event means "nothing to do".
      if (!causes.some(live)) return done();
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
  name: 'edge-triggered (buggy)',
  operator,
  setup: settingsSetup,
  invariants: { 'every settings object is published': published },
});
