/**
 * Realistic CRDs for the tests (written for Converge, shaped like operator-sdk/kubebuilder output).
 */
import type { CustomResourceDefinition, StructuralSchema } from '../types.ts';

/** Website: namespaced, one version, status + scale subresources, printer columns, defaults. */
export const websiteSchema: StructuralSchema = {
  type: 'object',
  description: 'Website is a static site served by the operator.',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['domain'],
      properties: {
        domain: { type: 'string', format: 'hostname', maxLength: 253, description: 'Public host name.' },
        replicas: { type: 'integer', format: 'int32', minimum: 0, maximum: 10, default: 1 },
        image: { type: 'string', pattern: '^[a-z0-9./-]+(:[A-Za-z0-9._-]+)?$', default: 'nginx:1.27' },
        tier: { type: 'string', enum: ['free', 'pro', 'enterprise'], default: 'free' },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        tls: {
          type: 'object',
          default: {},
          properties: {
            enabled: { type: 'boolean', default: false },
            secretName: { type: 'string', minLength: 1 },
          },
        },
        paths: {
          type: 'array',
          maxItems: 4,
          items: { type: 'string', minLength: 1 },
          'x-kubernetes-list-type': 'set',
        },
        env: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, value: { type: 'string' } },
          },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 3 },
        launched: { type: 'string', format: 'date-time' },
        weight: { type: 'number', minimum: 0, exclusiveMinimum: true, multipleOf: 0.5 },
        note: { type: 'string', nullable: true },
      },
    },
    status: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', format: 'int32' },
        selector: { type: 'string' },
        url: { type: 'string' },
        conditions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['type', 'status'],
            properties: {
              type: { type: 'string' },
              status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
              reason: { type: 'string' },
              lastTransitionTime: { type: 'string', format: 'date-time' },
            },
          },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
        },
      },
    },
  },
};

export const websiteCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'websites.example.com' },
  spec: {
    group: 'example.com',
    names: {
      plural: 'websites',
      singular: 'website',
      kind: 'Website',
      shortNames: ['ws'],
      categories: ['all'],
    },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: websiteSchema },
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.replicas',
            statusReplicasPath: '.status.replicas',
            labelSelectorPath: '.status.selector',
          },
        },
        additionalPrinterColumns: [
          { name: 'Domain', type: 'string', jsonPath: '.spec.domain' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: 'Tier', type: 'string', priority: 1, jsonPath: '.spec.tier' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        selectableFields: [{ jsonPath: '.spec.tier' }],
      },
    ],
  },
};

const dbSpec = (extra: Record<string, StructuralSchema>): StructuralSchema => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        engine: { type: 'string', enum: ['postgres', 'mysql'] },
        storageGB: { type: 'integer', minimum: 1 },
        ...extra,
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
});

/** Database: cluster-scoped, two versions with different schemas, v1beta1 deprecated. */
export const databaseCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'databases.data.example.org' },
  spec: {
    group: 'data.example.org',
    names: { plural: 'databases', kind: 'Database', shortNames: ['db'] },
    scope: 'Cluster',
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: false,
        deprecated: true,
        deprecationWarning: 'data.example.org/v1beta1 Database is deprecated; use v1',
        schema: { openAPIV3Schema: dbSpec({}) },
      },
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: dbSpec({
            backup: { type: 'object', properties: { schedule: { type: 'string' } } },
          }),
        },
        subresources: { status: {} },
      },
    ],
  },
};

/** Job template CRD: an embedded resource, preserve-unknown-fields and nested defaults. */
export const pipelineSchema: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
        steps: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              retries: { type: 'integer', default: 3 },
              with: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
        options: {
          type: 'object',
          default: { timeout: '10m' },
          properties: { timeout: { type: 'string' }, parallel: { type: 'boolean', default: true } },
        },
        raw: { 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

export const pipelineCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'pipelines.ci.example.com' },
  spec: {
    group: 'ci.example.com',
    names: { plural: 'pipelines', singular: 'pipeline', kind: 'Pipeline', listKind: 'PipelineList' },
    scope: 'Namespaced',
    versions: [
      { name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: pipelineSchema } },
    ],
  },
};

/** A deep copy with `mutate` applied, for building invalid variants. */
// biome-ignore lint/suspicious/noExplicitAny: tests write malformed values into the copy.
export function variant<T>(value: T, mutate: (draft: any) => void): T {
  const copy = structuredClone(value) as T;
  mutate(copy);
  return copy;
}
