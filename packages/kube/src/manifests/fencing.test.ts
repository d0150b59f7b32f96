import { deploymentType, type PermissionRule, Permissions, secretType } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defineKind, Type } from '../kind/index.ts';
import {
  configFiles,
  type FencedResourceRule,
  fencedResourceRules,
  generateManifests,
  helmChart,
  type Manifest,
  POD_NAME_EXTRA,
} from './index.ts';

const widget = defineKind({
  group: 'widgets.example.com',
  version: 'v1',
  kind: 'Widget',
  spec: Type.Object({ size: Type.Integer() }),
  status: Type.Object({ ready: Type.Boolean() }),
});

function permissions(): Permissions {
  const p = new Permissions();
  p.require(widget.type, ['get', 'list', 'watch', 'patch']);
  p.require(widget.type, ['update', 'patch'], { subresource: 'status' });
  p.require(deploymentType, ['get', 'create', 'delete']);
  p.require(secretType, ['get', 'list'], { namespace: 'apps' });
  p.require(secretType, ['create'], { namespace: 'apps', resourceNames: ['token'] });
  return p;
}

interface PolicySpec {
  readonly paramKind: unknown;
  readonly matchConstraints: {
    readonly resourceRules: readonly FencedResourceRule[];
    readonly excludeResourceRules: readonly FencedResourceRule[];
  };
  readonly matchConditions: readonly { name: string; expression: string }[];
  readonly validations: readonly { expression: string; messageExpression: string; reason: string }[];
}

const specOf = (policy: Manifest | undefined): PolicySpec => policy?.spec as PolicySpec;

describe('the leader fencing policy', () => {
  it('is generated with leader election: a policy whose param is the Lease, bound to it, allowing its absence', () => {
    const set = generateManifests(permissions(), { name: 'widgets' });
    const [policy, binding, ...rest] = set.fencing;
    expect(rest).toEqual([]);
    expect(policy).toMatchObject({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'widgets-leader-fencing', labels: { 'app.kubernetes.io/name': 'widgets' } },
      spec: { failurePolicy: 'Fail', paramKind: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' } },
    });
    expect(binding).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'widgets-leader-fencing', labels: policy?.metadata.labels },
      spec: {
        policyName: 'widgets-leader-fencing',
        validationActions: ['Deny'],
        paramRef: { name: 'widgets-leader', namespace: 'widgets-system', parameterNotFoundAction: 'Allow' },
      },
    });
    const spec = specOf(policy);
    expect(spec.matchConditions).toEqual([
      {
        name: 'operator-service-account',
        expression: "request.userInfo.username == 'system:serviceaccount:widgets-system:widgets'",
      },
      {
        name: 'pod-bound-token',
        expression: `has(request.userInfo.extra) && '${POD_NAME_EXTRA}' in request.userInfo.extra`,
      },
    ]);
    expect(spec.validations).toHaveLength(1);
    expect(spec.validations[0]?.reason).toBe('Forbidden');
    expect(spec.validations[0]?.messageExpression).toMatch(/^'stale fencing epoch: pod ' \+ /);
    expect(spec.validations[0]?.messageExpression).toContain('the Lease widgets-system/widgets-leader');
    // Applied after the ServiceAccount and RBAC, before the Deployment whose pods it fences.
    const kinds = set.objects.map((o) => o.kind);
    expect(kinds.indexOf('ValidatingAdmissionPolicy')).toBeLessThan(kinds.indexOf('Deployment'));
    expect(kinds.indexOf('ValidatingAdmissionPolicy') + 1).toBe(
      kinds.indexOf('ValidatingAdmissionPolicyBinding'),
    );
  });

  it("fences what the wiring's RBAC may write, with subresources, and never Leases or Events", () => {
    const p = permissions();
    p.require(
      { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true },
      ['create', 'update'],
    );
    const spec = specOf(generateManifests(p, { name: 'widgets' }).fencing[0]);
    const operations = ['CREATE', 'UPDATE', 'DELETE'];
    expect(spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['*'], operations, resources: ['secrets'] },
      { apiGroups: ['apps'], apiVersions: ['*'], operations, resources: ['deployments'] },
      {
        apiGroups: ['widgets.example.com'],
        apiVersions: ['*'],
        operations,
        resources: ['widgets', 'widgets/status'],
      },
    ]);
    expect(spec.matchConstraints.excludeResourceRules.map((r) => `${r.apiGroups[0]}/${r.resources}`)).toEqual(
      ['/events', 'coordination.k8s.io/leases', 'events.k8s.io/events'],
    );
  });

  it('with managed webhooks, leaves out what every replica writes for them', () => {
    const p = permissions();
    p.require(secretType, ['create', 'update']);
    const spec = specOf(generateManifests(p, { name: 'widgets', webhooks: true }).fencing[0]);
    expect(spec.matchConstraints.excludeResourceRules.slice(3)).toEqual([
      {
        apiGroups: [''],
        apiVersions: ['*'],
        operations: ['*'],
        resources: ['secrets'],
        resourceNames: ['widgets-webhook-service-webhook-certs'],
      },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        apiVersions: ['*'],
        operations: ['*'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        resourceNames: ['widgets-webhook-service'],
      },
      {
        apiGroups: ['apiextensions.k8s.io'],
        apiVersions: ['*'],
        operations: ['*'],
        resources: ['customresourcedefinitions'],
      },
    ]);
  });

  it('is left out with fencingPolicy: false, without leader election, and for an operator that writes nothing', () => {
    expect(generateManifests(permissions(), { name: 'w', fencingPolicy: false }).fencing).toEqual([]);
    expect(generateManifests(permissions(), { name: 'w', leaderElection: false }).fencing).toEqual([]);
    const reader = new Permissions();
    reader.require(deploymentType, ['get', 'list', 'watch']);
    const set = generateManifests(reader, { name: 'w' });
    expect(set.fencing).toEqual([]);
    expect([...configFiles(set).keys()]).not.toContain('policy/leader_fencing.yaml');
  });

  it('runs each pod with its name as the identity the Lease holds', () => {
    const container = (set: ReturnType<typeof generateManifests>) =>
      (set.deployment.spec as { template: { spec: { containers: { args: string[]; env: unknown[] }[] } } })
        .template.spec.containers[0];
    const leading = container(generateManifests(permissions(), { name: 'w' }));
    expect(leading?.args.slice(2, 9)).toEqual([
      '--leader-elect',
      '--lease-name',
      'w-leader',
      '--lease-namespace',
      '$(POD_NAMESPACE)',
      '--identity',
      '$(POD_NAME)',
    ]);
    expect(leading?.env).toContainEqual({
      name: 'POD_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
    const alone = container(generateManifests(permissions(), { name: 'w', leaderElection: false }));
    expect(alone?.args).not.toContain('--identity');
    expect(alone?.env).toContainEqual({
      name: 'POD_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
  });

  it('is written to policy/leader_fencing.yaml (in the kustomization) and a Helm template in the release namespace', () => {
    const set = generateManifests(permissions(), { name: 'widgets' });
    const files = configFiles(set);
    const docs = parseAllDocuments(files.get('policy/leader_fencing.yaml') ?? '').map((d) => d.toJS());
    expect(docs).toEqual(set.fencing);
    expect(files.get('kustomization.yaml')).toContain('- policy/leader_fencing.yaml');
    const template = helmChart(set).get('templates/leader_fencing.yaml') ?? '';
    expect(template).toContain("'system:serviceaccount:{{ .Release.Namespace }}:widgets'");
    expect(template).toContain('namespace: {{ .Release.Namespace }}');
    expect(template).toContain('the Lease {{ .Release.Namespace }}/widgets-leader');
    expect(template).not.toContain('widgets-system');
  });

  it('property: a resource is fenced exactly when the RBAC lets the operator write it (Leases and Events aside)', () => {
    const rule = fc.record({
      group: fc.constantFrom('', 'apps', 'coordination.k8s.io', 'events.k8s.io', 'example.com', '*'),
      resource: fc.constantFrom('pods', 'pods/status', 'deployments', 'leases', 'events', 'widgets', '*'),
      verbs: fc.subarray(
        ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', '*'],
        {
          minLength: 1,
        },
      ),
    });
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 8 }), (rules: PermissionRule[]) => {
        const fenced = fencedResourceRules(rules);
        const matched = new Set(fenced.flatMap((r) => r.resources.map((res) => `${r.apiGroups[0]} ${res}`)));
        const expected = new Set<string>();
        for (const r of rules) {
          const writes = r.verbs.some((v) => !['get', 'list', 'watch'].includes(v));
          const exempt =
            (r.group === 'coordination.k8s.io' && r.resource === 'leases') ||
            (['', 'events.k8s.io'].includes(r.group) && r.resource === 'events');
          if (!writes || exempt) continue;
          for (const res of r.resource === '*' ? ['*', '*/*'] : [r.resource])
            expected.add(`${r.group} ${res}`);
        }
        expect(matched).toEqual(expected);
        for (const r of fenced) expect(r.operations).toEqual(['CREATE', 'UPDATE', 'DELETE']);
        // One rule per group, sorted: the same permissions always give the same policy.
        const groups = fenced.map((r) => r.apiGroups[0] ?? '');
        expect(groups).toEqual([...new Set(groups)].sort());
      }),
    );
  });
});
