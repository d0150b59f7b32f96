import type { JsonObject } from './api-resource.ts';

/** `[OpenAPI type, description]` of one top-level field; `map` is an object of strings. */
type FieldDoc = readonly [
  'object' | 'map' | 'string' | 'boolean' | 'integer' | 'array' | 'bytes-map',
  string,
];

interface KindDoc {
  readonly description: string;
  readonly fields: Readonly<Record<string, FieldDoc>>;
}

const SPEC: FieldDoc = ['object', 'The desired behaviour of the object.'];
const STATUS: FieldDoc = ['object', 'The most recently observed state of the object. Read-only for clients.'];

/** Short documentation of the built-in kinds' top-level fields (for OpenAPI and `kubectl explain`). */
const DOCS: Readonly<Record<string, KindDoc>> = {
  Namespace: { description: 'Namespace provides a scope for names.', fields: { spec: SPEC, status: STATUS } },
  ConfigMap: {
    description: 'ConfigMap holds configuration data for pods to consume.',
    fields: {
      data: ['map', 'Configuration data as UTF-8 strings, by key.'],
      binaryData: ['bytes-map', 'Binary configuration data (base64 encoded), by key.'],
      immutable: ['boolean', 'If true, the data cannot be changed; only the object can be deleted.'],
    },
  },
  Secret: {
    description: 'Secret holds secret data of a certain type.',
    fields: {
      data: ['bytes-map', 'Secret data (base64 encoded), by key.'],
      stringData: ['map', 'Write-only convenience: plain strings merged into data on write.'],
      type: ['string', 'Used to facilitate programmatic handling of secret data. Default Opaque.'],
      immutable: ['boolean', 'If true, the data cannot be changed; only the object can be deleted.'],
    },
  },
  ServiceAccount: {
    description: 'ServiceAccount binds together a name, secrets and image pull secrets.',
    fields: {
      secrets: ['array', 'Secrets pods running as this service account may use.'],
      imagePullSecrets: ['array', 'Secrets used to pull images for pods of this service account.'],
      automountServiceAccountToken: ['boolean', 'Whether pods get an API token mounted automatically.'],
    },
  },
  Service: {
    description: 'Service is a named abstraction of a network service.',
    fields: { spec: SPEC, status: STATUS },
  },
  Pod: {
    description: 'Pod is a collection of containers that run on a host.',
    fields: { spec: SPEC, status: STATUS },
  },
  Event: {
    description: 'Event is a report of an event somewhere in the cluster.',
    fields: {
      involvedObject: ['object', 'The object this event is about.'],
      reason: ['string', 'A short, machine-understandable reason for the transition.'],
      message: ['string', 'A human-readable description of the status of this operation.'],
      source: ['object', 'The component reporting this event.'],
      firstTimestamp: ['string', 'When the event was first recorded.'],
      lastTimestamp: ['string', 'When the most recent occurrence was recorded.'],
      count: ['integer', 'The number of times this event has occurred.'],
      type: ['string', 'Normal or Warning.'],
      eventTime: ['string', 'When this event was first observed (MicroTime).'],
      series: ['object', 'Data about the event series this event represents.'],
      action: ['string', 'What action was taken or failed regarding the object.'],
      related: ['object', 'A secondary object for more complex actions.'],
      reportingComponent: ['string', 'The controller that emitted this event.'],
      reportingInstance: ['string', 'The ID of the controller instance.'],
    },
  },
  Deployment: {
    description: 'Deployment enables declarative updates for Pods and ReplicaSets.',
    fields: { spec: SPEC, status: STATUS },
  },
  ReplicaSet: {
    description: 'ReplicaSet ensures a number of pod replicas run at any time.',
    fields: { spec: SPEC, status: STATUS },
  },
  StatefulSet: {
    description: 'StatefulSet runs pods with consistent identities.',
    fields: { spec: SPEC, status: STATUS },
  },
  Job: {
    description: 'Job represents the configuration of a single job.',
    fields: { spec: SPEC, status: STATUS },
  },
  Lease: { description: 'Lease defines a lease concept (leader election).', fields: { spec: SPEC } },
  CustomResourceDefinition: {
    description: 'CustomResourceDefinition represents a resource served by the API server.',
    fields: { spec: SPEC, status: STATUS },
  },
  MutatingWebhookConfiguration: {
    description: 'MutatingWebhookConfiguration describes admission webhooks that may change objects.',
    fields: { webhooks: ['array', 'The webhooks and the resources and operations they apply to.'] },
  },
  ValidatingWebhookConfiguration: {
    description: 'ValidatingWebhookConfiguration describes admission webhooks that accept or reject objects.',
    fields: { webhooks: ['array', 'The webhooks and the resources and operations they apply to.'] },
  },
  ValidatingAdmissionPolicy: {
    description: 'ValidatingAdmissionPolicy describes CEL checks the API server runs on matching requests.',
    fields: { spec: SPEC, status: STATUS },
  },
  ValidatingAdmissionPolicyBinding: {
    description:
      'ValidatingAdmissionPolicyBinding binds a ValidatingAdmissionPolicy to resources, with params.',
    fields: { spec: SPEC },
  },
};

const EVENTS_V1: KindDoc = {
  description: 'Event is a report of an event somewhere in the cluster (events.k8s.io).',
  fields: {
    eventTime: ['string', 'When this event was first observed (MicroTime).'],
    series: ['object', 'Data about the event series this event represents.'],
    reportingController: ['string', 'The controller that emitted this event.'],
    reportingInstance: ['string', 'The ID of the controller instance.'],
    action: ['string', 'What action was taken or failed regarding the regarding object.'],
    reason: ['string', 'Why the action was taken.'],
    regarding: ['object', 'The object this event is about.'],
    related: ['object', 'A secondary object for more complex actions.'],
    note: ['string', 'A human-readable description of the status of this operation.'],
    type: ['string', 'Normal or Warning.'],
    deprecatedSource: ['object', 'Deprecated field for core/v1 Event compatibility.'],
    deprecatedFirstTimestamp: ['string', 'Deprecated field for core/v1 Event compatibility.'],
    deprecatedLastTimestamp: ['string', 'Deprecated field for core/v1 Event compatibility.'],
    deprecatedCount: ['integer', 'Deprecated field for core/v1 Event compatibility.'],
  },
};

function fieldSchema([type, description]: FieldDoc): JsonObject {
  switch (type) {
    case 'map':
      return { type: 'object', additionalProperties: { type: 'string', default: '' }, description };
    case 'bytes-map':
      return { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description };
    case 'object':
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description };
    case 'array':
      return {
        type: 'array',
        items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        description,
      };
    case 'string':
    case 'boolean':
    case 'integer':
      return { type, description };
  }
}

/** The OpenAPI v3 schema of a built-in kind (top-level fields documented; nested ones open), or undefined. */
export function builtinKindSchema(group: string, kind: string): JsonObject | undefined {
  const doc = group === 'events.k8s.io' ? EVENTS_V1 : DOCS[kind];
  if (doc === undefined) return undefined;
  const properties: JsonObject = {};
  for (const [name, field] of Object.entries(doc.fields)) properties[name] = fieldSchema(field);
  return { description: doc.description, type: 'object', properties };
}
