import { type PolicyRule, resourceRule, urlRule } from './rbac-rules.ts';

/**
 * The part of kube-apiserver's bootstrap RBAC policy (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`)
 * a cluster user meets: `cluster-admin`; the user-facing roles `admin`, `edit` and `view`, built by
 * aggregation from `system:aggregate-to-admin`, `-edit` and `-view` (edit aggregates into admin,
 * view into edit); and what every client may do — `system:discovery` and `system:basic-user` bound
 * to `system:authenticated`, `system:public-info-viewer` bound to both `system:authenticated` and
 * `system:unauthenticated`. Written here as data; cluster-defaults.ts creates the objects.
 */

/** A bootstrap ClusterRole. */
export interface BootstrapRole {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly rules: readonly PolicyRule[];
  /** Label selectors (matchLabels) of an aggregated role. */
  readonly aggregateFrom?: Readonly<Record<string, string>>;
}

/** A bootstrap ClusterRoleBinding of the role of the same name to groups. */
export interface BootstrapBinding {
  readonly name: string;
  readonly groups: readonly string[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = [...READ, ...WRITE];
const AGGREGATE_TO = (role: string): Record<string, string> => ({
  [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true',
});

/** `system:discovery`: the discovery documents, OpenAPI, health and version. */
export const DISCOVERY_RULES: readonly PolicyRule[] = [
  urlRule(
    ['get'],
    [
      '/api',
      '/api/*',
      '/apis',
      '/apis/*',
      '/healthz',
      '/livez',
      '/openapi',
      '/openapi/*',
      '/readyz',
      '/version',
      '/version/',
    ],
  ),
];
/** `system:basic-user`: a user may ask what it may do. */
export const BASIC_USER_RULES: readonly PolicyRule[] = [
  resourceRule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
  resourceRule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
];
/** `system:public-info-viewer`: health and version, for anyone. */
export const PUBLIC_INFO_RULES: readonly PolicyRule[] = [
  urlRule(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/']),
];

/** The bootstrap ClusterRoles, in creation order. */
export const BOOTSTRAP_ROLES: readonly BootstrapRole[] = [
  {
    name: 'cluster-admin',
    rules: [resourceRule(['*'], ['*'], ['*']), urlRule(['*'], ['*'])],
  },
  { name: 'system:discovery', rules: DISCOVERY_RULES },
  { name: 'system:basic-user', rules: BASIC_USER_RULES },
  { name: 'system:public-info-viewer', rules: PUBLIC_INFO_RULES },
  { name: 'admin', rules: [], aggregateFrom: AGGREGATE_TO('admin') },
  { name: 'edit', labels: AGGREGATE_TO('admin'), rules: [], aggregateFrom: AGGREGATE_TO('edit') },
  { name: 'view', labels: AGGREGATE_TO('edit'), rules: [], aggregateFrom: AGGREGATE_TO('view') },
  {
    name: 'system:aggregate-to-admin',
    labels: AGGREGATE_TO('admin'),
    rules: [
      resourceRule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      resourceRule(READ_WRITE, ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
    ],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: AGGREGATE_TO('edit'),
    rules: [
      resourceRule(
        READ,
        [''],
        ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'],
      ),
      resourceRule(['impersonate'], [''], ['serviceaccounts']),
      resourceRule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
      resourceRule(['create'], [''], ['pods/eviction']),
      resourceRule(
        WRITE,
        [''],
        [
          'configmaps',
          'persistentvolumeclaims',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'secrets',
          'serviceaccounts',
          'services',
          'services/proxy',
        ],
      ),
      resourceRule(['create'], [''], ['serviceaccounts/token']),
      resourceRule(
        WRITE,
        ['apps'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'replicasets',
          'replicasets/scale',
          'statefulsets',
          'statefulsets/scale',
        ],
      ),
      resourceRule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
      resourceRule(WRITE, ['batch'], ['cronjobs', 'jobs']),
      resourceRule(
        WRITE,
        ['extensions'],
        [
          'daemonsets',
          'deployments',
          'deployments/rollback',
          'deployments/scale',
          'ingresses',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicationcontrollers/scale',
        ],
      ),
      resourceRule(WRITE, ['policy'], ['poddisruptionbudgets']),
      resourceRule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: AGGREGATE_TO('view'),
    rules: [
      resourceRule(
        READ,
        [''],
        [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
        ],
      ),
      resourceRule(
        READ,
        [''],
        [
          'bindings',
          'events',
          'limitranges',
          'namespaces/status',
          'pods/log',
          'pods/status',
          'replicationcontrollers/status',
          'resourcequotas',
          'resourcequotas/status',
        ],
      ),
      resourceRule(READ, [''], ['namespaces']),
      resourceRule(READ, ['discovery.k8s.io'], ['endpointslices']),
      resourceRule(
        READ,
        ['apps'],
        [
          'controllerrevisions',
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'statefulsets',
          'statefulsets/scale',
          'statefulsets/status',
        ],
      ),
      resourceRule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      resourceRule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
      resourceRule(
        READ,
        ['extensions'],
        [
          'daemonsets',
          'daemonsets/status',
          'deployments',
          'deployments/scale',
          'deployments/status',
          'ingresses',
          'ingresses/status',
          'networkpolicies',
          'replicasets',
          'replicasets/scale',
          'replicasets/status',
          'replicationcontrollers/scale',
        ],
      ),
      resourceRule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      resourceRule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
    ],
  },
];

/** The bootstrap ClusterRoleBindings (each binds the ClusterRole of its name). */
export const BOOTSTRAP_BINDINGS: readonly BootstrapBinding[] = [
  { name: 'cluster-admin', groups: ['system:masters'] },
  { name: 'system:discovery', groups: ['system:authenticated'] },
  { name: 'system:basic-user', groups: ['system:authenticated'] },
  { name: 'system:public-info-viewer', groups: ['system:authenticated', 'system:unauthenticated'] },
];
