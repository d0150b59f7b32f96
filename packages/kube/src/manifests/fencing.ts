import type { PermissionRule } from '@converge/runtime';
import type { Manifest } from './generate.ts';
import type { ResolvedManifestOptions } from './options.ts';

/**
 * The key of a pod-bound ServiceAccount token's user extra that names the pod (kube-apiserver
 * sets it for every token bound to a pod: the projected token every pod has mounted since 1.22).
 */
export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';

/** The verbs that write: a rule granting one of them makes its resources fenced. */
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection', '*']);

/** A rule of `matchConstraints` (`NamedRuleWithOperations`). */
export interface FencedResourceRule {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly operations: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
}

const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE'];
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Leases (the elector writes its own, every replica tries) and Events (every replica records). */
function unfenced(rule: PermissionRule): boolean {
  if (rule.group === 'coordination.k8s.io' && rule.resource === 'leases') return true;
  return (rule.group === '' || rule.group === 'events.k8s.io') && rule.resource === 'events';
}

/**
 * The resources a stale leader could write, by API group, from the operator's RBAC rules: every
 * resource (and subresource: RBAC grants those one by one, `websites/status`) with a write verb,
 * less Leases and Events. An RBAC `*` becomes `*` and `*` + `/*` (every resource and subresource).
 * Sorted, so the same permissions give the same policy.
 */
export function fencedResourceRules(rules: readonly PermissionRule[]): FencedResourceRule[] {
  const byGroup = new Map<string, Set<string>>();
  for (const rule of rules) {
    if (!rule.verbs.some((verb) => WRITE_VERBS.has(verb)) || unfenced(rule)) continue;
    let resources = byGroup.get(rule.group);
    if (resources === undefined) {
      resources = new Set();
      byGroup.set(rule.group, resources);
    }
    if (rule.resource === '*') {
      resources.add('*');
      resources.add('*/*');
    } else resources.add(rule.resource);
  }
  return [...byGroup.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([group, resources]) => ({
      apiGroups: [group],
      apiVersions: ['*'],
      operations: OPERATIONS,
      resources: [...resources].sort(),
    }));
}

/**
 * What the policy never fences: Leases, Events, and with managed webhooks what every replica
 * writes for them (their certificate Secret and webhook configurations by name, CRDs for their
 * conversion).
 */
function excluded(o: ResolvedManifestOptions, webhookService: string): FencedResourceRule[] {
  const all = { apiVersions: ['*'], operations: ['*'] };
  return [
    { apiGroups: [''], ...all, resources: ['events'] },
    { apiGroups: ['coordination.k8s.io'], ...all, resources: ['leases'] },
    { apiGroups: ['events.k8s.io'], ...all, resources: ['events'] },
    ...(o.webhooks
      ? [
          {
            apiGroups: [''],
            ...all,
            resources: ['secrets'],
            resourceNames: [`${webhookService}-webhook-certs`],
          },
          {
            apiGroups: ['admissionregistration.k8s.io'],
            ...all,
            resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
            resourceNames: [webhookService],
          },
          { apiGroups: ['apiextensions.k8s.io'], ...all, resources: ['customresourcedefinitions'] },
        ]
      : []),
  ];
}

/**
 * Leader fencing on a Kubernetes cluster (which ignores Converge's `Converge-Fence` header): a
 * ValidatingAdmissionPolicy whose param is the operator's leader Lease, and its binding. A write
 * by the operator's ServiceAccount from a pod-bound token (its user extra names the pod) is
 * allowed only when that pod is the Lease's `spec.holderIdentity` — the Deployment runs
 * `converge run --identity $(POD_NAME)` — so a paused or partitioned former leader's writes are
 * refused, whatever the verb or subresource, as soon as another replica took the Lease. The
 * refusal is a 403 whose message contains `stale fencing epoch`, which the KubeBackend turns into
 * a FencedError. Requests of other users, tokens without the pod extra, the Lease itself and
 * Events are not matched. Empty without leader election, with `fencingPolicy: false`, or when the
 * operator writes nothing.
 */
export function fencingPolicy(
  o: ResolvedManifestOptions,
  rules: readonly PermissionRule[],
  labels: Readonly<Record<string, string>>,
  webhookService: string,
): Manifest[] {
  if (!o.leaderElection || !o.fencingPolicy) return [];
  const resourceRules = fencedResourceRules(rules);
  if (resourceRules.length === 0) return [];
  const name = `${o.name}-leader-fencing`;
  const podName = `string(request.userInfo.extra['${POD_NAME_EXTRA}'][0])`;
  const holder = 'has(params.spec) && has(params.spec.holderIdentity)';
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels },
      spec: {
        failurePolicy: 'Fail',
        paramKind: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' },
        matchConstraints: {
          resourceRules,
          excludeResourceRules: excluded(o, webhookService),
        },
        matchConditions: [
          {
            name: 'operator-service-account',
            expression: `request.userInfo.username == 'system:serviceaccount:${o.namespace}:${o.name}'`,
          },
          {
            // Tokens not bound to a pod (a legacy Secret token, a cluster before 1.22) say no pod:
            // the policy cannot tell the leader from a standby there, so it lets them through.
            name: 'pod-bound-token',
            expression: `has(request.userInfo.extra) && '${POD_NAME_EXTRA}' in request.userInfo.extra`,
          },
        ],
        validations: [
          {
            expression: `${holder} && string(params.spec.holderIdentity) == ${podName}`,
            messageExpression:
              `'stale fencing epoch: pod ' + ${podName} + ' does not hold the Lease ${o.namespace}/${o.leaseName}' + ` +
              `(${holder} && string(params.spec.holderIdentity) != '' ? ' (its holder is ' + string(params.spec.holderIdentity) + ')' : ' (nobody holds it)')`,
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, labels },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        paramRef: { name: o.leaseName, namespace: o.namespace, parameterNotFoundAction: 'Allow' },
      },
    },
  ];
}
