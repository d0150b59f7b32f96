/**
 * Webhook `matchConditions`: CEL over `object`, `oldObject`, `request` and `namespaceObject`
 * decides whether the embedded API server calls a webhook, as kube-apiserver 1.32. A false
 * condition skips the webhook, an evaluation error follows `failurePolicy`, and expressions that
 * do not compile or are not bool make the configuration write a 422.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdmissionAttributes,
  AdmissionMatchConditionError,
  matchConditionsHold,
} from '../../packages/apiserver/src/admission/index.ts';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { configMapRule, configMapWriter, configuration, type Hooks, startHooks } from './support.ts';

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const CM = '/api/v1/namespaces/default/configmaps';

let api: TestServer;
let hooks: Hooks;

function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

type Condition = { name: string; expression: string };

/** Installs the validating webhook `/validate` (denies `data.bad`) behind `matchConditions`. */
async function validatingWith(matchConditions: Condition[], failurePolicy = 'Fail'): Promise<void> {
  const created = await api.request(VWC, {
    method: 'POST',
    body: configuration('ValidatingWebhookConfiguration', 'vcm', {
      name: 'vcm.example.com',
      failurePolicy,
      clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
      rules: [configMapRule(['CREATE', 'UPDATE', 'DELETE'])],
      matchConditions,
    }),
  });
  expect(created.status).toBe(201);
}

beforeAll(async () => {
  api = await startTestServer();
  hooks = await startHooks();
});

afterAll(async () => {
  await hooks.stop();
  await api.close();
});

beforeEach(async () => {
  for (const path of [VWC, MWC, CM]) expect((await api.request(path, { method: 'DELETE' })).status).toBe(200);
  hooks.calls.length = 0;
});

describe('matchConditions decide whether a webhook is called', () => {
  it('all conditions true: the webhook is called and its denial stands', async () => {
    await validatingWith([
      { name: 'admin', expression: "request.userInfo.username == 'converge-admin'" },
      { name: 'masters', expression: "'system:masters' in request.userInfo.groups" },
    ]);
    const answer = await api.request(CM, { method: 'POST', body: configMap('c1', { bad: 'x' }) });
    expect(answer.status).toBe(403);
    expect(hooks.calls).toEqual(['/validate CREATE c1']);
  });

  it('a false condition on request.userInfo skips the webhook: the write it would deny is stored', async () => {
    await validatingWith([
      { name: 'admin', expression: "request.userInfo.username == 'converge-admin'" },
      { name: 'not-admin', expression: "request.userInfo.username == 'someone-else'" },
    ]);
    const answer = await api.request(CM, { method: 'POST', body: configMap('c2', { bad: 'x' }) });
    expect(answer.status).toBe(201);
    expect(hooks.calls).toEqual([]);
  });

  it('a condition on authorizer calls the webhook only for users who may not delete what they write', async () => {
    await validatingWith([
      { name: 'not-a-deleter', expression: "!authorizer.requestResource.check('delete').allowed()" },
    ]);
    const robot = await configMapWriter(api, 'robot');
    const byAdmin = await api.request(CM, { method: 'POST', body: configMap('c-admin', { bad: 'x' }) });
    expect(byAdmin.status).toBe(201);
    expect(hooks.calls).toEqual([]);
    const byRobot = await api.request(CM, {
      method: 'POST',
      body: configMap('c-robot', { bad: 'x' }),
      token: robot.token,
    });
    expect(byRobot.status).toBe(403);
    expect(hooks.calls).toEqual(['/validate CREATE c-robot']);
  });

  it('a condition on object.metadata.labels calls the webhook only for labelled objects', async () => {
    await validatingWith([
      { name: 'team', expression: "object.metadata.?labels.?team.orValue('') == 'payments'" },
    ]);
    expect((await api.request(CM, { method: 'POST', body: configMap('plain') })).status).toBe(201);
    expect(
      (await api.request(CM, { method: 'POST', body: configMap('labelled', {}, { team: 'payments' }) }))
        .status,
    ).toBe(201);
    expect(hooks.calls).toEqual(['/validate CREATE labelled']);
  });

  it('request, oldObject and namespaceObject are bound: a condition on UPDATE of the default namespace', async () => {
    await validatingWith([
      { name: 'update', expression: "request.operation == 'UPDATE' && oldObject != null" },
      {
        name: 'kind',
        expression: "request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps'",
      },
      { name: 'namespace', expression: "namespaceObject.metadata.name == 'default'" },
    ]);
    expect((await api.request(CM, { method: 'POST', body: configMap('u1') })).status).toBe(201);
    expect((await api.request(`${CM}/u1`, { method: 'PUT', body: configMap('u1', { a: 'b' }) })).status).toBe(
      200,
    );
    expect(hooks.calls).toEqual(['/validate UPDATE u1']);
  });

  it('DELETE binds object to null: a condition on oldObject still reads the stored object', async () => {
    expect(
      (await api.request(CM, { method: 'POST', body: configMap('d1', {}, { keep: 'yes' }) })).status,
    ).toBe(201);
    await validatingWith([
      { name: 'delete', expression: "object == null && oldObject.metadata.labels['keep'] == 'yes'" },
    ]);
    expect((await api.request(`${CM}/d1`, { method: 'DELETE' })).status).toBe(200);
    expect(hooks.calls).toEqual(['/validate DELETE d1']);
  });

  it('a mutating webhook behind a false condition does not patch', async () => {
    const created = await api.request(MWC, {
      method: 'POST',
      body: configuration('MutatingWebhookConfiguration', 'mcm', {
        name: 'mcm.example.com',
        clientConfig: { url: `${hooks.url}/default`, caBundle: hooks.caBundle },
        matchConditions: [{ name: 'opt-in', expression: 'has(object.data.defaultMe)' }],
      }),
    });
    expect(created.status).toBe(201);
    const skipped = await api.request(CM, { method: 'POST', body: configMap('m1') });
    const patched = await api.request(CM, { method: 'POST', body: configMap('m2', { defaultMe: 'y' }) });
    // `data: {}` is not echoed (omitempty), as kube-apiserver encodes a ConfigMap
    expect((skipped.json as { data?: object }).data).toBeUndefined();
    expect((patched.json as { data?: object }).data).toEqual({ defaultMe: 'y', defaulted: 'true' });
    expect(hooks.calls).toEqual(['/default m2']);
  });
});

describe('an evaluation error follows failurePolicy', () => {
  const missing = { name: 'missing', expression: "object.data.missing == 'x'" };

  it("Fail rejects with kube's 403 and does not call the webhook", async () => {
    await validatingWith([missing], 'Fail');
    const answer = await api.request(CM, { method: 'POST', body: configMap('e1') });
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({
      kind: 'Status',
      code: 403,
      reason: 'Forbidden',
      message: `configmaps "e1" is forbidden: expression 'object.data.missing == 'x'' resulted in error: no such key: missing`,
      details: { name: 'e1', kind: 'configmaps' },
    });
    expect(hooks.calls).toEqual([]);
    expect((await api.request(`${CM}/e1`)).status).toBe(404);
  });

  it('Ignore skips the webhook and admits the write', async () => {
    await validatingWith([missing], 'Ignore');
    expect((await api.request(CM, { method: 'POST', body: configMap('e2', { bad: 'x' }) })).status).toBe(201);
    expect(hooks.calls).toEqual([]);
  });

  it('a false condition outranks an error even under Fail', async () => {
    await validatingWith([missing, { name: 'never', expression: 'false' }], 'Fail');
    expect((await api.request(CM, { method: 'POST', body: configMap('e3') })).status).toBe(201);
    expect(hooks.calls).toEqual([]);
  });

  it('an expression past the per-call cost limit is an evaluation error', async () => {
    await validatingWith(
      [
        {
          name: 'costly',
          expression:
            '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a > 0))))))',
        },
      ],
      'Fail',
    );
    const answer = await api.request(CM, { method: 'POST', body: configMap('e4') });
    expect(answer.status).toBe(403);
    expect((answer.json as { message: string }).message).toContain('cost');
    expect(hooks.calls).toEqual([]);
  });
});

describe('configuration writes validate matchConditions', () => {
  async function rejected(matchConditions: unknown): Promise<{ status: number; message: string }> {
    const answer = await api.request(VWC, {
      method: 'POST',
      body: configuration('ValidatingWebhookConfiguration', 'bad', {
        name: 'bad.example.com',
        clientConfig: { url: `${hooks.url}/validate`, caBundle: hooks.caBundle },
        matchConditions,
      }),
    });
    return { status: answer.status, message: (answer.json as { message: string }).message };
  }

  it('an expression that does not compile is a 422 naming the field', async () => {
    const answer = await rejected([{ name: 'broken', expression: 'object.metadata +' }]);
    expect(answer.status).toBe(422);
    expect(answer.message).toMatch(
      /^ValidatingWebhookConfiguration\.admissionregistration\.k8s\.io "bad" is invalid: webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "object\.metadata \+": compilation failed: ERROR: <input>:1:/,
    );
  });

  it('a non-bool expression, an untyped one, an undeclared variable, a missing name and a duplicate are rejected', async () => {
    const answer = await rejected([
      { name: 'text', expression: "'yes'" },
      { name: 'undeclared', expression: "nobody.group('').resource('pods').check('get').allowed()" },
      { expression: 'true' },
      { name: 'text', expression: 'true' },
      { name: 'dyn', expression: 'object.spec.paused' },
    ]);
    expect(answer.status).toBe(422);
    expect(answer.message).toContain(
      `webhooks[0].matchConditions[0].expression: Invalid value: "'yes'": must evaluate to bool`,
    );
    expect(answer.message).toContain("undeclared reference to 'nobody'");
    expect(answer.message).toContain('webhooks[0].matchConditions[2].name: Required value');
    expect(answer.message).toContain('webhooks[0].matchConditions[3].name: Duplicate value: "text"');
    // `object` is dyn, so a bare field is not known to be a bool: kube refuses it, not only at runtime
    expect(answer.message).toContain(
      'webhooks[0].matchConditions[4].expression: Invalid value: "object.spec.paused": must evaluate to bool',
    );
  });

  it('more than 64 conditions are too many; 64 are accepted', async () => {
    const conditions = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
    const tooMany = await rejected(conditions(65));
    expect(tooMany.status).toBe(422);
    expect(tooMany.message).toContain(
      'webhooks[0].matchConditions: Too many: 65: must have at most 64 items',
    );
    expect((await rejected(conditions(64))).status).toBe(201);
  });
});

describe('matchConditionsHold', () => {
  const attributes: AdmissionAttributes = {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subResource: '',
    namespaced: true,
    namespace: 'default',
    name: 'p',
    object: { metadata: { name: 'p' }, data: {} },
    oldObject: null,
    dryRun: false,
    options: {},
    userInfo: { username: 'admin' },
  };
  const EXPRESSIONS = { yes: 'true', no: 'false', error: 'object.data.nope' } as const;

  it('calls iff no condition is false and, under Fail, none errs; an error under Ignore skips', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('yes', 'no', 'error') as fc.Arbitrary<keyof typeof EXPRESSIONS>, {
          maxLength: 8,
        }),
        fc.constantFrom('Fail', 'Ignore') as fc.Arbitrary<'Fail' | 'Ignore'>,
        (outcomes, failurePolicy) => {
          const webhook = {
            name: 'w',
            clientConfig: {},
            failurePolicy,
            matchConditions: outcomes.map((o, i) => ({ name: `c${i}`, expression: EXPRESSIONS[o] })),
          };
          const run = () => matchConditionsHold(webhook, attributes, null);
          if (outcomes.includes('no')) expect(run()).toBe(false);
          else if (!outcomes.includes('error')) expect(run()).toBe(true);
          else if (failurePolicy === 'Ignore') expect(run()).toBe(false);
          else expect(run).toThrow(AdmissionMatchConditionError);
        },
      ),
    );
  });
  it('request.requestKind is the version the client used when matchPolicy Equivalent converted the object', () => {
    const converted: AdmissionAttributes = {
      ...attributes,
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      requestKind: { group: 'example.com', version: 'v2', kind: 'Widget' },
      requestResource: { group: 'example.com', version: 'v2', resource: 'widgets' },
    };
    const condition = (expression: string) => ({
      name: 'w',
      clientConfig: {},
      matchConditions: [{ name: 'c', expression }],
    });
    const v2 = "request.requestKind.version == 'v2' && request.requestResource.version == 'v2'";
    expect(matchConditionsHold(condition(v2), converted, null)).toBe(true);
    expect(matchConditionsHold(condition("request.kind.version == 'v1'"), converted, null)).toBe(true);
    // without a conversion, the request kind is the kind
    expect(matchConditionsHold(condition("request.requestKind.version == 'v1'"), attributes, null)).toBe(
      true,
    );
  });
});
