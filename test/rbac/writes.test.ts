/**
 * Writes of RBAC objects over HTTP: malformed Roles and bindings are refused with 4xx (never 5xx,
 * by the admin or by a ServiceAccount allowed to write them), and privilege escalation is
 * prevented as kube-apiserver does — a ServiceAccount may only grant what it holds, unless it may
 * `escalate` a role or `bind` it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { admin, binding, eventually, RBAC, role, serviceAccount, startRbacServer } from './support.ts';

let server: TestServer;
let writerToken: string;
beforeAll(async () => {
  server = await startRbacServer();
  writerToken = await serviceAccount(server, 'w', 'writer');
  // the writer may write Roles and RoleBindings and read pods in `w`, nothing else
  await admin(server, `${RBAC}/namespaces/w/roles`, {
    method: 'POST',
    body: role('rbac-writer', [
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['roles', 'rolebindings'],
        verbs: ['create', 'update', 'get'],
      },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    ]),
    expect: 201,
  });
  await admin(server, `${RBAC}/namespaces/w/rolebindings`, {
    method: 'POST',
    body: binding('writer', { kind: 'Role', name: 'rbac-writer' }, [
      { kind: 'ServiceAccount', name: 'writer' },
    ]),
    expect: 201,
  });
  await eventually('writer bound', async () => {
    const r = await server.request(`${RBAC}/namespaces/w/roles/rbac-writer`, { token: writerToken });
    return r.status === 200 ? r : undefined;
  });
});
afterAll(async () => {
  await server.close();
});

const WRITER = 'system:serviceaccount:w:writer';

describe('malformed RBAC objects', () => {
  it('are refused with 422 naming the field', async () => {
    const noVerbs = await admin(server, `${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('bad', [{ apiGroups: [''], resources: ['pods'] }]),
    });
    expect([noVerbs.status, (noVerbs.json as { message: string }).message]).toEqual([
      422,
      'Role.rbac.authorization.k8s.io "bad" is invalid: rules[0].verbs: Required value: verbs must contain at least one value',
    ]);
    const subject = await admin(server, `${RBAC}/namespaces/w/rolebindings`, {
      method: 'POST',
      body: binding('bad', { kind: 'Role', name: 'x' }, [{ kind: 'Robot', name: 'r' }]),
    });
    expect(subject.status).toBe(422);
    expect((subject.json as { message: string }).message).toContain(
      'subjects[0].kind: Unsupported value: "Robot"',
    );
    const crbRole = await admin(server, `${RBAC}/clusterrolebindings`, {
      method: 'POST',
      body: binding('bad', { kind: 'Role', name: 'x' }, [{ kind: 'User', name: 'u' }]),
    });
    expect(crbRole.status).toBe(422);
    await admin(server, `${RBAC}/namespaces/w/rolebindings`, {
      method: 'POST',
      body: binding('fixed', { kind: 'ClusterRole', name: 'view' }, [{ kind: 'User', name: 'u' }]),
      expect: 201,
    });
    const current = (await admin(server, `${RBAC}/namespaces/w/rolebindings/fixed`)).json as Record<
      string,
      unknown
    >;
    const changed = await admin(server, `${RBAC}/namespaces/w/rolebindings/fixed`, {
      method: 'PUT',
      body: {
        ...current,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      },
    });
    expect(changed.status).toBe(422);
    expect((changed.json as { message: string }).message).toContain('cannot change roleRef');
  });

  it('random bodies never make the server fail (admin and ServiceAccount writers)', async () => {
    const strings = fc.oneof(
      fc.constantFrom('', '*', 'pods', 'apps', 'get', 'Role', 'ClusterRole', 'view'),
      fc.string(),
    );
    const value = fc.oneof(
      strings,
      fc.integer(),
      fc.constant(null),
      fc.array(strings, { maxLength: 3 }),
      fc.dictionary(strings, strings, { maxKeys: 3 }),
    );
    const rule = fc.dictionary(
      fc.constantFrom('verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'),
      value,
    );
    const body = fc.record(
      {
        metadata: fc.record({ name: fc.constantFrom('fuzz', 'fuzz-2') }),
        rules: fc.oneof(fc.array(rule, { maxLength: 3 }), value),
        roleRef: fc.oneof(fc.dictionary(fc.constantFrom('apiGroup', 'kind', 'name'), value), value),
        subjects: fc.oneof(
          fc.array(fc.dictionary(fc.constantFrom('kind', 'name', 'namespace', 'apiGroup'), value), {
            maxLength: 3,
          }),
          value,
        ),
        aggregationRule: value,
      },
      { requiredKeys: ['metadata'] },
    );
    const paths = [
      `${RBAC}/namespaces/w/roles`,
      `${RBAC}/namespaces/w/rolebindings`,
      `${RBAC}/clusterroles`,
      `${RBAC}/clusterrolebindings`,
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), body, fc.boolean(), async (path, b, asWriter) => {
        const res = await server.request(path, {
          method: 'POST',
          body: b,
          ...(asWriter ? { token: writerToken } : {}),
        });
        expect(res.status, res.text).toBeLessThan(500);
        if (res.status === 201) {
          const name = (b.metadata as { name: string }).name;
          await admin(server, `${path}/${name}`, { method: 'DELETE', expect: 200 });
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('privilege escalation prevention', () => {
  it('a ServiceAccount may create a Role only with rules it holds, unless it may escalate', async () => {
    const held = await server.request(`${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
      token: writerToken,
    });
    expect(held.status, held.text).toBe(201);
    const more = await server.request(`${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('secret-reader', [
        { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] },
      ]),
      token: writerToken,
    });
    expect(more.status).toBe(403);
    expect(more.json).toMatchObject({
      reason: 'Forbidden',
      details: { name: 'secret-reader', group: 'rbac.authorization.k8s.io', kind: 'roles' },
      message: `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "${WRITER}" (groups=["system:serviceaccounts" "system:serviceaccounts:w" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`,
    });
    // the admin grants `escalate` on that one role name
    await admin(server, `${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('escalator', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles'],
          verbs: ['escalate'],
          resourceNames: ['secret-reader'],
        },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/w/rolebindings`, {
      method: 'POST',
      body: binding('escalator', { kind: 'Role', name: 'escalator' }, [
        { kind: 'ServiceAccount', name: 'writer' },
      ]),
      expect: 201,
    });
    await eventually('escalate allowed', async () => {
      const r = await server.request(`${RBAC}/namespaces/w/roles`, {
        method: 'POST',
        body: role('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }]),
        token: writerToken,
      });
      return r.status === 201 ? r : undefined;
    });
  });

  it('an aggregationRule takes holding everything', async () => {
    const token = await serviceAccount(server, 'w2', 'aggregator');
    await admin(server, `${RBAC}/clusterroles`, {
      method: 'POST',
      body: role('clusterrole-writer', [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/clusterrolebindings`, {
      method: 'POST',
      body: binding('aggregator', { kind: 'ClusterRole', name: 'clusterrole-writer' }, [
        { kind: 'ServiceAccount', name: 'aggregator', namespace: 'w2' },
      ]),
      expect: 201,
    });
    const res = await server.request(`${RBAC}/clusterroles`, {
      method: 'POST',
      body: {
        metadata: { name: 'gather' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { gather: 'true' } }] },
      },
      token,
    });
    expect([res.status, (res.json as { message: string }).message]).toEqual([
      403,
      'clusterroles.rbac.authorization.k8s.io "gather" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    ]);
    const plain = await server.request(`${RBAC}/clusterroles`, {
      method: 'POST',
      body: role('plain', [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] },
      ]),
      token,
    });
    expect(plain.status, plain.text).toBe(201);
  });

  it('a ServiceAccount may bind only roles whose rules it holds, unless it may bind them', async () => {
    await admin(server, `${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('deleter', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('lister', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]),
      expect: 201,
    });
    const bind = (name: string, roleName: string) =>
      server.request(`${RBAC}/namespaces/w/rolebindings`, {
        method: 'POST',
        body: binding(name, { kind: 'Role', name: roleName }, [{ kind: 'User', name: 'someone' }]),
        token: writerToken,
      });
    const lister = await eventually('lister role seen', async () => {
      const r = await bind('bind-lister', 'lister');
      return r.status === 201 ? r : undefined;
    });
    expect(lister.status).toBe(201);
    const deleter = await bind('bind-deleter', 'deleter');
    expect(deleter.status).toBe(403);
    expect((deleter.json as { message: string }).message).toContain(
      `rolebindings.rbac.authorization.k8s.io "bind-deleter" is forbidden: user "${WRITER}"`,
    );
    const missing = await bind('bind-missing', 'no-such-role');
    expect([missing.status, (missing.json as { message: string }).message]).toEqual([
      404,
      'role.rbac.authorization.k8s.io "no-such-role" not found',
    ]);
    await admin(server, `${RBAC}/namespaces/w/roles`, {
      method: 'POST',
      body: role('binder', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles'],
          verbs: ['bind'],
          resourceNames: ['deleter'],
        },
      ]),
      expect: 201,
    });
    await admin(server, `${RBAC}/namespaces/w/rolebindings`, {
      method: 'POST',
      body: binding('binder', { kind: 'Role', name: 'binder' }, [{ kind: 'ServiceAccount', name: 'writer' }]),
      expect: 201,
    });
    await eventually('bind allowed', async () => {
      const r = await bind('bind-deleter', 'deleter');
      return r.status === 201 ? r : undefined;
    });
  });
});
