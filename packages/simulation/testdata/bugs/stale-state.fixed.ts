/**
 * stale-state, fixed. The credentials Secret has a name derived from the request
 * (`<request>-credentials`), so the server itself refuses a second one: a create from a stale look
 * fails with AlreadyExists, the reconcile is retried, and by then the cache shows the Secret.
 * `createOrUpdate` reads, then creates or updates, always by that name.
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
import { FOR, oneSecretEach, requestSetup } from './stale-state.shared.ts';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('credentials')
    .owns(secretType)
    .complete(async (key) => {
      const request = await client.get(configMapType, key).catch(ignoreNotFound);
      if (request?.metadata.labels?.['db.example.com/request'] !== 'yes') return done();
      await createOrUpdate(
        client,
        secretType,
        { metadata: { namespace: key.namespace, name: `${key.name}-credentials` } },
        (secret) =>
          setControllerReference(request, {
            ...secret,
            metadata: { ...secret.metadata, labels: { ...secret.metadata.labels, [FOR]: key.name } },
            data: { username: Buffer.from(request.data?.user ?? '').toString('base64') },
          }),
      );
      return done();
    });
}

export default defineScenario({
  name: 'stale-state (fixed)',
  operator,
  setup: requestSetup,
  invariants: { 'one credentials Secret per request': oneSecretEach },
});
