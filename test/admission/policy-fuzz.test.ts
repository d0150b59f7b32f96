/**
 * Bad input for ValidatingAdmissionPolicy writes (fast-check): random and malformed policies and
 * bindings are stored (201) or refused with a 4xx Status — never a 5xx or a crash — and whatever
 * got stored, a later ConfigMap write still gets a well-formed answer.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { VAP, VAPB } from './policy-support.ts';

const CM = '/api/v1/namespaces/default/configmaps';

let api: TestServer;

beforeAll(async () => {
  api = await startTestServer();
});

afterAll(async () => {
  await api.close();
});

const json = fc.jsonValue({ maxDepth: 3 });
const fragments = fc.constantFrom(
  'object',
  'oldObject',
  'params',
  'request',
  'namespaceObject',
  'variables',
  'authorizer',
  '.metadata',
  '.data',
  '.name',
  '.x',
  '[0]',
  ' == ',
  ' && ',
  ' || ',
  ' + ',
  '!',
  '(',
  ')',
  "'a'",
  '1',
  'true',
  'null',
  'size(',
  '.all(x, ',
  'has(',
  '.matches(',
  "'^[a-z]+$')",
  ' ? ',
  ' : ',
  'variables.v',
  'string(',
);
const expression = fc.oneof(
  fc.array(fragments, { maxLength: 8 }).map((parts) => parts.join('')),
  fc.string(),
  json,
);
const stringList = fc.oneof(
  fc.array(
    fc.constantFrom('*', '', 'configmaps', 'configmaps/*', '*/scale', 'v1', 'CREATE', 'UPDATE', 'x/y/z'),
    { maxLength: 3 },
  ),
  json,
);
const rule = fc.record(
  {
    operations: stringList,
    apiGroups: stringList,
    apiVersions: stringList,
    resources: stringList,
    scope: fc.oneof(fc.constantFrom('*', 'Cluster', 'Namespaced', 'Nope'), json),
    resourceNames: stringList,
  },
  { requiredKeys: [] },
);
const matchResources = fc.oneof(
  fc.record(
    {
      resourceRules: fc.oneof(fc.array(rule, { maxLength: 2 }), json),
      excludeResourceRules: fc.oneof(fc.array(rule, { maxLength: 1 }), json),
      namespaceSelector: fc.oneof(fc.constant({}), fc.constant({ matchLabels: { a: 'b' } }), json),
      objectSelector: fc.oneof(
        fc.constant({}),
        fc.constant({ matchExpressions: [{ key: 'a', operator: 'Bad' }] }),
        json,
      ),
      matchPolicy: fc.oneof(fc.constantFrom('Exact', 'Equivalent', 'Other'), json),
    },
    { requiredKeys: [] },
  ),
  json,
);
const namedExpressions = fc.oneof(
  fc.array(
    fc.record(
      { name: fc.oneof(fc.constantFrom('v', 'ok', 'bad name', ''), json), expression },
      { requiredKeys: [] },
    ),
    {
      maxLength: 3,
    },
  ),
  json,
);
const policySpec = fc.record(
  {
    failurePolicy: fc.oneof(fc.constantFrom('Fail', 'Ignore', 'Maybe'), json),
    paramKind: fc.oneof(
      fc.constant({ apiVersion: 'v1', kind: 'ConfigMap' }),
      fc.constant({ apiVersion: 'a/b/c', kind: '' }),
      json,
    ),
    matchConstraints: matchResources,
    matchConditions: namedExpressions,
    variables: namedExpressions,
    validations: fc.oneof(
      fc.array(
        fc.record(
          {
            expression,
            message: fc.oneof(fc.constantFrom('m', ' ', 'a\nb'), json),
            messageExpression: expression,
            reason: fc.oneof(fc.constantFrom('Forbidden', 'Invalid', 'Teapot'), json),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      json,
    ),
    auditAnnotations: fc.oneof(
      fc.array(
        fc.record(
          { key: fc.oneof(fc.constantFrom('k', 'bad key', ''), json), valueExpression: expression },
          { requiredKeys: [] },
        ),
        {
          maxLength: 2,
        },
      ),
      json,
    ),
  },
  { requiredKeys: [] },
);
const bindingSpec = fc.record(
  {
    policyName: fc.oneof(fc.constant('fuzz'), fc.constantFrom('', 'Not_A_Name'), json),
    validationActions: fc.oneof(
      fc.array(fc.constantFrom('Deny', 'Warn', 'Audit', 'Nope'), { maxLength: 3 }),
      json,
    ),
    paramRef: fc.oneof(
      fc.record(
        {
          name: fc.oneof(fc.constantFrom('p', 'a/b'), json),
          namespace: fc.oneof(fc.constantFrom('default', ''), json),
          selector: fc.oneof(fc.constant({}), json),
          parameterNotFoundAction: fc.oneof(fc.constantFrom('Allow', 'Deny', 'Other'), json),
        },
        { requiredKeys: [] },
      ),
      json,
    ),
    matchResources,
  },
  { requiredKeys: [] },
);

function wellFormed(status: number, body: unknown): void {
  expect(status === 200 || status === 201 || (status >= 400 && status < 500), JSON.stringify(body)).toBe(
    true,
  );
  if (status >= 400) expect(body).toMatchObject({ kind: 'Status', status: 'Failure', code: status });
}

describe('random policies and bindings never crash the server', () => {
  it('a write is a 201 or a 4xx, and a ConfigMap write after it is answered, never with a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(policySpec, json), fc.oneof(bindingSpec, json), async (spec, bindingBody) => {
        await api.request(VAPB, { method: 'DELETE' });
        await api.request(VAP, { method: 'DELETE' });
        await api.request(CM, { method: 'DELETE' });
        const created = await api.request(VAP, {
          method: 'POST',
          body: {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'fuzz' },
            spec,
          },
        });
        wellFormed(created.status, created.json);
        const bound = await api.request(VAPB, {
          method: 'POST',
          body: {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: 'fuzz' },
            spec: bindingBody,
          },
        });
        wellFormed(bound.status, bound.json);
        const write = await api.request(CM, {
          method: 'POST',
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'c', labels: { a: 'b' } },
            data: { x: 'y' },
          },
        });
        wellFormed(write.status, write.json);
      }),
      { numRuns: 150, seed: 15 },
    );
  });

  it('well-formed policies with random expressions: stored ones are evaluated without a 5xx', async () => {
    const counts = { stored: 0, denied: 0 };
    const compiling = fc.constantFrom(
      "object.data.x == 'y'",
      "object.data.missing == 'a'",
      'size(object.data) > 1',
      "params.data.max == '1'",
      'variables.v == 1',
      'variables.v > 0 && has(object.data.x)',
      'oldObject == null',
      "request.operation == 'CREATE'",
      "namespaceObject.metadata.name == 'default'",
      "object.metadata.name.matches('^[a-z]+$')",
      '1 / 0 == 1',
      'int(object.data.x) > 2',
      '[1, 2, 3].all(a, [1, 2, 3].all(b, a + b > 1))',
    );
    const messages = fc.constantFrom(
      "'m: ' + object.data.x",
      'object.data.missing',
      'string(1 / 0)',
      "'a\\nb'",
      "''",
    );
    const someExpression = fc.oneof(
      { arbitrary: compiling, weight: 9 },
      { arbitrary: expression, weight: 1 },
    );
    const arb = fc.record({
      failurePolicy: fc.constantFrom('Fail', 'Ignore'),
      withParams: fc.constant(true),
      variables: fc.array(
        fc.record({
          name: fc.constant('v'),
          expression: fc.constantFrom(
            'size(object.data)',
            'int(object.data.missing)',
            '1 / 0',
            'int(object.data.x)',
          ),
        }),
        { maxLength: 1 },
      ),
      matchConditions: fc.uniqueArray(
        fc.record({ name: fc.constantFrom('a', 'b'), expression: someExpression }),
        {
          maxLength: 2,
          selector: (c) => c.name,
        },
      ),
      validations: fc.array(
        fc.record({ expression: someExpression, messageExpression: fc.option(messages, { nil: undefined }) }),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
      auditAnnotations: fc.uniqueArray(
        fc.record({
          key: fc.constantFrom('k', 'l'),
          valueExpression: fc.constantFrom(
            "'v'",
            'null',
            'object.data.x',
            'string(size(object.data))',
            'object.data.missing',
          ),
        }),
        { maxLength: 2, selector: (a) => a.key },
      ),
      actions: fc.constantFrom(['Deny'], ['Warn'], ['Audit'], ['Deny', 'Audit']),
      paramRef: fc.constantFrom(
        undefined,
        { name: 'p', parameterNotFoundAction: 'Allow' },
        { name: 'p', parameterNotFoundAction: 'Deny' },
        { selector: {}, parameterNotFoundAction: 'Deny' },
      ),
    });
    await fc.assert(
      fc.asyncProperty(arb, async (p) => {
        await api.request(VAPB, { method: 'DELETE' });
        await api.request(VAP, { method: 'DELETE' });
        await api.request(CM, { method: 'DELETE' });
        const spec = {
          failurePolicy: p.failurePolicy,
          ...(p.withParams ? { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } : {}),
          matchConstraints: {
            resourceRules: [
              { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
            ],
          },
          variables: p.variables,
          matchConditions: p.matchConditions,
          validations: p.validations,
          auditAnnotations: p.auditAnnotations,
        };
        const created = await api.request(VAP, {
          method: 'POST',
          body: {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name: 'fuzz' },
            spec,
          },
        });
        wellFormed(created.status, created.json);
        if (created.status !== 201) return;
        counts.stored++;
        const bound = await api.request(VAPB, {
          method: 'POST',
          body: {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name: 'fuzz' },
            spec: {
              policyName: 'fuzz',
              validationActions: p.actions,
              ...(p.paramRef === undefined ? {} : { paramRef: p.paramRef }),
            },
          },
        });
        expect(bound.status).toBe(201);
        const write = await api.request(CM, {
          method: 'POST',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { x: 'y' } },
        });
        wellFormed(write.status, write.json);
        if (write.status !== 201) counts.denied++;
      }),
      { numRuns: 120, seed: 16 },
    );
    // the property must reach admission: many policies stored, some requests denied
    expect(counts.stored).toBeGreaterThan(30);
    expect(counts.denied).toBeGreaterThan(5);
  });
});
