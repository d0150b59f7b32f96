/**
 * The embedded API server's RBAC authorizer over real HTTP: ServiceAccount tokens get exactly what
 * the stored Roles and ClusterRoles bound to them grant (resource names, subresources,
 * non-resource URLs, aggregation, groups), denials carry kube-apiserver's 403, the admin token
 * stays all-powerful, and the access reviews answer from the same rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import {
  ADMIN_TOKEN,
  admin,
  binding,
  eventually,
  RBAC,
  role,
  serviceAccount,
  startRbacServer,
  until,
} from './support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startRbacServer();
});
afterAll(async () => {
  await server.close();
});

const sa = (namespace: string, name: string) => ({ kind: 'ServiceAccount', name, namespace });

describe('a ServiceAccount token under RBAC', () => {
  it('is denied with kube-apiserver 403, allowed once a Role and RoleBinding exist, denied again when the binding goes', async () => {
    const token = await serviceAccount(server, 'team-a', 'deployer');
    const path = '/apis/apps/v1/namespaces/team-a/deployments/web';
    const denied = await server.request(path, { method: 'PUT', body: { metadata: { name: 'web' } }, token });
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'deployments.apps "web" is forbidden: User "system:serviceaccount:team-a:deployer" cannot update resource "deployments" in API group "apps" in the namespace "team-a"',
      reason: 'Forbidden',
      details: { name: 'web', group: 'apps', kind: 'deployments' },
      code: 403,
    });
    const list = await server.request('/api/v1/namespaces/team-a/pods', { token });
    expect((list.json as { message: string }).message).toBe(
      'pods is forbidden: User "system:serviceaccount:team-a:deployer" cannot list resource "pods" in API group "" in the namespace "team-a"',
    );
    await admin(server, `${RBAC}/namespaces/team-a/roles`, {
      method: 'POST',
      body: role('deployments', [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'update', 'list'] },
      ]),
      expect: 201,
    });
    // the Role alone grants nothing
    expect((await server.request(path, { token })).status).toBe(403);
    await admin(server, `${RBAC}/namespaces/team-a/rolebindings`, {
      method: 'POST',
      body: binding('deployer', { kind: 'Role', name: 'deployments' }, [sa('team-a', 'deployer')]),
      expect: 201,
    });
    const allowed = await until(server, token, path, true);
    expect(allowed.status).toBe(404); // allowed: the handler answers (there is no such Deployment)
    expect((await server.request('/apis/apps/v1/namespaces/team-a/deployments', { token })).status).toBe(200);
    // not granted: delete, other resources, other namespaces, the cluster scope
    expect((await server.request(path, { method: 'DELETE', token })).status).toBe(403);
    expect((await server.request('/apis/apps/v1/namespaces/team-a/statefulsets', { token })).status).toBe(
      403,
    );
    expect((await server.request('/apis/apps/v1/namespaces/default/deployments', { token })).status).toBe(
      403,
    );
    expect((await server.request('/apis/apps/v1/deployments', { token })).status).toBe(403);
    await admin(server, `${RBAC}/namespaces/team-a/rolebindings/deployer`, { method: 'DELETE', expect: 200 });
    await until(server, token, path, false);
  });

  it('a ClusterRole bound by a RoleBinding grants only in the binding’s namespace', async () => {
    const token = await serviceAccount(server, 'team-b', 'reader');
    await admin(server, `${RBAC}/clusterroles`, {
      method: 'POST',
      body: role('configmap-reader', [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-b/rolebindings`, {
      method: 'POST',
      body: binding('reader', { kind: 'ClusterRole', name: 'configmap-reader' }, [
        { kind: 'ServiceAccount', name: 'reader' },
      ]),
      expect: 201,
    });
    await until(server, token, '/api/v1/namespaces/team-b/configmaps', true);
    expect((await server.request('/api/v1/namespaces/default/configmaps', { token })).status).toBe(403);
    expect((await server.request('/api/v1/configmaps', { token })).status).toBe(403);
    // a ClusterRoleBinding grants everywhere
    await admin(server, `${RBAC}/clusterrolebindings`, {
      method: 'POST',
      body: binding('reader-everywhere', { kind: 'ClusterRole', name: 'configmap-reader' }, [
        sa('team-b', 'reader'),
      ]),
      expect: 201,
    });
    await until(server, token, '/api/v1/configmaps', true);
    expect((await server.request('/api/v1/namespaces/default/configmaps', { token })).status).toBe(200);
  });

  it('resourceNames: only requests naming a listed object match (not list, create or deletecollection)', async () => {
    const token = await serviceAccount(server, 'team-c', 'named');
    await admin(server, '/api/v1/namespaces/team-c/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-c/roles`, {
      method: 'POST',
      body: role('settings', [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          resourceNames: ['settings'],
          verbs: ['get', 'update', 'list', 'create', 'deletecollection'],
        },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-c/rolebindings`, {
      method: 'POST',
      body: binding('named', { kind: 'Role', name: 'settings' }, [sa('team-c', 'named')]),
      expect: 201,
    });
    const got = await until(server, token, '/api/v1/namespaces/team-c/configmaps/settings', true);
    expect(got.status).toBe(200);
    const cm = got.json as Record<string, unknown>;
    const updated = await server.request('/api/v1/namespaces/team-c/configmaps/settings', {
      method: 'PUT',
      body: { ...cm, data: { a: '2' } },
      token,
    });
    expect(updated.status, updated.text).toBe(200);
    expect((await server.request('/api/v1/namespaces/team-c/configmaps/other', { token })).status).toBe(403);
    expect((await server.request('/api/v1/namespaces/team-c/configmaps', { token })).status).toBe(403);
    const create = await server.request('/api/v1/namespaces/team-c/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'settings' } },
      token,
    });
    expect(create.status).toBe(403);
    expect(
      (await server.request('/api/v1/namespaces/team-c/configmaps', { method: 'DELETE', token })).status,
    ).toBe(403);
  });

  it('subresources: deployments/scale, pods/log and */status grant the subresource, not the object', async () => {
    const token = await serviceAccount(server, 'team-d', 'scaler');
    await admin(server, `${RBAC}/namespaces/team-d/roles`, {
      method: 'POST',
      body: role('subresources', [
        { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'update'] },
        { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
        { apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] },
        // `resource/*` is no wildcard in RBAC: it matches a subresource literally named `*`
        { apiGroups: [''], resources: ['services/*'], verbs: ['get'] },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-d/rolebindings`, {
      method: 'POST',
      body: binding('scaler', { kind: 'Role', name: 'subresources' }, [sa('team-d', 'scaler')]),
      expect: 201,
    });
    const ns = '/namespaces/team-d';
    await until(server, token, `/apis/apps/v1${ns}/deployments/web/scale`, true);
    const status = (path: string) => server.request(path, { token }).then((r) => r.status);
    expect(await status(`/apis/apps/v1${ns}/deployments/web`)).toBe(403);
    expect(await status(`/api/v1${ns}/pods/p/log`)).not.toBe(403);
    expect(await status(`/api/v1${ns}/pods/p`)).toBe(403);
    expect(await status(`/api/v1${ns}/pods/p/exec`)).toBe(403);
    expect(await status(`/apis/apps/v1${ns}/deployments/web/status`)).not.toBe(403);
    expect(await status(`/api/v1${ns}/pods/p/status`)).not.toBe(403);
    expect(await status(`/api/v1${ns}/services/s/status`)).not.toBe(403);
    expect(await status(`/api/v1${ns}/services/s/proxy`)).toBe(403);
    const denied = await server.request(`/apis/apps/v1${ns}/deployments/web/scale`, {
      method: 'PATCH',
      token,
      body: {},
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((denied.json as { message: string }).message).toBe(
      'deployments.apps "web" is forbidden: User "system:serviceaccount:team-d:scaler" cannot patch resource "deployments/scale" in API group "apps" in the namespace "team-d"',
    );
  });

  it('non-resource URLs: exact paths and trailing-* prefixes from a ClusterRole', async () => {
    const token = await serviceAccount(server, 'team-e', 'urls');
    const path = '/converge-rbac-test/reports/daily';
    const denied = await server.request(path, { token });
    expect([denied.status, (denied.json as { message: string }).message]).toEqual([
      403,
      `forbidden: User "system:serviceaccount:team-e:urls" cannot get path "${path}"`,
    ]);
    // every authenticated user reads discovery and health (bootstrap policy)
    expect((await server.request('/apis', { token })).status).toBe(200);
    expect((await server.request('/healthz', { token })).status).toBe(200);
    await admin(server, `${RBAC}/clusterroles`, {
      method: 'POST',
      body: role('reports', [
        { nonResourceURLs: ['/converge-rbac-test/reports/*', '/converge-rbac-test/exact'], verbs: ['get'] },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/clusterrolebindings`, {
      method: 'POST',
      body: binding('urls', { kind: 'ClusterRole', name: 'reports' }, [sa('team-e', 'urls')]),
      expect: 201,
    });
    await until(server, token, path, true);
    expect((await server.request('/converge-rbac-test/exact', { token })).status).not.toBe(403);
    expect((await server.request('/converge-rbac-test/exact/more', { token })).status).toBe(403);
    expect((await server.request('/converge-rbac-test/reportsX', { token })).status).toBe(403);
  });

  it('aggregation: rules of a ClusterRole labelled to aggregate appear in the bound role', async () => {
    const token = await serviceAccount(server, 'team-f', 'aggregated');
    await admin(server, `${RBAC}/clusterroles`, {
      method: 'POST',
      body: {
        metadata: { name: 'operator-aggregate' },
        aggregationRule: {
          clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-operator': 'true' } }],
        },
      },
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-f/rolebindings`, {
      method: 'POST',
      body: binding('aggregated', { kind: 'ClusterRole', name: 'operator-aggregate' }, [
        sa('team-f', 'aggregated'),
      ]),
      expect: 201,
    });
    expect((await server.request('/api/v1/namespaces/team-f/secrets', { token })).status).toBe(403);
    await admin(server, `${RBAC}/clusterroles`, {
      method: 'POST',
      body: role('operator-secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }], {
        'example.com/aggregate-to-operator': 'true',
      }),
      expect: 201,
    });
    await until(server, token, '/api/v1/namespaces/team-f/secrets', true);
  });

  it('groups: bindings to system:serviceaccounts:NS and system:serviceaccounts apply to the namespace’s accounts', async () => {
    const token = await serviceAccount(server, 'team-g', 'member');
    await admin(server, `${RBAC}/namespaces/team-g/roles`, {
      method: 'POST',
      body: role('events', [{ apiGroups: [''], resources: ['events'], verbs: ['list'] }]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-g/rolebindings`, {
      method: 'POST',
      body: binding('all-accounts', { kind: 'Role', name: 'events' }, [
        { kind: 'Group', name: 'system:serviceaccounts:team-g', apiGroup: 'rbac.authorization.k8s.io' },
      ]),
      expect: 201,
    });
    await until(server, token, '/api/v1/namespaces/team-g/events', true);
    await admin(server, `${RBAC}/clusterroles`, {
      method: 'POST',
      body: role('node-lister', [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }]),
      expect: 201,
    });
    await admin(server, `${RBAC}/clusterrolebindings`, {
      method: 'POST',
      body: binding('every-account', { kind: 'ClusterRole', name: 'node-lister' }, [
        { kind: 'Group', name: 'system:serviceaccounts', apiGroup: 'rbac.authorization.k8s.io' },
      ]),
      expect: 201,
    });
    await until(server, token, '/api/v1/nodes', true);
  });

  it('a binding of a role that does not exist grants nothing, and the 403 says why', async () => {
    const token = await serviceAccount(server, 'team-h', 'orphan');
    await admin(server, `${RBAC}/namespaces/team-h/rolebindings`, {
      method: 'POST',
      body: binding('orphan', { kind: 'ClusterRole', name: 'no-such-role' }, [sa('team-h', 'orphan')]),
      expect: 201,
    });
    const res = await eventually('the missing role named in the 403', async () => {
      const r = await server.request('/api/v1/namespaces/team-h/pods', { token });
      return (r.json as { message: string }).message.includes('no-such-role') ? r : undefined;
    });
    expect([res.status, (res.json as { message: string }).message]).toEqual([
      403,
      'pods is forbidden: User "system:serviceaccount:team-h:orphan" cannot list resource "pods" in API group "" in the namespace "team-h": RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found',
    ]);
    const rules = await server.request('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      method: 'POST',
      body: { spec: { namespace: 'team-h' } },
      token,
    });
    expect(rules.json).toMatchObject({
      status: {
        incomplete: false,
        evaluationError: 'clusterrole.rbac.authorization.k8s.io "no-such-role" not found',
      },
    });
  });

  it('bootstrap view/edit/admin: aggregated from system:aggregate-to-*, bound per namespace', async () => {
    const token = await serviceAccount(server, 'team-i', 'viewer');
    const view = await eventually('view aggregated', async () => {
      const r = await admin(server, `${RBAC}/clusterroles/view`);
      const rules = (r.json as { rules?: unknown[] }).rules ?? [];
      return rules.length > 0
        ? (r.json as { rules: { resources?: string[]; verbs: string[] }[] })
        : undefined;
    });
    expect(view.rules.some((r) => r.resources?.includes('pods') === true && r.verbs.includes('list'))).toBe(
      true,
    );
    expect(view.rules.some((r) => r.resources?.includes('secrets') === true)).toBe(false);
    await admin(server, `${RBAC}/namespaces/team-i/rolebindings`, {
      method: 'POST',
      body: binding('viewer', { kind: 'ClusterRole', name: 'view' }, [sa('team-i', 'viewer')]),
      expect: 201,
    });
    await until(server, token, '/api/v1/namespaces/team-i/pods', true);
    expect((await server.request('/api/v1/namespaces/team-i/secrets', { token })).status).toBe(403);
    expect(
      (await server.request('/api/v1/namespaces/team-i/pods', { method: 'POST', token, body: {} })).status,
    ).toBe(403);
    // edit (and admin, into which edit aggregates) may write Deployments
    const edit = await eventually('edit and admin aggregated', async () => {
      const roles = await Promise.all(
        ['edit', 'admin'].map((n) => admin(server, `${RBAC}/clusterroles/${n}`)),
      );
      const ok = roles.every((r) =>
        ((r.json as { rules?: { resources?: string[]; verbs: string[] }[] }).rules ?? []).some(
          (rule) => rule.resources?.includes('deployments') === true && rule.verbs.includes('update'),
        ),
      );
      return ok ? true : undefined;
    });
    expect(edit).toBe(true);
  });
});

describe('the admin and impersonation', () => {
  it('the admin token may do everything; impersonating a ServiceAccount gets only its rights', async () => {
    await serviceAccount(server, 'team-j', 'imp');
    expect((await server.request('/api/v1/secrets', { token: ADMIN_TOKEN })).status).toBe(200);
    const as = { 'Impersonate-User': 'system:serviceaccount:team-j:imp' };
    const denied = await server.request('/api/v1/namespaces/team-j/secrets', { headers: as });
    expect((denied.json as { message: string }).message).toBe(
      'secrets is forbidden: User "system:serviceaccount:team-j:imp" cannot list resource "secrets" in API group "" in the namespace "team-j"',
    );
    await admin(server, `${RBAC}/namespaces/team-j/roles`, {
      method: 'POST',
      body: role('secrets', [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-j/rolebindings`, {
      method: 'POST',
      body: binding('imp', { kind: 'Role', name: 'secrets' }, [sa('team-j', 'imp')]),
      expect: 201,
    });
    await eventually('impersonated list allowed', async () => {
      const r = await server.request('/api/v1/namespaces/team-j/secrets', { headers: as });
      return r.status === 200 ? r : undefined;
    });
    // a user bound by name, impersonated with a group
    const jane = { 'Impersonate-User': 'jane', 'Impersonate-Group': 'auditors' };
    expect((await server.request('/api/v1/namespaces/team-j/secrets', { headers: jane })).status).toBe(403);
    await admin(server, `${RBAC}/namespaces/team-j/rolebindings`, {
      method: 'POST',
      body: binding('auditors', { kind: 'Role', name: 'secrets' }, [
        { kind: 'Group', name: 'auditors', apiGroup: 'rbac.authorization.k8s.io' },
      ]),
      expect: 201,
    });
    await eventually('group binding applies', async () => {
      const r = await server.request('/api/v1/namespaces/team-j/secrets', { headers: jane });
      return r.status === 200 ? r : undefined;
    });
  });
});

describe('access reviews answer from RBAC', () => {
  it('SubjectAccessReview names the granting binding; SelfSubjectRulesReview lists the namespace’s rules', async () => {
    const token = await serviceAccount(server, 'team-k', 'reviewed');
    await admin(server, `${RBAC}/namespaces/team-k/roles`, {
      method: 'POST',
      body: role('cm', [
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'], verbs: ['get'] },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/team-k/rolebindings`, {
      method: 'POST',
      body: binding('reviewed', { kind: 'Role', name: 'cm' }, [sa('team-k', 'reviewed')]),
      expect: 201,
    });
    const sar = (name: string) =>
      admin(server, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        method: 'POST',
        body: {
          spec: {
            user: 'system:serviceaccount:team-k:reviewed',
            groups: ['system:serviceaccounts', 'system:serviceaccounts:team-k', 'system:authenticated'],
            resourceAttributes: { namespace: 'team-k', verb: 'get', resource: 'configmaps', name },
          },
        },
        expect: 201,
      });
    const allowed = await eventually('SAR allowed', async () => {
      const r = await sar('one');
      return (r.json as { status: { allowed: boolean } }).status.allowed ? r : undefined;
    });
    expect((allowed.json as { status: unknown }).status).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "reviewed/team-k" of Role "cm" to ServiceAccount "reviewed/team-k"',
    });
    expect(((await sar('two')).json as { status: unknown }).status).toEqual({ allowed: false });
    const rules = await server.request('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      method: 'POST',
      body: { spec: { namespace: 'team-k' } },
      token,
    });
    expect(rules.status).toBe(201);
    const status = (
      rules.json as { status: { resourceRules: unknown[]; nonResourceRules: unknown[]; incomplete: boolean } }
    ).status;
    expect(status.resourceRules).toContainEqual({
      verbs: ['get'],
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: ['one'],
    });
    expect(status.resourceRules).toContainEqual({
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    });
    expect(status.nonResourceRules.length).toBeGreaterThan(0);
    expect(status.incomplete).toBe(false);
    // another namespace: only the bootstrap rules
    const other = await server.request('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      method: 'POST',
      body: { spec: { namespace: 'default' } },
      token,
    });
    expect(JSON.stringify(other.json)).not.toContain('configmaps');
  });
});
