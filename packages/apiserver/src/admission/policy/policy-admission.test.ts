import { describe, expect, it } from 'vitest';
import type { AdmissionAttributes, JsonObject } from '../types.ts';
import { bindingCauses, defaultBinding, defaultPolicy, policyCauses } from './causes.ts';
import { PolicyDeniedError } from './errors.ts';
import type { ParamSource } from './params.ts';
import { PolicyAdmission } from './policy-admission.ts';

const RULES = {
  resourceRules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
};

function attributes(overrides: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subResource: '',
    namespaced: true,
    namespace: 'default',
    name: 'c',
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'default' },
      data: { a: '1' },
    },
    oldObject: null,
    dryRun: false,
    options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    userInfo: { username: 'admin' },
    ...overrides,
  };
}

function vap(name: string, spec: JsonObject, resourceVersion = '1'): JsonObject {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion },
    spec: { matchConstraints: RULES, ...spec },
  };
}

function vapb(name: string, policyName: string, spec: JsonObject = {}): JsonObject {
  return { metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } };
}

function configMaps(objects: Record<string, JsonObject>, namespaced = true): ParamSource {
  return {
    namespaced,
    get: async (namespace, name) => objects[`${namespace}/${name}`],
    list: async (namespace) =>
      Object.entries(objects)
        .filter(([key]) => key.startsWith(`${namespace}/`))
        .map(([, value]) => value),
  };
}

function admission(
  policies: () => readonly JsonObject[],
  bindings: readonly JsonObject[],
  params: Record<string, ParamSource> = {},
): PolicyAdmission {
  return new PolicyAdmission({
    listPolicies: async () => policies(),
    listBindings: async () => bindings,
    namespace: async (name) => ({ metadata: { name, labels: { team: 'a' } } }),
    params: (apiVersion, kind) => params[`${apiVersion}/${kind}`],
  });
}

async function denial(run: Promise<void>): Promise<string> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PolicyDeniedError);
  return (error as PolicyDeniedError).message;
}

const ignore = (): void => undefined;

describe('PolicyAdmission', () => {
  it('compiles a policy once per uid and resourceVersion, not on every reload', async () => {
    let reads = 0;
    let version = '1';
    const policy = (): JsonObject => {
      const object = vap('p', {}, version);
      Object.defineProperty(object.spec, 'validations', {
        enumerable: true,
        get: () => {
          reads++;
          return [{ expression: "object.data.a == '1'" }];
        },
      });
      return object;
    };
    const policies = admission(() => [policy()], [vapb('b', 'p')]);
    await policies.validate(attributes(), ignore);
    policies.invalidate();
    await policies.validate(attributes(), ignore);
    expect(reads).toBe(1);
    version = '2';
    policies.invalidate();
    await policies.validate(attributes(), ignore);
    expect(reads).toBe(2);
  });

  it('a policy stored without validation: its compile error follows failurePolicy', async () => {
    const broken = vap('p', { failurePolicy: 'Fail', validations: [{ expression: 'object.data.a ==' }] });
    const message = await denial(admission(() => [broken], [vapb('b', 'p')]).validate(attributes(), ignore));
    expect(message).toMatch(
      /^configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: compilation error: compilation failed: ERROR: <input>:1:/,
    );
    const ignored = vap('p', { failurePolicy: 'Ignore', validations: [{ expression: 'object.data.a ==' }] });
    await admission(() => [ignored], [vapb('b', 'p')]).validate(attributes(), ignore);
  });

  it('an unknown paramKind is a policy configuration error', async () => {
    const policy = vap('p', {
      paramKind: { apiVersion: 'v1', kind: 'Nope' },
      validations: [{ expression: 'true' }],
    });
    const message = await denial(
      admission(
        () => [policy],
        [vapb('b', 'p', { paramRef: { name: 'x', parameterNotFoundAction: 'Deny' } })],
      ).validate(attributes(), ignore),
    );
    expect(message).toBe(
      "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: '/v1, Kind=Nope'",
    );
  });

  it('a namespaced param for a cluster-scoped request, and a selector evaluating every param', async () => {
    const policy = vap('p', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
      },
      validations: [
        {
          expression: 'object.metadata.name != params.data.forbidden',
          messageExpression: "'not ' + params.data.forbidden",
        },
      ],
    });
    const source = configMaps({
      'default/one': { metadata: { name: 'one', labels: { use: 'yes' } }, data: { forbidden: 'c' } },
      'default/two': { metadata: { name: 'two', labels: { use: 'yes' } }, data: { forbidden: 'd' } },
      'default/off': { metadata: { name: 'off' }, data: { forbidden: 'e' } },
    });
    const selected = vapb('b', 'p', {
      paramRef: { selector: { matchLabels: { use: 'yes' } }, parameterNotFoundAction: 'Allow' },
    });
    const policies = admission(() => [policy], [selected], { 'v1/ConfigMap': source });
    expect(await denial(policies.validate(attributes(), ignore))).toMatch(/denied request: not c$/);
    expect(
      await denial(
        policies.validate(attributes({ name: 'd', object: { metadata: { name: 'd' }, data: {} } }), ignore),
      ),
    ).toMatch(/denied request: not d$/);
    await policies.validate(attributes({ name: 'e', object: { metadata: { name: 'e' }, data: {} } }), ignore);
    const namespace = attributes({
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespaced: false,
      namespace: '',
      name: 'ns',
      object: { metadata: { name: 'ns' } },
    });
    expect(await denial(policies.validate(namespace, ignore))).toBe(
      "namespaces \"ns\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
    );
  });

  it('the runtime budget is shared by all validations of one evaluation', async () => {
    const expensive =
      '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))';
    const policy = vap('p', {
      failurePolicy: 'Fail',
      validations: Array.from({ length: 12 }, () => ({ expression: expensive })),
    });
    const message = await denial(admission(() => [policy], [vapb('b', 'p')]).validate(attributes(), ignore));
    expect(message).toMatch(
      /denied request: validation failed due to running out of cost budget, no further validation rules will be run$/,
    );
  }, 20_000);

  it('an audit annotation that fails under Fail denies even for an Audit-only binding; namespaceObject is the namespace', async () => {
    const policy = vap('p', {
      auditAnnotations: [
        { key: 'team', valueExpression: 'string(namespaceObject.metadata.labels.team)' },
        { key: 'bad', valueExpression: 'string(object.data.missing)' },
      ],
    });
    const audit = vapb('b', 'p', { validationActions: ['Audit'] });
    expect(await denial(admission(() => [policy], [audit]).validate(attributes(), ignore))).toMatch(
      /denied request: expression 'string\(object.data.missing\)' resulted in error: no such key: missing$/,
    );
    const events: unknown[] = [];
    const fine = vap('p', {
      auditAnnotations: [{ key: 'team', valueExpression: 'string(namespaceObject.metadata.labels.team)' }],
    });
    await new PolicyAdmission({
      listPolicies: async () => [fine],
      listBindings: async () => [audit],
      namespace: async (name) => ({ metadata: { name, labels: { team: 'a' } } }),
      params: () => undefined,
      onAudit: (event) => events.push(event.annotations),
    }).validate(attributes(), ignore);
    expect(events).toEqual([{ 'p/team': 'a' }]);
  });

  it('matchConditions: false skips the policy, an error follows failurePolicy', async () => {
    const spec = (failurePolicy: string): JsonObject => ({
      failurePolicy,
      matchConditions: [
        { name: 'only-a', expression: 'has(object.data.a)' },
        { name: 'broken', expression: "object.data.zzz == 'x'" },
      ],
      validations: [{ expression: 'false' }],
    });
    const fail = admission(() => [vap('p', spec('Fail'))], [vapb('b', 'p')]);
    expect(await denial(fail.validate(attributes(), ignore))).toMatch(
      /denied request: expression 'object.data.zzz == 'x'' resulted in error: no such key: zzz$/,
    );
    await fail.validate(attributes({ object: { metadata: { name: 'c' }, data: {} } }), ignore);
    await admission(() => [vap('p', spec('Ignore'))], [vapb('b', 'p')]).validate(attributes(), ignore);
  });

  it("request.userInfo's uid, groups and extra are absent when empty (kube's omitempty): has() tells", async () => {
    const POD = 'authentication.kubernetes.io/pod-name';
    const spec: JsonObject = {
      matchConditions: [
        {
          name: 'pod-bound',
          expression: `has(request.userInfo.extra) && '${POD}' in request.userInfo.extra`,
        },
      ],
      validations: [
        {
          expression: `string(request.userInfo.extra['${POD}'][0]) == 'pod-a'`,
          messageExpression: `'pod ' + string(request.userInfo.extra['${POD}'][0])`,
        },
      ],
    };
    const policies = admission(() => [vap('p', spec)], [vapb('b', 'p')]);
    const as = (extra?: Record<string, string[]>) =>
      attributes({ userInfo: { username: 'sa', ...(extra === undefined ? {} : { extra }) } });
    await policies.validate(as(), ignore);
    await policies.validate(as({}), ignore);
    await policies.validate(as({ [POD]: ['pod-a'] }), ignore);
    expect(await denial(policies.validate(as({ [POD]: ['pod-b'] }), ignore))).toMatch(/: pod pod-b$/);
    // Without the guard, a user without extras fails the condition (no such key), as on a cluster.
    const unguarded = admission(
      () => [
        vap('p', {
          ...spec,
          matchConditions: [{ name: 'c', expression: `'${POD}' in request.userInfo.extra` }],
        }),
      ],
      [vapb('b', 'p')],
    );
    expect(await denial(unguarded.validate(as(), ignore))).toMatch(/no such key: extra$/);
    const fields = admission(
      () => [
        vap('p', {
          validations: [{ expression: '!has(request.userInfo.uid) && !has(request.userInfo.groups)' }],
        }),
      ],
      [vapb('b', 'p')],
    );
    await fields.validate(attributes({ userInfo: { username: 'u', uid: '', groups: [] } }), ignore);
  });
});

describe('policy and binding validation', () => {
  it('checks rules, paramRef and names as kube words them', () => {
    const policy: JsonObject = {
      metadata: { name: 'p' },
      spec: {
        matchConstraints: {
          resourceRules: [
            {
              operations: ['CREATE', '*'],
              apiGroups: [],
              apiVersions: [''],
              resources: ['*', 'pods'],
              scope: 'Galaxy',
            },
          ],
        },
        paramKind: { apiVersion: 'a/b/c' },
        auditAnnotations: [{ key: 'Bad Key', valueExpression: '1' }],
      },
    };
    defaultPolicy(policy);
    expect(policyCauses(policy).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      'spec.paramKind.kind: Required value',
      `spec.matchConstraints.resourceRules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations`,
      'spec.matchConstraints.resourceRules[0].apiGroups: Required value',
      'spec.matchConstraints.resourceRules[0].apiVersions[0]: Required value',
      `spec.matchConstraints.resourceRules[0].resources: Invalid value: ["*","pods"]: if '*' is present, must not specify other resources without subresources`,
      'spec.matchConstraints.resourceRules[0].scope: Unsupported value: "Galaxy": supported values: "*", "Cluster", "Namespaced"',
      expect.stringMatching(
        /^spec\.auditAnnotations\[0\]\.key: Invalid value: "p\/Bad Key": name part must consist of/,
      ),
      'spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to one of [string null_type]',
    ]);
    const binding: JsonObject = {
      spec: {
        policyName: 'p',
        validationActions: ['Deny'],
        paramRef: { name: 'x', selector: {} },
        matchResources: { matchPolicy: 'Fuzzy' },
      },
    };
    defaultBinding(binding);
    expect(bindingCauses(binding).map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
      'spec.paramRef.selector: Forbidden: name and selector are mutually exclusive',
      'spec.paramRef.parameterNotFoundAction: Required value',
      'spec.matchResouces.matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
    ]);
  });
});
