/**
 * stale-state, buggy. A ConfigMap labelled `db.example.com/request: "yes"` asks for database
 * credentials: a Secret with a generated name (`<request>-credentials-xxxxx`), labelled with the
 * request it belongs to. The operator decides whether to create one from its cache: no labelled
 * Secret there, so create. But the cache can be behind the server — the create's answer was lost
 * (504) and the retry runs before the watch delivers the Secret, the process restarted onto a
 * lagging replica, the Secret's event is late — and a generated name never collides, so every
 * stale look makes one more Secret.
 */
import {
  configMapType,
  done,
  ignoreNotFound,
  type Manager,
  type Secret,
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
      // BUG: "none in my cache" is not "none on the server", and generateName cannot collide.
      const existing = await client.list(secretType, {
        namespace: key.namespace,
        labelSelector: `${FOR}=${key.name}`,
      });
      if (existing.length > 0) return done();
      const secret: Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          namespace: key.namespace,
          generateName: `${key.name}-credentials-`,
          labels: { [FOR]: key.name },
        },
        data: { username: Buffer.from(request.data?.user ?? '').toString('base64') },
      };
      await client.create(secretType, setControllerReference(request, secret));
      return done();
    });
}

export default defineScenario({
  name: 'stale-state (buggy)',
  operator,
  setup: requestSetup,
  invariants: { 'one credentials Secret per request': oneSecretEach },
});
