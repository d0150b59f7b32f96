import type { KubeObject } from '@converge/runtime';
import type { ScaleSpec, Strategy } from './api-resource.ts';
import { GROUP_SPECS, zeroValued } from './builtin-specs-groups.ts';
import { crdStrategy } from './crd-strategy.ts';
import { getPath } from './json-util.ts';
import { configMapStrategy, secretStrategy } from './strategies-config.ts';
import {
  eventStrategy,
  leaseStrategy,
  namespaceStrategy,
  podStrategy,
  serviceAccountStrategy,
} from './strategies-core.ts';
import { serviceStrategy } from './strategies-network.ts';
import {
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStrategy,
} from './strategies-policy.ts';
import {
  deploymentStrategy,
  jobStrategy,
  mutatingWebhookStrategy,
  replicaSetStrategy,
  statefulSetStrategy,
  validatingWebhookStrategy,
} from './strategies-workloads.ts';

/** How one built-in kind is served. */
export interface BuiltinSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /** `native`: the store keeps status apart; `emulated`: the server does (status set on create). */
  readonly status?: 'native' | 'emulated';
  /** `true`: the apps/v1 workloads' scale subresource; or how this kind's works. */
  readonly scale?: boolean | ScaleSpec;
  readonly generation: boolean;
  readonly strategy: Strategy;
  readonly selectableFields?: readonly string[];
  readonly fieldValue?: (object: KubeObject, path: string) => string | undefined;
  /** Top-level fields besides apiVersion, kind and metadata. */
  readonly fields: string;
  /** The verbs served, when not every REST verb (`['create']` for the review kinds). */
  readonly verbs?: readonly string[];
}

/** A create-only kind: a review (reviews.ts) or the legacy `bindings` (pod-subresources.ts); nothing is stored. */
function review(group: string, kind: string, namespaced = false): BuiltinSpec {
  return {
    group,
    version: 'v1',
    kind,
    plural: `${kind.toLowerCase()}s`,
    namespaced,
    generation: false,
    strategy: {},
    fields: 'spec status',
    verbs: ['create'],
  };
}

/** The scale subresource of apps/v1 workloads. */
export const WORKLOAD_SCALE: ScaleSpec = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  selectorFromSpec: true,
};

function fieldString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Event field selectors: `source` is `source.component`, `reportingComponent` as stored. */
function eventFieldValue(object: KubeObject, path: string): string | undefined {
  if (path === 'source') return fieldString(getPath(object, 'source.component'));
  return fieldString(getPath(object, path));
}

/** The built-in kinds, in the order kube-apiserver lists them. */
export const BUILTIN_SPECS: readonly BuiltinSpec[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
    status: 'emulated',
    generation: false,
    strategy: namespaceStrategy,
    selectableFields: ['status.phase'],
    fields: 'spec status',
  },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    shortNames: ['cm'],
    generation: false,
    strategy: configMapStrategy,
    fields: 'data binaryData immutable',
  },
  {
    group: '',
    version: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    namespaced: true,
    generation: false,
    strategy: secretStrategy,
    selectableFields: ['type'],
    fields: 'data stringData type immutable',
  },
  {
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    shortNames: ['sa'],
    generation: false,
    strategy: serviceAccountStrategy,
    fields: 'secrets imagePullSecrets automountServiceAccountToken',
  },
  {
    group: '',
    version: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    status: 'native',
    generation: false,
    strategy: serviceStrategy,
    selectableFields: ['spec.clusterIP', 'spec.type'],
    fields: 'spec status',
  },
  {
    group: '',
    version: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: 'emulated',
    generation: false,
    strategy: podStrategy,
    selectableFields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    fields: 'spec status',
  },
  {
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    shortNames: ['ev'],
    generation: false,
    strategy: eventStrategy,
    fieldValue: eventFieldValue,
    selectableFields: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    fields:
      'involvedObject reason message source firstTimestamp lastTimestamp count type eventTime series action related reportingComponent reportingInstance',
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: 'native',
    scale: true,
    generation: true,
    strategy: deploymentStrategy,
    fields: 'spec status',
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    status: 'native',
    scale: true,
    generation: true,
    strategy: replicaSetStrategy,
    selectableFields: ['status.replicas'],
    fieldValue: zeroValued({ 'status.replicas': '0' }),
    fields: 'spec status',
  },
  {
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    status: 'native',
    scale: true,
    generation: true,
    strategy: statefulSetStrategy,
    fields: 'spec status',
  },
  {
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    plural: 'jobs',
    namespaced: true,
    categories: ['all'],
    status: 'native',
    generation: true,
    strategy: jobStrategy,
    selectableFields: ['status.successful'],
    fields: 'spec status',
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    generation: false,
    strategy: leaseStrategy,
    fields: 'spec',
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: 'native',
    generation: true,
    strategy: crdStrategy,
    fields: 'spec status',
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'MutatingWebhookConfiguration',
    plural: 'mutatingwebhookconfigurations',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    strategy: mutatingWebhookStrategy,
    fields: 'webhooks',
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    strategy: validatingWebhookStrategy,
    fields: 'webhooks',
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    namespaced: false,
    categories: ['api-extensions'],
    status: 'native',
    generation: true,
    strategy: validatingAdmissionPolicyStrategy,
    fields: 'spec status',
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    plural: 'validatingadmissionpolicybindings',
    namespaced: false,
    categories: ['api-extensions'],
    generation: true,
    strategy: validatingAdmissionPolicyBindingStrategy,
    fields: 'spec',
  },
  review('', 'Binding', true),
  review('authentication.k8s.io', 'SelfSubjectReview'),
  review('authentication.k8s.io', 'TokenReview'),
  review('authorization.k8s.io', 'LocalSubjectAccessReview', true),
  review('authorization.k8s.io', 'SelfSubjectAccessReview'),
  review('authorization.k8s.io', 'SelfSubjectRulesReview'),
  review('authorization.k8s.io', 'SubjectAccessReview'),
  ...GROUP_SPECS,
];
