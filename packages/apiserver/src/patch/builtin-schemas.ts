import {
  conditions,
  keyedList,
  labelSelector,
  map,
  objectMeta,
  podSpec,
  podStatus,
  podTemplate,
  struct,
} from './builtin-pod-schema.ts';
import type { StructSchema } from './schema.ts';

/** A kind's root: its metadata plus the given fields. */
function kind(fields: Parameters<typeof struct>[0] = {}): StructSchema {
  return struct({ metadata: objectMeta, ...fields });
}

const workloadStatus = struct({ conditions });

const deployment = kind({
  spec: struct({ selector: labelSelector, template: podTemplate }),
  status: workloadStatus,
});

const replicaSet = kind({
  spec: struct({ selector: labelSelector, template: podTemplate }),
  status: workloadStatus,
});

const statefulSet = kind({
  spec: struct({ selector: labelSelector, template: podTemplate }),
  status: workloadStatus,
});

const job = kind({
  spec: struct({ selector: labelSelector, template: podTemplate }),
  // Job conditions merge by type in SMP but are atomic for apply (`+listType=atomic`).
  status: struct({ conditions: keyedList('type', struct(), { applyAtomic: true }) }),
});

const service = kind({
  spec: struct({
    ports: keyedList('port', struct(), { keys: ['port', 'protocol'], keyDefaults: { protocol: 'TCP' } }),
    selector: map({ atomic: true }),
  }),
  status: struct({ conditions }),
});

const webhooks = keyedList(
  'name',
  struct({ namespaceSelector: labelSelector, objectSelector: labelSelector }),
);

/** Patch metadata of every built-in kind the embedded apiserver serves, by `group/version/Kind`. */
const BUILTIN: ReadonlyMap<string, StructSchema> = new Map([
  ['/v1/Namespace', kind({ status: struct({ conditions }) })],
  ['/v1/ConfigMap', kind({ data: map(), binaryData: map() })],
  ['/v1/Secret', kind({ data: map(), stringData: map() })],
  ['/v1/ServiceAccount', kind({ secrets: keyedList('name') })],
  ['/v1/Service', service],
  ['/v1/Pod', kind({ spec: podSpec, status: podStatus })],
  ['/v1/Event', kind()],
  ['apps/v1/Deployment', deployment],
  ['apps/v1/ReplicaSet', replicaSet],
  ['apps/v1/StatefulSet', statefulSet],
  ['batch/v1/Job', job],
  ['events.k8s.io/v1/Event', kind()],
  ['coordination.k8s.io/v1/Lease', kind()],
  ['apiextensions.k8s.io/v1/CustomResourceDefinition', kind({ status: struct({ conditions }) })],
  ['admissionregistration.k8s.io/v1/MutatingWebhookConfiguration', kind({ webhooks })],
  ['admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration', kind({ webhooks })],
]);

/**
 * The patch metadata of a built-in kind served by the embedded apiserver: which lists strategic
 * merge patch merges by which key and which server-side apply keys, sets or treats atomically.
 * Undefined for any other kind — custom resources have no strategic merge patch (the server answers
 * 415) and take their apply semantics from their CRD schema ({@link patchSchemaFromOpenAPI}).
 *
 * @example
 * const schema = patchSchemaFor('apps', 'v1', 'Deployment');
 * if (schema === undefined) throw new UnsupportedError('the body of the request was in an unknown format - …');
 */
export function patchSchemaFor(group: string, version: string, kindName: string): StructSchema | undefined {
  return BUILTIN.get(`${group}/${version}/${kindName}`);
}
