import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, setDefault } from './json-util.ts';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The label every namespace carries with its own name (kube-apiserver sets it). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function keyCauses(field: string, map: unknown): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of Object.keys(asObject(map) ?? {})) {
    if (key.length > 253 || !CONFIG_KEY.test(key)) {
      causes.push(
        cause.invalid(
          field,
          key,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
      );
    }
  }
  return causes;
}

/** kube-apiserver's `MaxSecretSize`: ConfigMap data + binaryData, and Secret data, at most 1 MiB. */
export const MAX_DATA_BYTES = 1024 * 1024;

/** Bytes a base64 string decodes to (without decoding it). */
function base64Bytes(value: string): number {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return Math.floor((value.length * 3) / 4) - padding;
}

/**
 * The data size check of `ValidateConfigMap` / `ValidateSecret`: values' bytes (base64 values as
 * decoded) summed; over 1 MiB is FieldValueTooLong at `field` ("" — the whole object — for
 * ConfigMaps, `data` for Secrets, as upstream).
 */
function dataSizeCauses(field: string, maps: readonly [unknown, 'utf8' | 'base64'][]): StatusCause[] {
  let total = 0;
  for (const [map, encoding] of maps) {
    for (const value of Object.values(asObject(map) ?? {})) {
      if (typeof value !== 'string') continue;
      total += encoding === 'base64' ? base64Bytes(value) : Buffer.byteLength(value, 'utf8');
    }
  }
  return total > MAX_DATA_BYTES ? [cause.tooLong(field, MAX_DATA_BYTES)] : [];
}

/** ConfigMap and Secret: once `immutable` is true, data and immutable may not change. */
function immutableCauses(object: JsonObject, old: KubeObject, fields: readonly string[]): StatusCause[] {
  const previous = old as unknown as JsonObject;
  if (previous.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (object.immutable !== true) {
    causes.push(cause.forbidden('immutable', 'field is immutable when `immutable` is set'));
  }
  for (const field of fields) {
    if (JSON.stringify(object[field] ?? null) !== JSON.stringify(previous[field] ?? null)) {
      causes.push(cause.forbidden(field, 'field is immutable when `immutable` is set'));
    }
  }
  return causes;
}

/** Namespace: the name label, `spec.finalizers: [kubernetes]`, phase Active; status only through /status. */
export const namespaceStrategy: Strategy = {
  prepareForCreate(object) {
    const labels = ensureObject(object.metadata, 'labels');
    labels[NAMESPACE_NAME_LABEL] = String(object.metadata.name ?? '');
    const spec = ensureObject(object, 'spec');
    if (!Array.isArray(spec.finalizers)) spec.finalizers = ['kubernetes'];
    object.status = { phase: 'Active' };
    return undefined;
  },
  prepareForUpdate(object, old) {
    const labels = ensureObject(object.metadata, 'labels');
    labels[NAMESPACE_NAME_LABEL] = String(object.metadata.name ?? '');
    const previous = old as unknown as JsonObject;
    object.spec = previous.spec ?? object.spec;
    if (previous.status === undefined) delete object.status;
    else object.status = previous.status;
    return undefined;
  },
};

/** ConfigMap: valid data keys; immutable ConfigMaps. */
export const configMapStrategy: Strategy = {
  prepareForCreate(object) {
    return [
      ...keyCauses('data', object.data),
      ...keyCauses('binaryData', object.binaryData),
      ...configMapSize(object),
    ];
  },
  prepareForUpdate(object, old) {
    return [
      ...keyCauses('data', object.data),
      ...keyCauses('binaryData', object.binaryData),
      ...configMapSize(object),
      ...immutableCauses(object, old, ['data', 'binaryData']),
    ];
  },
};

function configMapSize(object: JsonObject): StatusCause[] {
  return dataSizeCauses('', [
    [object.data, 'utf8'],
    [object.binaryData, 'base64'],
  ]);
}

/** Merges `stringData` into base64 `data` (never stored), defaults `type: Opaque`, checks keys and base64. */
function prepareSecret(object: MutableObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const stringData = asObject(object.stringData);
  if (stringData !== undefined) {
    const data = ensureObject(object, 'data');
    for (const [key, value] of Object.entries(stringData)) {
      if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
    }
  }
  delete object.stringData;
  setDefault(object, 'type', 'Opaque');
  causes.push(...keyCauses('data', object.data));
  for (const [key, value] of Object.entries(asObject(object.data) ?? {})) {
    if (typeof value !== 'string' || !BASE64.test(value)) {
      causes.push(cause.invalid(`data[${key}]`, '<secret contents redacted>', 'must be base64 encoded'));
    }
  }
  causes.push(...dataSizeCauses('data', [[object.data, 'base64']]));
  return causes;
}

/** Secret: stringData, default type, immutable secrets, immutable type. */
export const secretStrategy: Strategy = {
  prepareForCreate(object) {
    return prepareSecret(object);
  },
  prepareForUpdate(object, old) {
    const causes = prepareSecret(object);
    const previous = old as unknown as JsonObject;
    if (object.type !== previous.type) causes.push(cause.invalid('type', object.type, 'field is immutable'));
    causes.push(...immutableCauses(object, old, ['data']));
    return causes;
  },
};

/** Defaults of a PodSpec (`restartPolicy`, `dnsPolicy`, container pull policies, …); returns causes. */
export function defaultPodSpec(spec: JsonObject, field: string, restartPolicy = 'Always'): StatusCause[] {
  setDefault(spec, 'restartPolicy', restartPolicy);
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'securityContext', {});
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [cause.required(`${field}.containers`)];
  const causes: StatusCause[] = [];
  containers.forEach((item, i) => {
    const container = asObject(item);
    if (container === undefined) return;
    if (typeof container.name !== 'string' || container.name === '') {
      causes.push(cause.required(`${field}.containers[${i}].name`));
    }
    if (typeof container.image !== 'string' || container.image === '') {
      causes.push(cause.required(`${field}.containers[${i}].image`));
    }
    const image = typeof container.image === 'string' ? container.image : '';
    const tag = image.includes('@') ? 'digest' : (image.split('/').pop()?.split(':')[1] ?? 'latest');
    setDefault(container, 'imagePullPolicy', tag === 'latest' ? 'Always' : 'IfNotPresent');
    setDefault(container, 'terminationMessagePath', '/dev/termination-log');
    setDefault(container, 'terminationMessagePolicy', 'File');
    setDefault(container, 'resources', {});
  });
  return causes;
}

/** Pod: spec defaults, phase Pending on create; status only through /status. */
export const podStrategy: Strategy = {
  returnDeletedObject: true,
  prepareForCreate(object) {
    const causes = defaultPodSpec(ensureObject(object, 'spec'), 'spec');
    object.status = { phase: 'Pending', qosClass: 'BestEffort' };
    return causes;
  },
  prepareForUpdate(object, old) {
    const previous = old as unknown as JsonObject;
    if (previous.status === undefined) delete object.status;
    else object.status = previous.status;
    return undefined;
  },
};

/** ServiceAccount: DELETE returns the object. */
export const serviceAccountStrategy: Strategy = { returnDeletedObject: true };

/** Lease: PUT to a missing Lease creates it (leader election relies on it). */
export const leaseStrategy: Strategy = { allowCreateOnUpdate: true };

/** core/v1 Event: `involvedObject.namespace` must match the event's namespace. */
export const eventStrategy: Strategy = {
  prepareForCreate(object, context) {
    const involved = asObject(object.involvedObject);
    const ns = involved?.namespace;
    if (typeof ns === 'string' && ns !== '' && ns !== context.namespace) {
      return [cause.invalid('involvedObject.namespace', ns, 'does not match event.namespace')];
    }
    return undefined;
  },
};
