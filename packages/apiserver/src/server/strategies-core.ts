import type { StatusCause } from '@converge/runtime';
import type { JsonObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, setDefault } from './json-util.ts';
import { podSpecUpdateCauses } from './pod-update.ts';

/** The label every namespace carries with its own name (kube-apiserver sets it). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

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

/** `SetDefaults_Pod` beyond the PodSpec defaults: `enableServiceLinks: true` (pods only, not templates). */
function defaultPod(object: JsonObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  const causes = defaultPodSpec(spec, 'spec');
  setDefault(spec, 'enableServiceLinks', true);
  return causes;
}

/**
 * Pod: defaults, phase Pending on create; on update only what `ValidatePodUpdate` lets change in
 * the spec; status only through /status.
 */
export const podStrategy: Strategy = {
  returnDeletedObject: true,
  prepareForCreate(object) {
    const causes = defaultPod(object);
    object.status = { phase: 'Pending', qosClass: 'BestEffort' };
    return causes;
  },
  prepareForUpdate(object, old) {
    const previous = old as unknown as JsonObject;
    const causes = defaultPod(object);
    if (causes.length === 0) {
      causes.push(...podSpecUpdateCauses(ensureObject(object, 'spec'), asObject(previous.spec) ?? {}));
    }
    if (previous.status === undefined) delete object.status;
    else object.status = previous.status;
    return causes;
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
