/**
 * The embedded API server calls admission webhooks: a real WebhookServer from @converge/kube over
 * real HTTPS, verified with its generated CA. Mutating webhooks patch before schema validation,
 * validating ones deny or warn after it; calls fail closed or open by failurePolicy; rules and
 * selectors decide which webhooks are called.
 */
import type { KubeObject } from '@converge/runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import {
  allowing,
  configMapRule,
  configMapWriter,
  configuration,
  type Hooks,
  startHooks,
  startHttpsServer,
} from './support.ts';

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const CM = '/api/v1/namespaces/default/configmaps';

/**
 * Every case runs twice: the API server calling the webhook server over HTTPS, and with the webhook
 * server in its process (`localWebhooks`, as converge dev wires it), where the calls to it are
 * answered without TLS or HTTP and must come out the same; calls to other servers still go over HTTPS.
 */
for (const local of [false, true]) {
  describe(local ? 'webhooks in the API server process (in process)' : 'webhooks over HTTPS', () => {
    let localCalls = 0;
    let api: TestServer;
    let hooks: Hooks;

    function configMap(
      name: string,
      data: Record<string, string> = {},
      labels?: Record<string, string>,
    ): object {
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
    }

    async function install(path: string, body: Record<string, unknown>): Promise<void> {
      const created = await api.request(path, { method: 'POST', body });
      expect(created.status).toBe(201);
    }

    beforeAll(async () => {
      hooks = await startHooks();
      api = await startTestServer(
        local
          ? {
              localWebhooks: {
                dispatcher(url, caPem, serverName) {
                  const dispatch = hooks.server.localDispatcher(url, caPem, serverName);
                  if (dispatch === undefined) return undefined;
                  return (path, body, signal) => {
                    localCalls++;
                    return dispatch(path, body, signal);
                  };
                },
              },
            }
          : {},
      );
    });

    afterAll(async () => {
      await hooks.stop();
      await api.close();
      // in process, the calls to the hooks server went through the dispatcher (none over HTTPS)
      if (local) expect(localCalls).toBeGreaterThan(10);
    });

    beforeEach(async () => {
      for (const path of [VWC, MWC, CM])
        expect((await api.request(path, { method: 'DELETE' })).status).toBe(200);
      hooks.calls.length = 0;
    });

    describe('validating webhooks', () => {
      beforeEach(async () => {
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'vcm', {
            name: 'vcm.example.com',
            clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
          }),
        );
      });

      it('a denial is the webhook code and reads "admission webhook NAME denied the request: MSG"; nothing is stored', async () => {
        const answer = await api.request(CM, { method: 'POST', body: configMap('denied', { bad: 'x' }) });
        expect(answer.status).toBe(403);
        expect(answer.json).toMatchObject({
          kind: 'Status',
          status: 'Failure',
          code: 403,
          reason: 'Forbidden',
          message: 'admission webhook "vcm.example.com" denied the request: data.bad is not allowed: x',
        });
        expect(answer.headers.warning).toBe('299 - "checked by vcm"');
        expect((await api.request(`${CM}/denied`)).status).toBe(404);
      });

      it('an allowed write is stored, with the webhook warnings as Warning headers', async () => {
        const answer = await api.request(CM, { method: 'POST', body: configMap('warned', { warn: 'yes' }) });
        expect(answer.status).toBe(201);
        expect(answer.headers.warning).toBe('299 - "data.warn is set to yes"');
        expect(hooks.calls).toEqual(['/validate CREATE warned']);
        expect(hooks.last).toMatchObject({
          operation: 'CREATE',
          kind: { group: '', version: 'v1', kind: 'ConfigMap' },
          resource: { group: '', version: 'v1', resource: 'configmaps' },
          namespace: 'default',
          name: 'warned',
          dryRun: false,
          oldObject: null,
        });
      });

      it('an update sends the stored object as oldObject, and a denied update leaves it unchanged', async () => {
        await api.request(CM, { method: 'POST', body: configMap('kept', { a: '1' }) });
        const patch = await api.request(`${CM}/kept`, {
          method: 'PATCH',
          body: { data: { bad: 'y' } },
          headers: { 'content-type': 'application/merge-patch+json' },
        });
        expect(patch.status).toBe(403);
        expect(hooks.last?.operation).toBe('UPDATE');
        expect((hooks.last?.oldObject as { data?: unknown } | null)?.data).toEqual({ a: '1' });
        expect(((await api.request(`${CM}/kept`)).json as { data: unknown }).data).toEqual({ a: '1' });
      });

      it('rules decide what is sent: other resources and operations never reach the webhook', async () => {
        const secret = await api.request('/api/v1/namespaces/default/secrets', {
          method: 'POST',
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { bad: 'x' } },
        });
        expect(secret.status).toBe(201);
        await api.request(CM, { method: 'POST', body: configMap('plain') });
        expect((await api.request(`${CM}/plain`, { method: 'DELETE' })).status).toBe(200);
        expect(hooks.calls).toEqual(['/validate CREATE plain']);
        await api.request('/api/v1/namespaces/default/secrets/s', { method: 'DELETE' });
      });

      it('a dry run reaches a webhook with sideEffects None, marked dryRun, and stores nothing', async () => {
        const dry = await api.request(`${CM}?dryRun=All`, {
          method: 'POST',
          body: configMap('dry', { warn: 'd' }),
        });
        expect(dry.status).toBe(201);
        expect(hooks.last).toMatchObject({
          dryRun: true,
          options: { kind: 'CreateOptions', dryRun: ['All'] },
        });
        expect((await api.request(`${CM}/dry`)).status).toBe(404);
      });
    });

    describe('the requesting user', () => {
      /** The raw `request.userInfo` of every review the webhook received (the wire form). */
      const seen: unknown[] = [];
      let raw: Awaited<ReturnType<typeof startHttpsServer>>;
      beforeAll(async () => {
        raw = await startHttpsServer((review) => {
          seen.push(review.request.userInfo);
          return allowing(review.request.uid);
        });
      });
      afterAll(async () => {
        await raw.close();
      });
      beforeEach(async () => {
        seen.length = 0;
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'who', {
            name: 'who.example.com',
            clientConfig: { url: `${raw.url}/who`, caBundle: raw.caBundle },
          }),
        );
      });

      it('a webhook sees the ServiceAccount a token names as request.userInfo (username, uid, groups, extra)', async () => {
        const robot = await configMapWriter(api, 'robot');
        const answer = await api.request(CM, {
          method: 'POST',
          body: configMap('by-robot'),
          token: robot.token,
        });
        expect(answer.status, answer.text).toBe(201);
        expect(seen).toEqual([
          {
            username: 'system:serviceaccount:default:robot',
            uid: robot.uid,
            groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
            extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${robot.jti}`] },
          },
        ]);
      });

      it('a webhook sees the server token as converge-admin in system:masters, and an impersonated user as that user', async () => {
        expect((await api.request(CM, { method: 'POST', body: configMap('by-admin') })).status).toBe(201);
        const impersonated = await api.request(CM, {
          method: 'POST',
          body: configMap('by-jane'),
          headers: { 'impersonate-user': 'jane', 'impersonate-group': 'system:masters' },
        });
        expect(impersonated.status, impersonated.text).toBe(201);
        expect(seen).toEqual([
          { username: 'converge-admin', groups: ['system:masters', 'system:authenticated'] },
          { username: 'jane', groups: ['system:masters', 'system:authenticated'] },
        ]);
      });
    });

    describe('mutating webhooks', () => {
      it('patch the object before it is validated and stored; the validating webhook sees the result', async () => {
        await install(
          MWC,
          configuration('MutatingWebhookConfiguration', 'mcm', {
            name: 'mcm.example.com',
            clientConfig: { url: `${hooks.url}/default`, caBundle: hooks.caBundle },
          }),
        );
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'vcm', {
            name: 'vcm.example.com',
            clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
          }),
        );
        const answer = await api.request(CM, { method: 'POST', body: configMap('mutated', { a: '1' }) });
        expect(answer.status).toBe(201);
        expect(answer.json).toMatchObject({
          metadata: { labels: { defaulted: 'yes' } },
          data: { a: '1', defaulted: 'true' },
        });
        expect(hooks.calls).toEqual(['/default mutated', '/validate CREATE mutated']);
        expect((hooks.last?.object as { data?: unknown } | null | undefined)?.data).toEqual({
          a: '1',
          defaulted: 'true',
        });
        const stored = (await api.request(`${CM}/mutated`)).json as { data: unknown };
        expect(stored.data).toEqual({ a: '1', defaulted: 'true' });
      });
    });

    describe('selectors', () => {
      it('objectSelector matches the labels of the new or the old object', async () => {
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'vcm', {
            name: 'vcm.example.com',
            objectSelector: { matchLabels: { checked: 'yes' } },
            clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
          }),
        );
        expect(
          (await api.request(CM, { method: 'POST', body: configMap('free', { bad: 'x' }) })).status,
        ).toBe(201);
        const labelled = await api.request(CM, {
          method: 'POST',
          body: configMap('held', { bad: 'x' }, { checked: 'yes' }),
        });
        expect(labelled.status).toBe(403);
        expect(hooks.calls).toEqual(['/validate CREATE held']);
      });

      it('namespaceSelector matches the labels of the object namespace', async () => {
        await install('/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'guarded', labels: { admission: 'on' } },
        });
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'vcm', {
            name: 'vcm.example.com',
            namespaceSelector: { matchExpressions: [{ key: 'admission', operator: 'In', values: ['on'] }] },
            clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
          }),
        );
        expect(
          (await api.request(CM, { method: 'POST', body: configMap('outside', { bad: 'x' }) })).status,
        ).toBe(201);
        const inside = await api.request('/api/v1/namespaces/guarded/configmaps', {
          method: 'POST',
          body: configMap('inside', { bad: 'x' }),
        });
        expect(inside.status).toBe(403);
        expect(hooks.calls).toEqual(['/validate CREATE inside']);
      });
    });

    describe('calling webhooks', () => {
      it('reaches a clientConfig.service on 127.0.0.1 at its port, checking the NAME.NAMESPACE.svc certificate', async () => {
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'vcm', {
            name: 'vcm.example.com',
            clientConfig: {
              service: { namespace: 'webhooks', name: 'hooks', path: '/validate', port: hooks.port },
              caBundle: hooks.caBundle,
            },
          }),
        );
        expect((await api.request(CM, { method: 'POST', body: configMap('svc', { bad: 'x' }) })).status).toBe(
          403,
        );
        expect(hooks.calls).toEqual(['/validate CREATE svc']);
      });

      it('a configuration written straight into the store is called once the store watch reports it', async () => {
        const denied = { method: 'POST', body: configMap('probe', { bad: 'x' }) };
        expect((await api.request(`${CM}?dryRun=All`, denied)).status).toBe(201); // cached: no webhooks
        const type = api.server.store.resolveType(
          'admissionregistration.k8s.io/v1',
          'ValidatingWebhookConfiguration',
        );
        if (type === undefined) throw new Error('ValidatingWebhookConfiguration is not registered');
        const vcm = configuration('ValidatingWebhookConfiguration', 'direct', {
          name: 'vcm.example.com',
          clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
        });
        await api.server.store.create(type, vcm as unknown as KubeObject);
        await vi.waitFor(async () =>
          expect((await api.request(`${CM}?dryRun=All`, denied)).status).toBe(403),
        );
      });

      it('a webhook that cannot be reached fails the write with Fail and is skipped with Ignore', async () => {
        const gone = await startHooks();
        await gone.stop();
        const url = `https://127.0.0.1:${gone.port}/validate`;
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'down', {
            name: 'down.example.com',
            clientConfig: { url, caBundle: gone.caBundle },
          }),
        );
        const failed = await api.request(CM, { method: 'POST', body: configMap('closed') });
        expect(failed.status).toBe(500);
        expect(failed.json).toMatchObject({
          reason: 'InternalError',
          message:
            `Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: ` +
            `Post "${url}?timeout=10s": dial tcp 127.0.0.1:${gone.port}: connect: connection refused`,
        });
        expect((await api.request(VWC, { method: 'DELETE' })).status).toBe(200);
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'down', {
            name: 'down.example.com',
            failurePolicy: 'Ignore',
            clientConfig: { url, caBundle: gone.caBundle },
          }),
        );
        expect((await api.request(CM, { method: 'POST', body: configMap('open') })).status).toBe(201);
      });

      it('a certificate not signed by caBundle is a failed call', async () => {
        const other = await startHttpsServer();
        try {
          await install(
            VWC,
            configuration('ValidatingWebhookConfiguration', 'wrong-ca', {
              name: 'ca.example.com',
              clientConfig: { url: `${hooks.url}/validate`, caBundle: other.caBundle },
            }),
          );
          const answer = await api.request(CM, { method: 'POST', body: configMap('untrusted') });
          expect(answer.status).toBe(500);
          expect(hooks.calls).toEqual([]);
        } finally {
          await other.close();
        }
      });

      it('a webhook slower than timeoutSeconds fails the write with context deadline exceeded', async () => {
        const silent = await startHttpsServer();
        try {
          await install(
            VWC,
            configuration('ValidatingWebhookConfiguration', 'slow', {
              name: 'slow.example.com',
              timeoutSeconds: 1,
              clientConfig: { url: `${silent.url}/validate`, caBundle: silent.caBundle },
            }),
          );
          const answer = await api.request(CM, { method: 'POST', body: configMap('late') });
          expect(answer.status).toBe(500);
          expect((answer.json as { message: string }).message).toBe(
            'Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: ' +
              `Post "${silent.url}/validate?timeout=1s": context deadline exceeded`,
          );
        } finally {
          await silent.close();
        }
      });

      it('rules with a matching operation list only: an UPDATE-only webhook is not called on CREATE', async () => {
        await install(
          VWC,
          configuration('ValidatingWebhookConfiguration', 'vcm', {
            name: 'vcm.example.com',
            rules: [configMapRule(['UPDATE'])],
            clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
          }),
        );
        expect((await api.request(CM, { method: 'POST', body: configMap('new', { bad: 'x' }) })).status).toBe(
          201,
        );
        expect(hooks.calls).toEqual([]);
      });

      it('a response that does not echo the request uid is a failed call', async () => {
        const liar = await startHttpsServer(() => allowing('not-the-uid'));
        try {
          await install(
            VWC,
            configuration('ValidatingWebhookConfiguration', 'liar', {
              name: 'liar.example.com',
              clientConfig: { url: `${liar.url}/validate`, caBundle: liar.caBundle },
            }),
          );
          const answer = await api.request(CM, { method: 'POST', body: configMap('lied') });
          expect(answer.status).toBe(500);
          expect((answer.json as { message: string }).message).toMatch(
            /^Internal error occurred: failed calling webhook "liar\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]{36}", got "not-the-uid"$/,
          );
        } finally {
          await liar.close();
        }
      });
    });

    describe('mutating webhook order and reinvocation', () => {
      /** /a writes whether /b already ran into data.a; /b sets data.b. */
      async function withOrderServer(run: (url: string, caBundle: string) => Promise<void>): Promise<void> {
        const server = await startHttpsServer((review, path) => {
          const object = review.request.object as { data?: Record<string, string> };
          const patch =
            path === '/a'
              ? [{ op: 'add', path: '/data/a', value: String(object.data?.b !== undefined) }]
              : [{ op: 'add', path: '/data/b', value: '1' }];
          return allowing(review.request.uid, patch);
        });
        try {
          await run(server.url, server.caBundle);
        } finally {
          await server.close();
        }
      }

      async function installOrder(url: string, caBundle: string, reinvocationPolicy: string): Promise<void> {
        // created in the opposite order of their names: configurations run by name
        await install(
          MWC,
          configuration('MutatingWebhookConfiguration', 'b-second', {
            name: 'b.example.com',
            clientConfig: { url: `${url}/b`, caBundle },
          }),
        );
        await install(
          MWC,
          configuration('MutatingWebhookConfiguration', 'a-first', {
            name: 'a.example.com',
            reinvocationPolicy,
            clientConfig: { url: `${url}/a`, caBundle },
          }),
        );
      }

      it('runs configurations by name; with Never an earlier webhook does not see a later change', async () => {
        await withOrderServer(async (url, caBundle) => {
          await installOrder(url, caBundle, 'Never');
          const answer = await api.request(CM, { method: 'POST', body: configMap('once', { x: '1' }) });
          expect((answer.json as { data: unknown }).data).toEqual({ x: '1', a: 'false', b: '1' });
        });
      });

      it('with reinvocationPolicy IfNeeded an earlier webhook runs again after a later one changed the object', async () => {
        await withOrderServer(async (url, caBundle) => {
          await installOrder(url, caBundle, 'IfNeeded');
          const answer = await api.request(CM, { method: 'POST', body: configMap('twice', { x: '1' }) });
          expect((answer.json as { data: unknown }).data).toEqual({ x: '1', a: 'true', b: '1' });
        });
      });
    });
  });
}
