/**
 * Real kubectl against ValidatingAdmissionPolicies in the embedded API server: policies applied
 * from YAML, a Deny printed as kubectl users know it from a cluster, a Warn printed as a warning
 * with the object created, an Audit binding published on the audit channel, and a broken policy
 * refused when written.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY_AUDIT_CHANNEL, type PolicyAuditEvent } from '../../packages/apiserver/src/admission/index.ts';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;
const audits: PolicyAuditEvent[] = [];
const onAudit = (event: unknown): void => {
  audits.push(event as PolicyAuditEvent);
};

function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args, input === undefined ? {} : { input });
}

const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: replica-limit.example.com }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicas <= 5
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: replica-limit-binding.example.com }
spec:
  policyName: replica-limit.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector: { matchLabels: { environment: test } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: owner-label.example.com }
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  validations:
  - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
    message: every ConfigMap needs an owner label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: owner-label-warn.example.com }
spec:
  policyName: owner-label.example.com
  validationActions: [Warn, Audit]
`;

const deployment = (name: string, namespace: string, replicas: number): string => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: web, image: nginx }] }
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-policy-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  subscribe(POLICY_AUDIT_CHANNEL, onAudit);
  const applied = await kubectl(['apply', '-f', '-'], POLICIES);
  expect(applied.stderr).toBe('');
  expect(applied.stdout).toBe(
    'validatingadmissionpolicy.admissionregistration.k8s.io/replica-limit.example.com created\n' +
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/replica-limit-binding.example.com created\n' +
      'validatingadmissionpolicy.admissionregistration.k8s.io/owner-label.example.com created\n' +
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/owner-label-warn.example.com created\n',
  );
  expect((await kubectl(['create', 'namespace', 'tested'])).code).toBe(0);
  expect((await kubectl(['label', 'namespace', 'tested', 'environment=test'])).code).toBe(0);
});

afterAll(async () => {
  unsubscribe(POLICY_AUDIT_CHANNEL, onAudit);
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('real kubectl against ValidatingAdmissionPolicies', () => {
  it('Deny: kubectl prints the denial as a cluster does, and only the bound namespace is checked', async () => {
    const denied = await kubectl(['apply', '-f', '-'], deployment('nginx', 'tested', 6));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toBe(
      `The deployments "nginx" is invalid: : ValidatingAdmissionPolicy 'replica-limit.example.com' with binding 'replica-limit-binding.example.com' denied request: failed expression: object.spec.replicas <= 5\n`,
    );
    const elsewhere = await kubectl(['apply', '-f', '-'], deployment('nginx', 'default', 6));
    expect(elsewhere.stdout).toBe('deployment.apps/nginx created\n');
    const small = await kubectl(['apply', '-f', '-'], deployment('nginx', 'tested', 2));
    expect(small.stdout).toBe('deployment.apps/nginx created\n');
  });

  it('Warn: the ConfigMap is created and kubectl prints the warning; Audit publishes the failure', async () => {
    audits.length = 0;
    const result = await kubectl(['create', 'configmap', 'loose', '--from-literal=a=1']);
    expect(result.stderr).toBe(
      "Warning: Validation failed for ValidatingAdmissionPolicy 'owner-label.example.com' with binding 'owner-label-warn.example.com': every ConfigMap needs an owner label\n",
    );
    expect(result.stdout).toBe('configmap/loose created\n');
    expect(audits).toHaveLength(1);
    const failure = JSON.parse(
      audits[0]?.annotations['validation.policy.admission.k8s.io/validation_failure'] ?? '[]',
    ) as unknown[];
    expect(failure).toEqual([
      {
        message: 'every ConfigMap needs an owner label',
        policy: 'owner-label.example.com',
        binding: 'owner-label-warn.example.com',
        expressionIndex: 0,
        validationActions: ['Warn', 'Audit'],
      },
    ]);
  });

  it('a policy whose expression does not compile is refused when applied', async () => {
    const broken = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: broken.example.com }
spec:
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }]
  validations:
  - expression: "object.spec.replicas >"
`;
    const result = await kubectl(['apply', '-f', '-'], broken);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'The ValidatingAdmissionPolicy "broken.example.com" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas >": compilation failed: ERROR: <input>:1:',
    );
  });

  it('kubectl explain knows both kinds', async () => {
    const result = await kubectl(['explain', 'validatingadmissionpolicybindings']);
    expect(result.stderr).toBe('');
    // the schema comes from the Kubernetes 1.32 definitions, without their descriptions
    expect(result.stdout).toContain('KIND:       ValidatingAdmissionPolicyBinding');
    expect(result.stdout).toMatch(/spec\t<ValidatingAdmissionPolicyBindingSpec>/);
  });

  it('kubectl get lists the policies and bindings', async () => {
    const result = await kubectl(['get', 'validatingadmissionpolicies', '-o', 'name']);
    expect(result.stdout).toBe(
      'validatingadmissionpolicy.admissionregistration.k8s.io/owner-label.example.com\n' +
        'validatingadmissionpolicy.admissionregistration.k8s.io/replica-limit.example.com\n',
    );
  });

  it('params from a ConfigMap through paramRef; a missing param denies with Deny and skips with Allow', async () => {
    const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: max-keys.example.com }
spec:
  paramKind: { apiVersion: v1, kind: ConfigMap }
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps] }]
    namespaceSelector: { matchLabels: { checked: "yes" } }
  validations:
  - expression: size(object.data) <= int(params.data.max)
    messageExpression: "'at most ' + params.data.max + ' keys'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: max-keys-deny.example.com }
spec:
  policyName: max-keys.example.com
  validationActions: [Deny]
  paramRef: { name: limits, namespace: default, parameterNotFoundAction: Deny }
  matchResources: { namespaceSelector: { matchLabels: { params: deny } } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: max-keys-allow.example.com }
spec:
  policyName: max-keys.example.com
  validationActions: [Deny]
  paramRef: { name: absent, namespace: default, parameterNotFoundAction: Allow }
  matchResources: { namespaceSelector: { matchLabels: { params: allow } } }
`;
    expect((await kubectl(['apply', '-f', '-'], policy)).stderr).toBe('');
    for (const [ns, action] of [
      ['strict', 'deny'],
      ['lenient', 'allow'],
    ] as const) {
      expect((await kubectl(['create', 'namespace', ns])).code).toBe(0);
      expect((await kubectl(['label', 'namespace', ns, 'checked=yes', `params=${action}`])).code).toBe(0);
    }
    const configMap = (name: string, namespace: string, data: string): string => `apiVersion: v1
kind: ConfigMap
metadata: { name: ${name}, namespace: ${namespace}, labels: { owner: test } }
data: ${data}
`;
    const two = '{ a: "1", b: "2" }';
    const missing = await kubectl(['apply', '-f', '-'], configMap('two', 'strict', two));
    expect(missing.stderr).toBe(
      "The configmaps \"two\" is invalid: : ValidatingAdmissionPolicy 'max-keys.example.com' with binding 'max-keys-deny.example.com' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction\n",
    );
    const allowed = await kubectl(['apply', '-f', '-'], configMap('two', 'lenient', two));
    expect(allowed.stdout).toBe('configmap/two created\n');
    expect((await kubectl(['apply', '-f', '-'], configMap('limits', 'default', '{ max: "1" }'))).code).toBe(
      0,
    );
    const tooMany = await kubectl(['apply', '-f', '-'], configMap('two', 'strict', two));
    expect(tooMany.stderr).toBe(
      "The configmaps \"two\" is invalid: : ValidatingAdmissionPolicy 'max-keys.example.com' with binding 'max-keys-deny.example.com' denied request: at most 1 keys\n",
    );
    const one = await kubectl(['apply', '-f', '-'], configMap('one', 'strict', '{ a: "1" }'));
    expect(one.stdout).toBe('configmap/one created\n');
  });

  it('a transition check on UPDATE, matchConditions, failurePolicy Ignore, and the cost limit', async () => {
    const policies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: checks.example.com }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets] }]
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.annotations) || !('exempt' in object.metadata.annotations)"
  validations:
  - expression: "oldObject == null || object.metadata.labels.tier == oldObject.metadata.labels.tier"
    message: the tier label is immutable
  - expression: "!has(object.data) || !('cost' in object.data) || [1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, object.metadata.name.matches('^[a-z]+$')))))))"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: lenient.example.com }
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules: [{ apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [secrets] }]
  validations:
  - expression: "object.data.missing == 'x'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: checks.example.com }
spec: { policyName: checks.example.com, validationActions: [Deny] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: lenient.example.com }
spec: { policyName: lenient.example.com, validationActions: [Deny] }
`;
    expect((await kubectl(['apply', '-f', '-'], policies)).stderr).toBe('');
    const secret = (tier: string, annotations = '{}'): string => `apiVersion: v1
kind: Secret
metadata: { name: token, namespace: default, labels: { tier: ${tier} }, annotations: ${annotations} }
stringData: { a: "1" }
`;
    // failurePolicy Ignore: the lenient policy's runtime error does not block the create
    expect((await kubectl(['apply', '-f', '-'], secret('front'))).stdout).toBe('secret/token created\n');
    const changed = await kubectl(['apply', '-f', '-'], secret('back'));
    expect(changed.stderr).toBe(
      "The secrets \"token\" is invalid: : ValidatingAdmissionPolicy 'checks.example.com' with binding 'checks.example.com' denied request: the tier label is immutable\n",
    );
    // matchConditions: an exempt object is not checked
    const exempt = await kubectl(['apply', '-f', '-'], secret('back', '{ exempt: "yes" }'));
    expect(exempt.stdout).toBe('secret/token configured\n');
    const expensive = await kubectl(['create', 'secret', 'generic', 'costly', '--from-literal=cost=1']);
    expect(expensive.stderr).toMatch(
      /^error: failed to create secret secrets "costly" is forbidden: ValidatingAdmissionPolicy 'checks\.example\.com' with binding 'checks\.example\.com' denied request: expression '.*' resulted in error: operation cancelled: actual cost limit exceeded\n$/,
    );
  });
});
