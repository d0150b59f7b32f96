import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ token: 'admin-token' });
});
afterAll(async () => {
  await server.close();
});

const NS = '/api/v1/namespaces/default';

async function createPod(name: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await server.request(`${NS}/pods`, {
    method: 'POST',
    body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra } },
  });
  expect(res.status, res.text).toBe(201);
}

describe('deprecated watch paths (the Ruby client and older clients use them)', () => {
  it('/api/v1/watch/namespaces/NS/configmaps streams like ?watch=true, and …/watch/…/NAME watches one object', async () => {
    for (const name of ['w1', 'w2'])
      await server.request(`${NS}/configmaps`, { method: 'POST', body: { metadata: { name } } });
    const all = await server.watch('/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=1');
    expect(all.status).toBe(200);
    await all.ended;
    const names = all.events.map((e) => `${e.type} ${(e.object.metadata as { name: string }).name}`);
    expect(names).toEqual(expect.arrayContaining(['ADDED w1', 'ADDED w2']));
    const one = await server.watch('/api/v1/watch/namespaces/default/configmaps/w2?timeoutSeconds=1');
    await one.ended;
    expect(one.events.map((e) => (e.object.metadata as { name: string }).name)).toEqual(['w2']);
    const cluster = await server.watch('/api/v1/watch/configmaps?timeoutSeconds=1');
    await cluster.ended;
    expect(cluster.events.length).toBeGreaterThanOrEqual(2);
    const group = await server.watch('/apis/apps/v1/watch/namespaces/default/deployments?timeoutSeconds=1');
    expect(group.status).toBe(200);
    await group.ended;
  });

  it('answers 405 to other methods, 404 to a subresource or a named object at the cluster path', async () => {
    expect(
      (await server.request('/api/v1/watch/namespaces/default/configmaps', { method: 'POST', body: {} }))
        .status,
    ).toBe(405);
    expect((await server.request('/api/v1/watch/namespaces/default/configmaps/w1/status')).status).toBe(404);
    expect((await server.request('/api/v1/watch/configmaps/w1')).status).toBe(404);
    expect((await server.request('/api/v1/watch')).status).toBe(404);
  });
});

describe('access reviews', () => {
  it('the admin token is allowed everything (SelfSubjectAccessReview 201, status.allowed)', async () => {
    const res = await server.request('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: {
            namespace: 'default',
            verb: 'create',
            group: 'apps',
            resource: 'deployments',
          },
        },
      },
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: {
        resourceAttributes: { namespace: 'default', verb: 'create', group: 'apps', resource: 'deployments' },
      },
      status: { allowed: true },
    });
  });

  it('a review with neither or both attribute kinds is a 422 as upstream', async () => {
    const res = await server.request('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST',
      body: { spec: {} },
    });
    expect(res.status).toBe(422);
    expect((res.json as { message: string }).message).toBe(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  });

  it('SelfSubjectRulesReview needs a namespace (400 no namespace on request), and lists all rules for the admin', async () => {
    const url = '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews';
    const missing = await server.request(url, { method: 'POST', body: { spec: {} } });
    expect([missing.status, (missing.json as { message: string }).message]).toEqual([
      400,
      'no namespace on request',
    ]);
    const res = await server.request(url, { method: 'POST', body: { spec: { namespace: 'default' } } });
    expect(res.status).toBe(201);
    // everything first (system:masters), then what bootstrap policy gives every authenticated user
    const status = (res.json as { status: { resourceRules: unknown[]; nonResourceRules: unknown[] } }).status;
    expect(status).toMatchObject({ incomplete: false });
    expect(status.resourceRules[0]).toEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    expect(status.nonResourceRules[0]).toEqual({ verbs: ['*'], nonResourceURLs: ['*'] });
    expect(status.resourceRules).toContainEqual({
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    });
  });

  it('LocalSubjectAccessReview: the spec namespace must match the request’s (422 as upstream), then decides', async () => {
    const url = '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews';
    const review = (namespace: string) => ({
      spec: { user: 'jane', resourceAttributes: { namespace, verb: 'get', resource: 'pods' } },
    });
    const wrong = await server.request(url, { method: 'POST', body: review('other') });
    expect([wrong.status, (wrong.json as { message: string }).message]).toEqual([
      422,
      'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
    ]);
    const right = await server.request(url, { method: 'POST', body: review('default') });
    expect([right.status, (right.json as { status: unknown }).status]).toEqual([201, { allowed: false }]);
  });

  it('GET on a review kind is a 405; only create is served', async () => {
    expect((await server.request('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).status).toBe(405);
  });
});

describe('ServiceAccount tokens', () => {
  it('TokenRequest issues an ES256 JWT that TokenReview accepts and that authenticates as the ServiceAccount', async () => {
    await server.request(`${NS}/serviceaccounts`, { method: 'POST', body: { metadata: { name: 'robot' } } });
    const res = await server.request(`${NS}/serviceaccounts/robot/token`, {
      method: 'POST',
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      },
    });
    expect(res.status, res.text).toBe(201);
    const issued = res.json as { status: { token: string; expirationTimestamp: string }; spec: unknown };
    expect(issued.spec).toEqual({
      audiences: ['https://kubernetes.default.svc.cluster.local'],
      expirationSeconds: 600,
      boundObjectRef: null,
    });
    const token = issued.status.token;
    const header = JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()) as {
      alg: string;
    };
    expect(header.alg).toBe('ES256');
    const review = await server.request('/apis/authentication.k8s.io/v1/tokenreviews', {
      method: 'POST',
      body: { spec: { token } },
    });
    expect(review.status).toBe(201);
    const status = (
      review.json as { status: { authenticated: boolean; user: { username: string; groups: string[] } } }
    ).status;
    expect(status.authenticated).toBe(true);
    expect(status.user.username).toBe('system:serviceaccount:default:robot');
    expect(status.user.groups).toEqual([
      'system:serviceaccounts',
      'system:serviceaccounts:default',
      'system:authenticated',
    ]);

    // the token authenticates; RBAC-less, the ServiceAccount may only discover and review itself
    const who = await server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      token,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(who.status).toBe(201);
    expect((who.json as { status: { userInfo: { username: string } } }).status.userInfo.username).toBe(
      'system:serviceaccount:default:robot',
    );
    const denied = await server.request(`${NS}/pods`, { token });
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods is forbidden: User "system:serviceaccount:default:robot" cannot list resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    expect((await server.request('/api', { token })).status).toBe(200);

    // a deleted ServiceAccount's token is no longer accepted
    await server.request(`${NS}/serviceaccounts/robot`, { method: 'DELETE' });
    const after = await server.request('/apis/authentication.k8s.io/v1/tokenreviews', {
      method: 'POST',
      body: { spec: { token } },
    });
    expect((after.json as { status: Record<string, unknown> }).status).toEqual({
      user: {},
      error: '[invalid bearer token, service account default/robot has been deleted]',
    });
  });

  it('rejects a duration under 10 minutes (422) and a missing ServiceAccount (404)', async () => {
    await server.request(`${NS}/serviceaccounts`, { method: 'POST', body: { metadata: { name: 'short' } } });
    const res = await server.request(`${NS}/serviceaccounts/short/token`, {
      method: 'POST',
      body: { spec: { expirationSeconds: 60 } },
    });
    expect(res.status).toBe(422);
    expect((res.json as { message: string }).message).toBe(
      'TokenRequest.authentication.k8s.io "short" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    );
    const missing = await server.request(`${NS}/serviceaccounts/nobody/token`, { method: 'POST', body: {} });
    expect(missing.status).toBe(404);
  });

  it('TokenReview without a token is a 400; an unknown token is not authenticated', async () => {
    const url = '/apis/authentication.k8s.io/v1/tokenreviews';
    const empty = await server.request(url, { method: 'POST', body: { spec: {} } });
    expect([empty.status, (empty.json as { message: string }).message]).toEqual([
      400,
      'token is required for TokenReview in authentication',
    ]);
    const unknown = await server.request(url, { method: 'POST', body: { spec: { token: 'nope' } } });
    expect((unknown.json as { status: unknown }).status).toEqual({ user: {} });
    const admin = await server.request(url, { method: 'POST', body: { spec: { token: 'admin-token' } } });
    expect((admin.json as { status: { authenticated: boolean } }).status.authenticated).toBe(true);
  });

  it('malformed review and token request bodies are 400/422 Statuses, never 500 (fast-check)', async () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const bodies = fc.oneof(
      json,
      fc.record({ spec: json }),
      fc.record({
        spec: fc.record({ resourceAttributes: json, nonResourceAttributes: json }, { requiredKeys: [] }),
      }),
      fc.record({
        spec: fc.record(
          { token: json, audiences: json, expirationSeconds: json, namespace: json },
          { requiredKeys: [] },
        ),
      }),
    );
    await server.request(`${NS}/serviceaccounts`, { method: 'POST', body: { metadata: { name: 'fuzz' } } });
    const urls = [
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      '/apis/authentication.k8s.io/v1/tokenreviews',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      `${NS}/serviceaccounts/fuzz/token`,
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...urls), bodies, async (url, body) => {
        const res = await server.request(url, {
          method: 'POST',
          raw: JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        });
        expect([200, 201, 400, 422], `${url} ${JSON.stringify(body)} → ${res.text}`).toContain(res.status);
        if (res.status >= 400) expect((res.json as { kind: string }).kind).toBe('Status');
      }),
      { numRuns: 150 },
    );
  });
});

describe('pod subresources of a pod without a node', () => {
  it('log is a 204 No Content (LogLocation finds no node, as kube-apiserver); exec, attach and portforward are 400 does not have a host assigned', async () => {
    await createPod('idle');
    const log = await server.request(`${NS}/pods/idle/log`);
    expect([log.status, log.text, log.headers['content-type']]).toEqual([204, '', undefined]);
    for (const sub of ['exec?command=ls&stdout=true', 'attach?stdout=true', 'portforward?ports=80']) {
      const res = await server.request(`${NS}/pods/idle/${sub}`, { method: 'POST' });
      expect(res.status).toBe(400);
      expect((res.json as { message: string }).message).toBe('pod idle does not have a host assigned');
    }
    const wrong = await server.request(`${NS}/pods/idle/log?container=nope`);
    expect([wrong.status, (wrong.json as { message: string }).message]).toEqual([
      400,
      'container nope is not valid for pod idle',
    ]);
    expect((await server.request(`${NS}/pods/missing/log`)).status).toBe(404);
    const options = await server.request(`${NS}/pods/idle/log?tailLines=-1&limitBytes=0`);
    expect([options.status, (options.json as { message: string }).message]).toEqual([
      422,
      'PodLogOptions "idle" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]',
    ]);
    expect((await server.request(`${NS}/pods/idle/log?tailLines=x`)).status).toBe(400);
    const follow = await server.request(`${NS}/pods/idle/log?tailLines=5&follow=true`);
    expect([follow.status, follow.text]).toEqual([204, '']);
  });

  it('answers any query on log, exec, attach and portforward with a 200 or a 4xx Status, never a 5xx (fast-check)', async () => {
    await createPod('fuzzed');
    const key = fc.constantFrom(
      'container',
      'tailLines',
      'limitBytes',
      'sinceSeconds',
      'sinceTime',
      'follow',
      'command',
      'stdin',
      'ports',
      'x',
    );
    const value = fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('c', '-1', '0', 'true'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('log', 'exec', 'attach', 'portforward'),
        fc.constantFrom('GET', 'POST'),
        fc.array(fc.tuple(key, value), { maxLength: 4 }),
        async (sub, method, params) => {
          const query = new URLSearchParams(params).toString();
          const res = await server.request(`${NS}/pods/fuzzed/${sub}?${query}`, { method });
          expect(res.status, `${method} ${sub}?${query} → ${res.text}`).toBeLessThan(500);
          if (res.status >= 400) expect((res.json as { kind: string }).kind).toBe('Status');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('binding sets spec.nodeName once (201 Success), then 409 already assigned', async () => {
    await createPod('tobind');
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'tobind', annotations: { a: 'b' } },
      target: { kind: 'Node', name: 'node-1' },
    };
    const first = await server.request(`${NS}/pods/tobind/binding`, { method: 'POST', body });
    expect([first.status, (first.json as { status: string }).status]).toEqual([201, 'Success']);
    const pod = (await server.request(`${NS}/pods/tobind`)).json as {
      spec: { nodeName: string };
      metadata: { annotations: Record<string, string> };
      status: { conditions: { type: string; status: string }[] };
    };
    expect(pod.spec.nodeName).toBe('node-1');
    expect(pod.metadata.annotations.a).toBe('b');
    expect(pod.status.conditions.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    const again = await server.request(`${NS}/pods/tobind/binding`, { method: 'POST', body });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on pods/binding "tobind": pod tobind is already assigned to node "node-1"',
      details: { name: 'tobind', kind: 'pods/binding' },
    });
    const mismatch = await server.request(`${NS}/pods/tobind/binding`, {
      method: 'POST',
      body: { ...body, metadata: { name: 'other' } },
    });
    expect([mismatch.status, (mismatch.json as { message: string }).message]).toEqual([
      400,
      'name in URL does not match name in Binding object',
    ]);
    // a bound pod's node does not exist here: upstream looks the Node up first
    const exec = await server.request(`${NS}/pods/tobind/exec?command=ls`, { method: 'POST' });
    expect(exec.status).toBe(404);
  });

  it('the legacy bindings collection binds the pod the Binding names (create only)', async () => {
    await createPod('legacy');
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'legacy' },
      target: { name: 'node-2' },
    };
    const res = await server.request(`${NS}/bindings`, { method: 'POST', body });
    expect([res.status, (res.json as { status: string }).status]).toEqual([201, 'Success']);
    const pod = (await server.request(`${NS}/pods/legacy`)).json as { spec: { nodeName: string } };
    expect(pod.spec.nodeName).toBe('node-2');
    expect((await server.request(`${NS}/bindings`, { method: 'POST', body })).status).toBe(409);
    expect((await server.request(`${NS}/bindings`)).status).toBe(405);
    const missing = await server.request(`${NS}/bindings`, {
      method: 'POST',
      body: { ...body, metadata: { name: 'nope' } },
    });
    expect(missing.status).toBe(404);
  });
});

describe('impersonation', () => {
  it('needs the impersonate verb: a ServiceAccount may not act as another user (403 as upstream)', async () => {
    await server.request(`${NS}/serviceaccounts`, { method: 'POST', body: { metadata: { name: 'actor' } } });
    const issued = await server.request(`${NS}/serviceaccounts/actor/token`, { method: 'POST', body: {} });
    const token = (issued.json as { status: { token: string } }).status.token;
    const res = await server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      token,
      headers: { 'impersonate-user': 'jane' },
      body: {},
    });
    expect(res.status).toBe(403);
    expect((res.json as { message: string }).message).toBe(
      'users "jane" is forbidden: User "system:serviceaccount:default:actor" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const groupsOnly = await server.request('/api', { headers: { 'impersonate-group': 'devs' } });
    expect(groupsOnly.status).toBe(500);
  });
});

describe('discovery of the subresources served here', () => {
  it('lists pods/attach, binding, exec, log, portforward and serviceaccounts/token as kube-apiserver does', async () => {
    const legacy = (await server.request('/api/v1')).json as {
      resources: { name: string; kind: string; group?: string; verbs: string[] }[];
    };
    const pods = legacy.resources
      .filter((r) => r.name.startsWith('pods/'))
      .map((r) => `${r.name} ${r.kind} ${r.verbs.join(',')}`);
    expect(pods).toEqual(
      expect.arrayContaining([
        'pods/attach PodAttachOptions create,get',
        'pods/binding Binding create',
        'pods/exec PodExecOptions create,get',
        'pods/log Pod get',
        'pods/portforward PodPortForwardOptions create,get',
        'pods/status Pod get,patch,update',
      ]),
    );
    expect(legacy.resources.find((r) => r.name === 'serviceaccounts/token')).toMatchObject({
      group: 'authentication.k8s.io',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
    const aggregated = (
      await server.request('/api', {
        headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
      })
    ).json as {
      items: {
        versions: {
          resources: { resource: string; subresources?: { subresource: string; responseKind: unknown }[] }[];
        }[];
      }[];
    };
    const sa = aggregated.items[0]?.versions[0]?.resources.find((r) => r.resource === 'serviceaccounts');
    expect(sa?.subresources).toEqual([
      {
        subresource: 'token',
        responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
        verbs: ['create'],
      },
    ]);
  });
});
