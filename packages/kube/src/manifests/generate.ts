import type { PermissionRule, ResourceType } from '@converge/runtime';
import { crdsOf, kindOf } from '../kind/index.ts';
import { dockerfileOf, dockerignoreOf } from './dockerfile.ts';
import { fencingPolicy } from './fencing.ts';
import { type ManifestOptions, type ResolvedManifestOptions, resolveManifestOptions } from './options.ts';
import { EVENT_RULES, FENCES_RULE, policyRules } from './rbac.ts';
import { leaseVerbs, shardGroupRbac } from './sharding.ts';

/** A Kubernetes object as written to YAML (keys in the order Kubernetes documents them). */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly [field: string]: unknown;
}

/** What the manifests are generated from: a Manager's `permissions` (or the manager itself). */
export interface PermissionSource {
  rules(): readonly PermissionRule[];
  types(): readonly ResourceType[];
}

/** A Manager, as far as manifests care: its permissions and (for the default of `webhooks`) its webhooks. */
export interface ManifestSource {
  readonly permissions: PermissionSource;
  readonly webhooks?: readonly unknown[];
}

/**
 * Everything `converge manifests` writes, as objects: each in its own field, and `objects` in the
 * order to apply them (Namespace and CRDs first, the Deployment last).
 */
export interface ManifestSet {
  readonly options: ResolvedManifestOptions;
  readonly namespace: Manifest;
  readonly serviceAccount: Manifest;
  /** The ClusterRole for cluster-wide rules, then a Role per namespace of namespaced declarations. */
  readonly roles: readonly Manifest[];
  /** A binding of the ServiceAccount to each of {@link roles}, in the same order. */
  readonly roleBindings: readonly Manifest[];
  /**
   * Leases (and Events) in the operator's namespace: a Role and its binding; empty without leader
   * election. With a shard group too, the Role also grants the Lease membership's verbs.
   */
  readonly leaderElection: readonly Manifest[];
  /**
   * With a shard group and without leader election: a Role granting the Lease membership's verbs
   * in the operator's namespace, and its binding; empty otherwise.
   */
  readonly shardGroup: readonly Manifest[];
  /**
   * Leader fencing on the cluster: a ValidatingAdmissionPolicy whose param is the Lease, and its
   * binding ({@link fencingPolicy}); empty without leader election, with a shard group (every
   * member writes) or with `fencingPolicy: false`.
   */
  readonly fencing: readonly Manifest[];
  /** A CRD for every wired type that came from `defineKind`, sorted by name. */
  readonly crds: readonly Manifest[];
  readonly deployment: Manifest;
  /** The metrics Service, unless `metricsService: false`. */
  readonly metricsService: Manifest | undefined;
  /** The webhook Service, with `webhooks`. */
  readonly webhookService: Manifest | undefined;
  readonly objects: readonly Manifest[];
  /** The container build (decision 5 of issue 19). */
  readonly dockerfile: string;
  readonly dockerignore: string;
}

/** The labels every generated object carries. */
export function manifestLabels(name: string): Record<string, string> {
  return { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'converge' };
}

function permissionsOf(source: PermissionSource | ManifestSource): PermissionSource {
  return 'permissions' in source ? source.permissions : source;
}

/**
 * The deploy artefacts of an operator from the permissions its wiring recorded (see the runtime's
 * `Permissions`): Namespace, ServiceAccount, a ClusterRole and binding for the cluster-wide rules,
 * a Role and binding per namespace of namespaced declarations, a Role for leader election (and for
 * a shard group's member Leases), CRDs
 * for every wired `defineKind` type, a hardened Deployment running `converge run`, a metrics
 * Service, and the Dockerfile. Deterministic: the same wiring and options give equal output.
 * Throws an OptionsError for a bad option.
 *
 * @example
 * const manager = new Manager({ backend });         // never started: nothing is contacted
 * await operator(manager);                          // wire
 * const set = generateManifests(manager, { name: 'website-operator', image: 'ghcr.io/me/op:v1' });
 * for (const [path, text] of configFiles(set)) writeFileSync(join('config', path), text);
 */
export function generateManifests(
  source: PermissionSource | ManifestSource,
  options: ManifestOptions,
): ManifestSet {
  const hasWebhooks = 'permissions' in source && (source.webhooks?.length ?? 0) > 0;
  const o = resolveManifestOptions(options, hasWebhooks);
  const permissions = permissionsOf(source);
  const labels = manifestLabels(o.name);
  const meta = (name: string, namespace?: string) => ({
    name,
    ...(namespace === undefined ? {} : { namespace }),
    labels,
  });
  const subject = { kind: 'ServiceAccount', name: o.name, namespace: o.namespace };
  const rules = [
    ...permissions.rules(),
    ...(o.events ? EVENT_RULES : []),
    ...(o.webhooks ? managedWebhookRules(o.namespace) : []),
  ];
  const clusterWide = rules.filter((r) => r.namespace === undefined);
  const namespaces = [
    ...new Set(rules.flatMap((r) => (r.namespace === undefined ? [] : [r.namespace]))),
  ].sort();
  const roleName = `${o.name}-manager-role`;
  const bindingName = `${o.name}-manager-rolebinding`;
  const roles: Manifest[] = [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(roleName),
      // Leaders and shard members announce their fences (see FENCES_RULE).
      rules: [
        ...policyRules(clusterWide),
        ...(o.leaderElection || o.shardGroup !== undefined ? [FENCES_RULE] : []),
      ],
    },
    ...namespaces.map((ns) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(roleName, ns),
      rules: policyRules(rules.filter((r) => r.namespace === ns)),
    })),
  ];
  const roleBindings: Manifest[] = [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(bindingName),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [subject],
    },
    ...namespaces.map((ns) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(bindingName, ns),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
      subjects: [subject],
    })),
  ];
  const leaderElection: Manifest[] = o.leaderElection
    ? [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: meta(`${o.name}-leader-election-role`, o.namespace),
          rules: policyRules([
            { group: 'coordination.k8s.io', resource: 'leases', verbs: leaseVerbs(o) },
            ...EVENT_RULES,
          ]),
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: meta(`${o.name}-leader-election-rolebinding`, o.namespace),
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name: `${o.name}-leader-election-role`,
          },
          subjects: [subject],
        },
      ]
    : [];
  const shardGroup = shardGroupRbac(o, meta, subject);
  const kinds = permissions.types().flatMap((type) => {
    const kind = kindOf(type);
    return kind === undefined ? [] : [kind];
  });
  const crds = (crdsOf(kinds) as unknown as Manifest[]).sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
  const fencing = fencingPolicy(o, permissions.rules(), labels, webhookServiceName(o));
  const namespace: Manifest = { apiVersion: 'v1', kind: 'Namespace', metadata: meta(o.namespace) };
  const serviceAccount: Manifest = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta(o.name, o.namespace),
  };
  const deployment = deploymentOf(o, labels);
  const metricsService: Manifest | undefined = o.metricsService
    ? {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(`${o.name}-metrics`, o.namespace),
        spec: {
          selector: { 'app.kubernetes.io/name': o.name },
          ports: [{ name: 'metrics', port: o.metricsPort, protocol: 'TCP', targetPort: 'metrics' }],
        },
      }
    : undefined;
  const webhookService: Manifest | undefined = o.webhooks
    ? {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(webhookServiceName(o), o.namespace),
        spec: {
          selector: { 'app.kubernetes.io/name': o.name },
          ports: [{ name: 'webhook', port: 443, protocol: 'TCP', targetPort: 'webhook-server' }],
        },
      }
    : undefined;
  return {
    options: o,
    namespace,
    serviceAccount,
    roles,
    roleBindings,
    leaderElection,
    shardGroup,
    fencing,
    crds,
    deployment,
    metricsService,
    webhookService,
    objects: [
      namespace,
      ...crds,
      serviceAccount,
      ...roles,
      ...roleBindings,
      ...leaderElection,
      ...shardGroup,
      ...fencing,
      deployment,
      ...(metricsService === undefined ? [] : [metricsService]),
      ...(webhookService === undefined ? [] : [webhookService]),
    ],
    dockerfile: dockerfileOf(o),
    dockerignore: dockerignoreOf(),
  };
}

/** The arguments of `converge run` in the Deployment. */
export function runArgs(o: ResolvedManifestOptions): string[] {
  return [
    'run',
    ...o.modules,
    ...(o.leaderElection
      ? [
          '--leader-elect',
          '--lease-name',
          o.leaseName,
          '--lease-namespace',
          '$(POD_NAMESPACE)',
          // The pod's name is its identity: the Lease's holderIdentity, which the fencing policy
          // compares with the pod a ServiceAccount token was bound to.
          '--identity',
          '$(POD_NAME)',
        ]
      : []),
    ...(o.shardGroup === undefined
      ? []
      : [
          '--shard-group',
          o.shardGroup,
          ...(o.shardBy === 'uid' ? ['--shard-by', 'uid'] : []),
          // Member Leases live where the leader's does; the pod's name is the member's identity.
          ...(o.leaderElection ? [] : ['--lease-namespace', '$(POD_NAMESPACE)', '--identity', '$(POD_NAME)']),
        ]),
    '--metrics-bind-address',
    `:${o.metricsPort}`,
    '--health-probe-bind-address',
    `:${o.probePort}`,
    ...(o.webhooks
      ? [
          '--webhook-port',
          String(o.webhookPort),
          '--webhook-service',
          `$(POD_NAMESPACE)/${webhookServiceName(o)}`,
        ]
      : []),
  ];
}

function webhookServiceName(o: ResolvedManifestOptions): string {
  return `${o.name}-webhook-service`;
}

/**
 * What managed webhooks do (`ManagedWebhooks`): keep the serving certificates in a Secret of the
 * operator's namespace, the webhook configurations pointing at the Service, and CRD conversions.
 */
function managedWebhookRules(namespace: string): PermissionRule[] {
  const configurations = ['create', 'delete', 'get', 'list', 'update', 'watch'];
  return [
    { group: '', resource: 'secrets', verbs: ['create', 'get', 'list', 'update', 'watch'], namespace },
    {
      group: 'admissionregistration.k8s.io',
      resource: 'mutatingwebhookconfigurations',
      verbs: configurations,
    },
    {
      group: 'admissionregistration.k8s.io',
      resource: 'validatingwebhookconfigurations',
      verbs: configurations,
    },
    {
      group: 'apiextensions.k8s.io',
      resource: 'customresourcedefinitions',
      verbs: ['get', 'list', 'update', 'watch'],
    },
  ];
}

/**
 * The operator's Deployment (decision 5 of issue 19): `converge run` as a non-root user with a
 * read-only root filesystem (an emptyDir on /tmp), no capabilities, no privilege escalation,
 * seccomp RuntimeDefault; liveness on /healthz and readiness on /readyz at the probe port;
 * the metrics port named `metrics`; `POD_NAMESPACE` from the downward API for the Lease, and
 * `POD_NAME`, the identity (`--identity` with leader election or a shard group).
 */
function deploymentOf(o: ResolvedManifestOptions, labels: Record<string, string>): Manifest {
  const selector = { 'app.kubernetes.io/name': o.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: o.name, namespace: o.namespace, labels },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels,
          annotations: { 'kubectl.kubernetes.io/default-container': 'manager' },
        },
        spec: {
          serviceAccountName: o.name,
          securityContext: {
            runAsNonRoot: true,
            // The node user of the node images: numeric, so the kubelet can check runAsNonRoot.
            runAsUser: 1000,
            runAsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          terminationGracePeriodSeconds: 40,
          containers: [
            {
              name: 'manager',
              image: o.image,
              args: runArgs(o),
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              ports: [
                { name: 'metrics', containerPort: o.metricsPort, protocol: 'TCP' },
                { name: 'probes', containerPort: o.probePort, protocol: 'TCP' },
                ...(o.webhooks
                  ? [{ name: 'webhook-server', containerPort: o.webhookPort, protocol: 'TCP' }]
                  : []),
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'probes' },
                initialDelaySeconds: 15,
                periodSeconds: 20,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'probes' },
                initialDelaySeconds: 5,
                periodSeconds: 10,
              },
              resources: o.resources,
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  };
}
