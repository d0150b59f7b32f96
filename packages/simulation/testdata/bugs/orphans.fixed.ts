/**
 * orphans, fixed. The controller reference is part of the object the operator writes — in the
 * create itself, and again on every reconcile through `createOrUpdate`, which adopts a Secret that
 * exists without it. There is no moment when the token exists unowned for long, and none that a
 * later reconcile does not repair.
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
      await createOrUpdate(
        client,
        secretType,
        { metadata: { namespace: key.namespace, name: `${key.name}-token` } },
        (token) =>
          setControllerReference(request, {
            ...token,
            metadata: { ...token.metadata, labels: { ...token.metadata.labels, [TOKEN]: key.name } },
            data: { scope: Buffer.from(request.data?.scope ?? '').toString('base64') },
          }),
      );
      return done();
    });
}

export default defineScenario({
  name: 'orphans (fixed)',
  operator,
  setup: tokenSetup,
  invariants: { 'a token lives exactly as long as its request': tokensFollowRequests },
});
