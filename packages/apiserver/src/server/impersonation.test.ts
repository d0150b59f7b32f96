/**
 * `Impersonate-Extra-<key>` as kube-apiserver's impersonation filter reads it: the key
 * percent-decoded (kept as sent when malformed), each value checked with the `impersonate` verb on
 * `userextras/<key>` in `authentication.k8s.io` (the value as the name), the extras handed to
 * the request's user.
 */
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
const POD_NAME = 'authentication.kubernetes.io/pod-name';
const OPERATOR = 'system:serviceaccount:default:operator';

async function whoami(headers: Record<string, string>, token?: string) {
  return server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    method: 'POST',
    headers,
    body: {},
    ...(token === undefined ? {} : { token }),
  });
}

async function tokenOf(name: string): Promise<string> {
  await server.request(`${NS}/serviceaccounts`, { method: 'POST', body: { metadata: { name } } });
  const issued = await server.request(`${NS}/serviceaccounts/${name}/token`, { method: 'POST', body: {} });
  return (issued.json as { status: { token: string } }).status.token;
}

describe('Impersonate-Extra-*', () => {
  it('gives the impersonated user the extras, the key percent-decoded', async () => {
    const res = await whoami({
      'impersonate-user': OPERATOR,
      'impersonate-extra-authentication.kubernetes.io%2fpod-name': 'operator-7d9f-abcde',
      'impersonate-extra-scopes': 'view',
    });
    expect(res.status, res.text).toBe(201);
    expect((res.json as { status: { userInfo: unknown } }).status.userInfo).toEqual({
      username: OPERATOR,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'],
      extra: { [POD_NAME]: ['operator-7d9f-abcde'], scopes: ['view'] },
    });
  });

  it('keeps a key whose percent-encoding is malformed as it was sent', async () => {
    const res = await whoami({ 'impersonate-user': 'jane', 'impersonate-extra-bad%zzkey': 'v' });
    expect(res.status, res.text).toBe(201);
    expect((res.json as { status: { userInfo: { extra: unknown } } }).status.userInfo.extra).toEqual({
      'bad%zzkey': ['v'],
    });
  });

  it('needs impersonate on userextras/<key> for each value: a ServiceAccount allowed one pod name only', async () => {
    const token = await tokenOf('impersonator');
    const rules = [
      { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
      {
        apiGroups: ['authentication.k8s.io'],
        resources: [`userextras/${POD_NAME}`],
        resourceNames: ['pod-a'],
        verbs: ['impersonate'],
      },
    ];
    await server.request('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      method: 'POST',
      body: { metadata: { name: 'impersonate-pod-a' }, rules },
    });
    await server.request('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      method: 'POST',
      body: {
        metadata: { name: 'impersonate-pod-a' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-pod-a' },
        subjects: [{ kind: 'ServiceAccount', name: 'impersonator', namespace: 'default' }],
      },
    });
    const headers = (pod: string) => ({
      'impersonate-user': OPERATOR,
      'impersonate-extra-authentication.kubernetes.io%2Fpod-name': pod,
    });
    const allowed = await whoami(headers('pod-a'), token);
    expect(allowed.status, allowed.text).toBe(201);
    expect((allowed.json as { status: { userInfo: { extra: unknown } } }).status.userInfo.extra).toEqual({
      [POD_NAME]: ['pod-a'],
    });
    const refused = await whoami(headers('pod-b'), token);
    expect(refused.status).toBe(403);
    expect((refused.json as { message: string }).message).toBe(
      `userextras.authentication.k8s.io "pod-b" is forbidden: User "system:serviceaccount:default:impersonator" cannot impersonate resource "userextras/${POD_NAME}" in API group "authentication.k8s.io" at the cluster scope`,
    );
    // The user alone is allowed; an extra without the verb on its key is not.
    expect((await whoami({ 'impersonate-user': OPERATOR }, token)).status).toBe(201);
    const other = await whoami({ 'impersonate-user': OPERATOR, 'impersonate-extra-scopes': 'view' }, token);
    expect(other.status).toBe(403);
  });

  it('an extra without Impersonate-User is refused, as upstream', async () => {
    const res = await server.request('/api', { headers: { 'impersonate-extra-scopes': 'view' } });
    expect(res.status).toBe(500);
  });
});
