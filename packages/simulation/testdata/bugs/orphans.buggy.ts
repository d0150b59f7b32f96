/**
 * orphans, buggy. A ConfigMap labelled `tokens.example.com/token: "yes"` gets a token Secret
 * `<name>-token`. The operator creates the Secret, then adopts it (sets the controller reference)
 * in a second write, and skips the whole step when the Secret exists already. A crash between the
 * two writes, or a 504 on the create, leaves a token nobody owns; the next reconcile finds it and
 * is done. When the request is deleted, garbage collection has nothing to follow: the token — a
 * credential — outlives it.
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
import { TOKEN, tokenSetup, tokensFollowRequests, WANTS_TOKEN } from './orphans.shared.ts';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('tokens')
    .owns(secretType)
    .complete(async (key) => {
      const request = await client.get(configMapType, key).catch(ignoreNotFound);
      if (request?.metadata.labels?.[WANTS_TOKEN] !== 'yes') return done();
      const name = `${key.name}-token`;
      const existing = await client.get(secretType, { namespace: key.namespace, name }).catch(ignoreNotFound);
      if (existing !== undefined) return done();
      const token: Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace: key.namespace, name, labels: { [TOKEN]: key.name } },
        data: { scope: Buffer.from(request.data?.scope ?? '').toString('base64') },
      };
      const created = await client.create(secretType, token);
      // BUG: ownership in a second write; whatever stops the reconcile here leaves the token unowned.
      await client.update(secretType, setControllerReference(request, created));
      return done();
    });
}

export default defineScenario({
  name: 'orphans (buggy)',
  operator,
  setup: tokenSetup,
  invariants: { 'a token lives exactly as long as its request': tokensFollowRequests },
});
