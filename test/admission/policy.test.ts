/**
 * ValidatingAdmissionPolicy in the embedded API server, over HTTP: policies and bindings validated
 * when written, then evaluated on writes — matching, params, variables, matchConditions,
 * validation actions, failurePolicy, cost limits and audit annotations — worded as kube-apiserver
 * 1.32 words them.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { KubeObject } from '@converge/runtime';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { POLICY_AUDIT_CHANNEL, type PolicyAuditEvent } from '../../packages/apiserver/src/admission/index.ts';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { binding, configMapRules, policy, VAP, VAPB } from './policy-support.ts';
import { configMapWriter } from './support.ts';

const CM = '/api/v1/namespaces/default/configmaps';

let api: TestServer;
const audits: PolicyAuditEvent[] = [];
const onAudit = (event: unknown): void => {
  audits.push(event as PolicyAuditEvent);
};

function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

async function install(path: string, body: Record<string, unknown>): Promise<void> {
  const created = await api.request(path, { method: 'POST', body });
  expect(created.json).toMatchObject({ metadata: body.metadata as object });
  expect(created.status).toBe(201);
}

beforeAll(async () => {
  api = await startTestServer();
  subscribe(POLICY_AUDIT_CHANNEL, onAudit);
});

afterAll(async () => {
  unsubscribe(POLICY_AUDIT_CHANNEL, onAudit);
  await api.close();
});

beforeEach(async () => {
  for (const path of [VAPB, VAP, CM, '/api/v1/namespaces/params/configmaps'])
    expect((await api.request(path, { method: 'DELETE' })).status).toBe(200);
  audits.length = 0;
});

describe('writing policies', () => {
  it('serves both kinds cluster-scoped, with kube defaults applied', async () => {
    await install(VAP, policy('small', { validations: [{ expression: 'size(object.data) < 3' }] }));
    const got = await api.request(`${VAP}/small`);
    expect(got.json).toMatchObject({
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} },
      },
    });
    const rules = (got.json as { spec: { matchConstraints: { resourceRules: { scope: string }[] } } }).spec
      .matchConstraints.resourceRules;
    expect(rules[0]?.scope).toBe('*');
    await install(VAPB, binding('small', 'small'));
  });

  it('rejects an expression that does not compile with a 422 field error worded as kube', async () => {
    const answer = await api.request(VAP, {
      method: 'POST',
      body: policy('broken', { validations: [{ expression: 'object.data.x ==' }] }),
    });
    expect(answer.status).toBe(422);
    const status = answer.json as {
      message: string;
      details: { causes: { field: string; message: string }[] };
    };
    expect(status.details.causes[0]?.field).toBe('spec.validations[0].expression');
    expect(status.message).toMatch(
      /^ValidatingAdmissionPolicy\.admissionregistration\.k8s\.io "broken" is invalid: spec\.validations\[0\]\.expression: Invalid value: "object\.data\.x ==": compilation failed: ERROR: <input>:1:/,
    );
  });

  it('rejects a non-bool validation, an undeclared params, a non-bool authorizer check, and a binding without actions', async () => {
    const answer = await api.request(VAP, {
      method: 'POST',
      body: policy('typed', {
        validations: [
          { expression: "'a'" },
          { expression: 'params.x == 1' },
          { expression: "authorizer.group('').resource('pods').check('get').reason()" },
          { expression: 'object.data.flag' },
        ],
        variables: [{ name: 'bad name', expression: '1' }],
      }),
    });
    expect(answer.status).toBe(422);
    const causes = (answer.json as { details: { causes: { field: string; message: string }[] } }).details
      .causes;
    expect(causes.map((c) => `${c.field}: ${c.message.split('\n')[0]}`)).toEqual([
      'spec.variables[0].name: Invalid value: "bad name": name is not a valid CEL identifier',
      `spec.validations[0].expression: Invalid value: "'a'": must evaluate to bool`,
      "spec.validations[1].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')",
      `spec.validations[2].expression: Invalid value: "authorizer.group('').resource('pods').check('get').reason()": must evaluate to bool`,
      'spec.validations[3].expression: Invalid value: "object.data.flag": must evaluate to bool',
    ]);
    const noActions = await api.request(VAPB, { method: 'POST', body: binding('b', 'typed', []) });
    expect(noActions.status).toBe(422);
    expect((noActions.json as { message: string }).message).toBe(
      'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b" is invalid: spec.validationActions: Required value: at least one validation action is required',
    );
    const both = await api.request(VAPB, { method: 'POST', body: binding('b', 'typed', ['Deny', 'Warn']) });
    expect((both.json as { message: string }).message).toContain(
      'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    );
  });

  it('requires validations or auditAnnotations, and matchConstraints', async () => {
    const answer = await api.request(VAP, {
      method: 'POST',
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'empty' },
        spec: {},
      },
    });
    expect(answer.status).toBe(422);
    expect((answer.json as { message: string }).message).toBe(
      'ValidatingAdmissionPolicy.admissionregistration.k8s.io "empty" is invalid: [spec.matchConstraints: Required value, spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]',
    );
  });
});

describe('evaluating policies', () => {
  it('Deny: a 422 worded as kube, with the message, messageExpression or the failed expression', async () => {
    await install(
      VAP,
      policy('limits', {
        validations: [
          { expression: '!has(object.data.a)', message: 'data.a is not allowed' },
          { expression: '!has(object.data.b)', messageExpression: "'data.b is ' + object.data.b" },
          { expression: '!has(object.data.c)', reason: 'Forbidden' },
        ],
      }),
    );
    await install(VAPB, binding('limits-binding', 'limits'));
    const a = await api.request(CM, { method: 'POST', body: configMap('a', { a: '1' }) });
    expect(a.status).toBe(422);
    expect(a.json).toMatchObject({
      reason: 'Invalid',
      code: 422,
      message:
        "configmaps \"a\" is forbidden: ValidatingAdmissionPolicy 'limits' with binding 'limits-binding' denied request: data.a is not allowed",
      details: { name: 'a', kind: 'configmaps' },
    });
    const b = await api.request(CM, { method: 'POST', body: configMap('b', { b: 'two' }) });
    expect((b.json as { message: string }).message).toMatch(/denied request: data\.b is two$/);
    const c = await api.request(CM, { method: 'POST', body: configMap('c', { c: '3' }) });
    expect(c.status).toBe(403);
    expect(c.json).toMatchObject({
      reason: 'Forbidden',
      message:
        "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'limits' with binding 'limits-binding' denied request: failed expression: !has(object.data.c)",
    });
    expect((await api.request(`${CM}/a`)).status).toBe(404);
    expect((await api.request(CM, { method: 'POST', body: configMap('ok', { d: '4' }) })).status).toBe(201);
  });

  it('Warn: the write succeeds with a Warning header; Audit: the failure is published as an annotation', async () => {
    await install(
      VAP,
      policy('no-x', { validations: [{ expression: '!has(object.data.x)', message: 'x is set' }] }),
    );
    await install(VAPB, binding('warn', 'no-x', ['Warn', 'Audit']));
    const answer = await api.request(CM, { method: 'POST', body: configMap('x', { x: '1' }) });
    expect(answer.status).toBe(201);
    expect(answer.headers.warning).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy 'no-x' with binding 'warn': x is set"`,
    );
    expect(audits).toEqual([
      expect.objectContaining({
        operation: 'CREATE',
        name: 'x',
        annotations: {
          'validation.policy.admission.k8s.io/validation_failure': JSON.stringify([
            {
              message: 'x is set',
              policy: 'no-x',
              binding: 'warn',
              expressionIndex: 0,
              validationActions: ['Warn', 'Audit'],
            },
          ]),
        },
      }),
    ]);
  });

  it('auditAnnotations are published as <policy>/<key>', async () => {
    await install(
      VAP,
      policy('tagger', {
        auditAnnotations: [{ key: 'size', valueExpression: "'data has ' + string(size(object.data))" }],
      }),
    );
    await install(VAPB, binding('tagger', 'tagger', ['Audit']));
    expect((await api.request(CM, { method: 'POST', body: configMap('t', { a: '1', b: '2' }) })).status).toBe(
      201,
    );
    expect(audits.map((a) => a.annotations)).toEqual([{ 'tagger/size': 'data has 2' }]);
  });

  it('a transition rule sees oldObject on UPDATE', async () => {
    await install(
      VAP,
      policy('immutable', {
        validations: [
          {
            expression: "request.operation != 'UPDATE' || object.data.id == oldObject.data.id",
            message: 'data.id is immutable',
          },
        ],
      }),
    );
    await install(VAPB, binding('immutable', 'immutable'));
    expect((await api.request(CM, { method: 'POST', body: configMap('i', { id: '1' }) })).status).toBe(201);
    const update = await api.request(`${CM}/i`, {
      method: 'PATCH',
      body: { data: { id: '2' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(update.status).toBe(422);
    expect((update.json as { message: string }).message).toMatch(/denied request: data\.id is immutable$/);
    const same = await api.request(`${CM}/i`, {
      method: 'PATCH',
      body: { data: { id: '1', other: 'x' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(same.status).toBe(200);
  });

  it('matchConditions, variables, selectors, excludeResourceRules and binding matchResources narrow what is checked', async () => {
    await install(
      VAP,
      policy('guarded', {
        matchConstraints: {
          ...configMapRules(),
          excludeResourceRules: [
            {
              operations: ['*'],
              apiGroups: [''],
              apiVersions: ['v1'],
              resources: ['configmaps'],
              resourceNames: ['skipped'],
            },
          ],
        },
        matchConditions: [
          {
            name: 'not-exempt',
            expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)",
          },
        ],
        variables: [
          { name: 'keys', expression: 'object.data.map(k, k)' },
          { name: 'count', expression: 'size(variables.keys)' },
        ],
        validations: [
          {
            expression: 'variables.count <= 1',
            messageExpression: "'too many keys: ' + string(variables.count)",
          },
        ],
      }),
    );
    await install(
      VAPB,
      binding('guarded', 'guarded', ['Deny'], {
        matchResources: { objectSelector: { matchLabels: { checked: 'yes' } } },
      }),
    );
    const two = { a: '1', b: '2' };
    const denied = await api.request(CM, { method: 'POST', body: configMap('d', two, { checked: 'yes' }) });
    expect((denied.json as { message: string }).message).toMatch(/denied request: too many keys: 2$/);
    for (const [name, labels] of [
      ['unlabelled', undefined],
      ['exempt', { checked: 'yes', exempt: '' }],
      ['skipped', { checked: 'yes' }],
    ] as const) {
      const answer = await api.request(CM, { method: 'POST', body: configMap(name, two, labels) });
      expect(answer.status, name).toBe(201);
    }
  });

  it('a matchCondition on request.userInfo.username applies the policy only to requests of that user', async () => {
    await install(
      VAP,
      policy('robots-only', {
        matchConditions: [
          {
            name: 'is-robot',
            expression: "request.userInfo.username == 'system:serviceaccount:default:robot'",
          },
        ],
        validations: [
          {
            expression: "!has(object.data) || !('forbidden' in object.data)",
            messageExpression:
              "'not for ' + request.userInfo.username + ' in ' + request.userInfo.groups.filter(g, g.startsWith('system:serviceaccounts:'))[0]",
          },
        ],
      }),
    );
    await install(VAPB, binding('robots-only', 'robots-only'));
    const robot = await configMapWriter(api, 'robot');
    const denied = await api.request(CM, {
      method: 'POST',
      body: configMap('from-robot', { forbidden: 'x' }),
      token: robot.token,
    });
    expect([denied.status, (denied.json as { message: string }).message]).toEqual([
      422,
      "configmaps \"from-robot\" is forbidden: ValidatingAdmissionPolicy 'robots-only' with binding 'robots-only' denied request: not for system:serviceaccount:default:robot in system:serviceaccounts:default",
    ]);
    const admin = await api.request(CM, {
      method: 'POST',
      body: configMap('from-admin', { forbidden: 'x' }),
    });
    expect(admin.status, admin.text).toBe(201);
    const allowed = await api.request(CM, { method: 'POST', body: configMap('clean'), token: robot.token });
    expect(allowed.status, allowed.text).toBe(201);
  });

  it('authorizer checks what the requesting user may do: RBAC for a ServiceAccount, everything for system:masters', async () => {
    await install(
      VAP,
      policy('readers-of-secrets', {
        variables: [
          {
            name: 'canReadSecrets',
            expression:
              "authorizer.group('').resource('secrets').namespace(request.namespace).check('get').allowed()",
          },
        ],
        validations: [
          {
            expression: 'variables.canReadSecrets',
            messageExpression: "request.userInfo.username + ' may not read secrets'",
          },
          {
            expression: "authorizer.requestResource.check('create').allowed()",
            message: 'the request itself is not allowed',
          },
          {
            expression:
              "!authorizer.serviceAccount('default', 'robot').path('/healthz').check('get').allowed()",
            message: 'no ServiceAccount may read /healthz without a binding',
          },
        ],
      }),
    );
    await install(VAPB, binding('readers-of-secrets', 'readers-of-secrets'));
    const reader = await configMapWriter(api, 'reader');
    const denied = await api.request(CM, {
      method: 'POST',
      body: configMap('by-reader'),
      token: reader.token,
    });
    expect([denied.status, (denied.json as { message: string }).message]).toEqual([
      422,
      "configmaps \"by-reader\" is forbidden: ValidatingAdmissionPolicy 'readers-of-secrets' with binding 'readers-of-secrets' denied request: system:serviceaccount:default:reader may not read secrets",
    ]);
    const admin = await api.request(CM, { method: 'POST', body: configMap('by-admin') });
    expect(admin.status, admin.text).toBe(201);
    // granted the read, the ServiceAccount passes: the check follows the stored bindings
    const rbac = '/apis/rbac.authorization.k8s.io/v1/namespaces/default';
    await api.request(`${rbac}/roles`, {
      method: 'POST',
      body: {
        metadata: { name: 'secret-reader' },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
      },
    });
    await api.request(`${rbac}/rolebindings`, {
      method: 'POST',
      body: {
        metadata: { name: 'secret-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'default' }],
      },
    });
    await vi.waitFor(async () => {
      const allowed = await api.request(CM, {
        method: 'POST',
        body: configMap('by-reader'),
        token: reader.token,
      });
      expect(allowed.status, allowed.text).toBe(201);
    });
  });

  it('params from a ConfigMap through paramRef; a missing param with Deny and with Allow', async () => {
    await api.request('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'params' } },
    });
    await install(
      VAP,
      policy('max-keys', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: [
            { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
          ],
          namespaceSelector: {
            matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['params'] }],
          },
        },
        validations: [
          {
            expression: 'size(object.data) <= int(params.data.max)',
            messageExpression: "'at most ' + params.data.max + ' keys'",
          },
        ],
      }),
    );
    await install(
      VAPB,
      binding('max-keys', 'max-keys', ['Deny'], {
        paramRef: { name: 'limits', namespace: 'params', parameterNotFoundAction: 'Deny' },
      }),
    );
    const missing = await api.request(CM, { method: 'POST', body: configMap('m', { a: '1' }) });
    expect(missing.status).toBe(422);
    expect((missing.json as { message: string }).message).toBe(
      "configmaps \"m\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
    );
    const limits = await api.request('/api/v1/namespaces/params/configmaps', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits' }, data: { max: '1' } },
    });
    expect(limits.status).toBe(201);
    const tooMany = await api.request(CM, { method: 'POST', body: configMap('t', { a: '1', b: '2' }) });
    expect((tooMany.json as { message: string }).message).toMatch(/denied request: at most 1 keys$/);
    expect((await api.request(CM, { method: 'POST', body: configMap('one', { a: '1' }) })).status).toBe(201);
    // Allow: without the param the binding does not validate at all
    await api.request(`${VAPB}/max-keys`, { method: 'DELETE' });
    await install(
      VAPB,
      binding('max-keys-allow', 'max-keys', ['Deny'], {
        paramRef: { name: 'absent', namespace: 'params', parameterNotFoundAction: 'Allow' },
      }),
    );
    expect(
      (await api.request(CM, { method: 'POST', body: configMap('free', { a: '1', b: '2' }) })).status,
    ).toBe(201);
  });

  it('failurePolicy: an evaluation error denies under Fail and is ignored under Ignore', async () => {
    const spec = (failurePolicy: string): Record<string, unknown> => ({
      failurePolicy,
      validations: [{ expression: 'object.data.missing == "x"' }],
    });
    await install(VAP, policy('fails', spec('Fail')));
    await install(VAPB, binding('fails', 'fails'));
    const failed = await api.request(CM, { method: 'POST', body: configMap('f', { a: '1' }) });
    expect(failed.status).toBe(422);
    expect((failed.json as { message: string }).message).toBe(
      "configmaps \"f\" is forbidden: ValidatingAdmissionPolicy 'fails' with binding 'fails' denied request: expression 'object.data.missing == \"x\"' resulted in error: no such key: missing",
    );
    const current = (await api.request(`${VAP}/fails`)).json as { metadata: object };
    const replaced = await api.request(`${VAP}/fails`, {
      method: 'PUT',
      body: { ...policy('fails', spec('Ignore')), metadata: current.metadata },
    });
    expect(replaced.status).toBe(200);
    expect((await api.request(CM, { method: 'POST', body: configMap('f', { a: '1' }) })).status).toBe(201);
  });

  it('an expensive expression is stopped by the per-call cost limit with cel-go error', async () => {
    await install(
      VAP,
      policy('expensive', {
        validations: [
          {
            expression:
              "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, object.metadata.name.matches('^[a-z]+$')))))))",
          },
        ],
      }),
    );
    await install(VAPB, binding('expensive', 'expensive'));
    const answer = await api.request(CM, { method: 'POST', body: configMap('e') });
    expect(answer.status).toBe(422);
    expect((answer.json as { message: string }).message).toMatch(
      /denied request: expression '.*' resulted in error: operation cancelled: actual cost limit exceeded$/,
    );
  });

  it('policies do not apply to writes of policies and bindings, but do to webhook configurations', async () => {
    await install(
      VAP,
      policy('deny-all', {
        validations: [{ expression: 'false' }],
        matchConstraints: {
          resourceRules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
        },
      }),
    );
    await install(VAPB, binding('deny-all', 'deny-all'));
    await install(VAPB, binding('another', 'deny-all', ['Warn']));
    expect((await api.request(`${VAPB}/another`, { method: 'DELETE' })).status).toBe(200);
    expect((await api.request(CM, { method: 'POST', body: configMap('no') })).status).toBe(422);
    // webhook configurations are checked by policies (only webhooks skip them)
    const configuration = await api.request(
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      {
        method: 'POST',
        body: {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'v' },
        },
      },
    );
    expect((configuration.json as { message: string }).message).toBe(
      "validatingwebhookconfigurations.admissionregistration.k8s.io \"v\" is forbidden: ValidatingAdmissionPolicy 'deny-all' with binding 'deny-all' denied request: failed expression: false",
    );
  });

  it('a policy and binding written straight into the store apply once the store watch reports them', async () => {
    const probe = { method: 'POST', body: configMap('probe', { a: '1' }) };
    expect((await api.request(`${CM}?dryRun=All`, probe)).status).toBe(201); // loads the (empty) cache
    const store = api.server.store;
    const policyType = store.resolveType('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy');
    const bindingType = store.resolveType(
      'admissionregistration.k8s.io/v1',
      'ValidatingAdmissionPolicyBinding',
    );
    if (policyType === undefined || bindingType === undefined)
      throw new Error('policy kinds are not registered');
    await store.create(
      policyType,
      policy('direct', { validations: [{ expression: 'false' }] }) as unknown as KubeObject,
    );
    await store.create(bindingType, binding('direct', 'direct') as unknown as KubeObject);
    await vi.waitFor(async () => expect((await api.request(`${CM}?dryRun=All`, probe)).status).toBe(422));
  });

  it('matchPolicy Equivalent: a policy on v1 of a custom resource sees a v2 write converted to v1; Exact does not', async () => {
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    const crd = await api.request('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      method: 'POST',
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            { name: 'v1', served: true, storage: true, schema },
            { name: 'v2', served: true, storage: false, schema },
          ],
        },
      },
    });
    expect(crd.status).toBe(201);
    const v2 = '/apis/example.com/v2/namespaces/default/widgets';
    await vi.waitFor(async () => expect((await api.request(v2)).status).toBe(200));
    const rules = (matchPolicy: string): Record<string, unknown> => ({
      matchPolicy,
      resourceRules: [
        { operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] },
      ],
    });
    await install(
      VAP,
      policy('small-widgets', {
        matchConstraints: rules('Equivalent'),
        validations: [
          {
            expression: 'object.spec.size <= 3',
            messageExpression:
              "'seen as ' + object.apiVersion + ' ' + request.kind.version + ', sent as ' + request.requestKind.version",
          },
        ],
      }),
    );
    await install(VAPB, binding('small-widgets', 'small-widgets'));
    const widget = (name: string): object => ({
      apiVersion: 'example.com/v2',
      kind: 'Widget',
      metadata: { name },
      spec: { size: 5 },
    });
    const denied = await api.request(v2, { method: 'POST', body: widget('big') });
    expect((denied.json as { message: string }).message).toBe(
      "widgets.example.com \"big\" is forbidden: ValidatingAdmissionPolicy 'small-widgets' with binding 'small-widgets' denied request: seen as example.com/v1 v1, sent as v2",
    );
    const current = (await api.request(`${VAP}/small-widgets`)).json as { metadata: object; spec: object };
    const exact = { ...current, spec: { ...current.spec, matchConstraints: rules('Exact') } };
    expect((await api.request(`${VAP}/small-widgets`, { method: 'PUT', body: exact })).status).toBe(200);
    expect((await api.request(v2, { method: 'POST', body: widget('big') })).status).toBe(201);
    await api.request('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', {
      method: 'DELETE',
    });
  });
});
