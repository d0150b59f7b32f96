import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, getPath, setDefault } from './json-util.ts';
import { dnsLabel, immutable, items, keepStatus, requiredString, sameJson } from './strategy-rules.ts';

/** Strategies of the cluster's infrastructure kinds: nodes, volumes, storage, scheduling, certificates. */

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const VOLUME_MODES = ['Block', 'Filesystem'];

/** core/v1 Node: status is kept on create (kubelets register with it) and written through /status. */
export const nodeStrategy: Strategy = {
  allowCreateOnUpdate: false,
  prepareForUpdate(object, old) {
    keepStatus(object, old);
    const spec = asObject(object.spec) ?? {};
    const previous = asObject(getPath(old, 'spec')) ?? {};
    // podCIDR(s) may be set once
    if (
      previous.podCIDR !== undefined &&
      previous.podCIDR !== '' &&
      !sameJson(spec.podCIDR, previous.podCIDR)
    )
      return [cause.forbidden('spec.podCIDR', 'node updates may not change podCIDR except from "" to valid')];
    return undefined;
  },
};

function accessModeCauses(field: string, modes: unknown, required: boolean): StatusCause[] {
  if (!Array.isArray(modes) || modes.length === 0) return required ? [cause.required(field)] : [];
  const causes: StatusCause[] = [];
  for (const mode of modes)
    if (!ACCESS_MODES.includes(String(mode))) causes.push(cause.unsupported(field, mode, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.length > 1)
    causes.push(cause.forbidden(field, 'may not use ReadWriteOncePod with other access modes'));
  return causes;
}

function volumeModeCauses(field: string, value: unknown): StatusCause[] {
  return VOLUME_MODES.includes(String(value)) ? [] : [cause.unsupported(field, value, VOLUME_MODES)];
}

function preparePersistentVolume(object: MutableObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  setDefault(spec, 'volumeMode', 'Filesystem');
  const causes = accessModeCauses('spec.accessModes', spec.accessModes, true);
  causes.push(...volumeModeCauses('spec.volumeMode', spec.volumeMode));
  const storage = asObject(spec.capacity)?.storage;
  if (storage === undefined) causes.push(cause.required('spec.capacity'));
  const policies = ['Delete', 'Recycle', 'Retain'];
  if (!policies.includes(String(spec.persistentVolumeReclaimPolicy)))
    causes.push(
      cause.unsupported('spec.persistentVolumeReclaimPolicy', spec.persistentVolumeReclaimPolicy, policies),
    );
  const sources = Object.keys(spec).filter((k) => !PV_NON_SOURCE_FIELDS.has(k));
  if (sources.length === 0) causes.push(cause.required('spec', 'must specify a volume type'));
  else if (sources.length > 1)
    causes.push(cause.forbidden(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
  return causes;
}

const PV_NON_SOURCE_FIELDS = new Set([
  'accessModes',
  'capacity',
  'claimRef',
  'mountOptions',
  'nodeAffinity',
  'persistentVolumeReclaimPolicy',
  'storageClassName',
  'volumeAttributesClassName',
  'volumeMode',
]);

/** core/v1 PersistentVolume: Retain, Filesystem, phase Pending; one volume source; volumeMode fixed. */
export const persistentVolumeStrategy: Strategy = {
  prepareForCreate(object) {
    const causes = preparePersistentVolume(object);
    object.status = { phase: 'Pending' };
    return causes;
  },
  prepareForUpdate(object, old) {
    keepStatus(object, old);
    return [
      ...preparePersistentVolume(object),
      ...immutable('spec.volumeMode', getPath(object, 'spec.volumeMode'), getPath(old, 'spec.volumeMode')),
    ];
  },
};

function preparePersistentVolumeClaim(object: MutableObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'volumeMode', 'Filesystem');
  const causes = accessModeCauses('spec.accessModes', spec.accessModes, true);
  causes.push(...volumeModeCauses('spec.volumeMode', spec.volumeMode));
  const storage = asObject(asObject(spec.resources)?.requests)?.storage;
  if (storage === undefined) causes.push(cause.required('spec.resources[storage]'));
  return causes;
}

/**
 * `ValidatePersistentVolumeClaimUpdate`: the spec is immutable except `resources.requests` of a
 * bound claim, and `volumeName` may be set once (the binder does).
 */
function claimSpecUpdateCauses(object: JsonObject, old: KubeObject): StatusCause[] {
  const spec = { ...(asObject(object.spec) ?? {}) };
  const previous = { ...(asObject(getPath(old, 'spec')) ?? {}) };
  if (previous.volumeName === undefined || previous.volumeName === '') previous.volumeName = spec.volumeName;
  if (getPath(old, 'status.phase') === 'Bound') {
    const resources = asObject(spec.resources);
    if (resources?.requests !== undefined)
      previous.resources = { ...(asObject(previous.resources) ?? {}), requests: resources.requests };
  }
  if (sameJson(spec, previous)) return [];
  return [
    cause.forbidden('spec', 'spec is immutable after creation except resources.requests for bound claims'),
  ];
}

/** core/v1 PersistentVolumeClaim: Filesystem, phase Pending; spec fixed after creation. */
export const persistentVolumeClaimStrategy: Strategy = {
  prepareForCreate(object) {
    const causes = preparePersistentVolumeClaim(object);
    object.status = { phase: 'Pending' };
    return causes;
  },
  prepareForUpdate(object, old) {
    keepStatus(object, old);
    return [...preparePersistentVolumeClaim(object), ...claimSpecUpdateCauses(object, old)];
  },
};

/** core/v1 ResourceQuota: hard limits must be non-negative quantities (checked by schema). */
export const resourceQuotaStrategy: Strategy = {};

/** core/v1 LimitRange: every limit has a type. */
export const limitRangeStrategy: Strategy = {
  prepareForCreate: (object) => limitRangeCauses(object),
  prepareForUpdate: (object) => limitRangeCauses(object),
};

function limitRangeCauses(object: JsonObject): StatusCause[] {
  return items(getPath(object, 'spec.limits')).flatMap(([limit, i]) =>
    requiredString(`spec.limits[${i}].type`, limit.type),
  );
}

const SYSTEM_PRIORITY_CLASSES = new Set(['system-cluster-critical', 'system-node-critical']);
const MAX_USER_PRIORITY = 1_000_000_000;

function priorityClassCauses(object: MutableObject): StatusCause[] {
  setDefault(object, 'preemptionPolicy', 'PreemptLowerPriority');
  const causes: StatusCause[] = [];
  const name = String(object.metadata.name ?? '');
  if (name.startsWith('system-') && !SYSTEM_PRIORITY_CLASSES.has(name))
    causes.push(cause.forbidden('metadata.name', "priority class names with 'system-' prefix are reserved."));
  if (typeof object.value !== 'number') causes.push(cause.required('value'));
  else if (object.value > MAX_USER_PRIORITY && !SYSTEM_PRIORITY_CLASSES.has(name))
    causes.push(
      cause.forbidden('value', `maximum allowed value of a user defined priority is ${MAX_USER_PRIORITY}`),
    );
  const policies = ['Never', 'PreemptLowerPriority'];
  if (!policies.includes(String(object.preemptionPolicy)))
    causes.push(cause.unsupported('preemptionPolicy', object.preemptionPolicy, policies));
  return causes;
}

/** scheduling.k8s.io/v1 PriorityClass: value bounds, reserved names; value and policy fixed. */
export const priorityClassStrategy: Strategy = {
  prepareForCreate: (object) => priorityClassCauses(object),
  prepareForUpdate(object, old) {
    const causes = priorityClassCauses(object);
    const previous = old as unknown as JsonObject;
    if (!sameJson(object.value, previous.value))
      causes.push(cause.forbidden('value', 'may not be changed in an update.'));
    if (!sameJson(object.preemptionPolicy, previous.preemptionPolicy))
      causes.push(...immutable('preemptionPolicy', object.preemptionPolicy, previous.preemptionPolicy));
    return causes;
  },
};

/** node.k8s.io/v1 RuntimeClass: `handler` is a DNS label and never changes. */
export const runtimeClassStrategy: Strategy = {
  prepareForCreate: (object) => dnsLabel('handler', object.handler),
  prepareForUpdate: (object, old) => [
    ...dnsLabel('handler', object.handler),
    ...immutable('handler', object.handler, (old as unknown as JsonObject).handler),
  ],
};

function storageClassCauses(object: MutableObject): StatusCause[] {
  setDefault(object, 'reclaimPolicy', 'Delete');
  setDefault(object, 'volumeBindingMode', 'Immediate');
  const causes = requiredString('provisioner', object.provisioner);
  const reclaim = ['Delete', 'Retain'];
  if (!reclaim.includes(String(object.reclaimPolicy)))
    causes.push(cause.unsupported('reclaimPolicy', object.reclaimPolicy, reclaim));
  const binding = ['Immediate', 'WaitForFirstConsumer'];
  if (!binding.includes(String(object.volumeBindingMode)))
    causes.push(cause.unsupported('volumeBindingMode', object.volumeBindingMode, binding));
  return causes;
}

/** storage.k8s.io/v1 StorageClass: Delete, Immediate; provisioner, parameters and policies fixed. */
export const storageClassStrategy: Strategy = {
  prepareForCreate: (object) => storageClassCauses(object),
  prepareForUpdate(object, old) {
    const causes = storageClassCauses(object);
    const previous = old as unknown as JsonObject;
    for (const field of ['parameters', 'provisioner', 'reclaimPolicy', 'volumeBindingMode']) {
      if (!sameJson(object[field], previous[field]))
        causes.push(cause.forbidden(field, `updates to ${field} are forbidden.`));
    }
    return causes;
  },
};

/** storage.k8s.io/v1 CSIDriver: the defaults of its spec; attachRequired and podInfoOnMount fixed. */
export const csiDriverStrategy: Strategy = {
  prepareForCreate: (object) => prepareCsiDriver(object),
  prepareForUpdate(object, old) {
    const causes = prepareCsiDriver(object);
    for (const field of ['attachRequired', 'podInfoOnMount', 'volumeLifecycleModes', 'fsGroupPolicy'])
      causes.push(
        ...immutable(`spec.${field}`, getPath(object, `spec.${field}`), getPath(old, `spec.${field}`)),
      );
    return causes;
  },
};

function prepareCsiDriver(object: MutableObject): StatusCause[] {
  const spec = asObject(object.spec);
  if (spec === undefined) return [cause.required('spec')];
  setDefault(spec, 'attachRequired', true);
  setDefault(spec, 'podInfoOnMount', false);
  setDefault(spec, 'storageCapacity', false);
  setDefault(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  setDefault(spec, 'volumeLifecycleModes', ['Persistent']);
  setDefault(spec, 'requiresRepublish', false);
  setDefault(spec, 'seLinuxMount', false);
  return [];
}

/** storage.k8s.io/v1 CSINode: every driver has a name and a nodeID. */
export const csiNodeStrategy: Strategy = {
  prepareForCreate: (object) => csiNodeCauses(object),
  prepareForUpdate: (object) => csiNodeCauses(object),
};

function csiNodeCauses(object: JsonObject): StatusCause[] {
  return items(getPath(object, 'spec.drivers')).flatMap(([driver, i]) => [
    ...requiredString(`spec.drivers[${i}].name`, driver.name),
    ...requiredString(`spec.drivers[${i}].nodeID`, driver.nodeID),
  ]);
}

/** storage.k8s.io/v1 VolumeAttachment: attacher, nodeName and one source; the spec never changes. */
export const volumeAttachmentStrategy: Strategy = {
  prepareForCreate: (object) => volumeAttachmentCauses(object),
  prepareForUpdate: (object, old) => [
    ...volumeAttachmentCauses(object),
    ...immutable('spec', object.spec, getPath(old, 'spec')),
  ],
};

function volumeAttachmentCauses(object: JsonObject): StatusCause[] {
  const spec = asObject(object.spec) ?? {};
  const causes = [
    ...requiredString('spec.attacher', spec.attacher),
    ...requiredString('spec.nodeName', spec.nodeName),
  ];
  const source = asObject(spec.source) ?? {};
  const set = ['persistentVolumeName', 'inlineVolumeSpec'].filter((k) => source[k] !== undefined);
  if (set.length !== 1)
    causes.push(
      cause.required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'),
    );
  return causes;
}

const KNOWN_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

/** certificates.k8s.io/v1 CertificateSigningRequest: request, signerName, usages; spec fixed. */
export const csrStrategy: Strategy = {
  prepareForCreate: (object) => csrCauses(object),
  prepareForUpdate: (object, old) => [
    ...csrCauses(object),
    ...immutable('spec', object.spec, getPath(old, 'spec')),
  ],
  validateStatus(object) {
    const causes: StatusCause[] = [];
    const seen = new Set<string>();
    for (const [condition, i] of items(getPath(object, 'status.conditions'))) {
      const type = String(condition.type ?? '');
      if (type === '') causes.push(cause.required(`status.conditions[${i}].type`));
      if (seen.has(type)) causes.push(cause.duplicate(`status.conditions[${i}].type`, type));
      seen.add(type);
      if (!['True', 'False', 'Unknown'].includes(String(condition.status)))
        causes.push(
          cause.unsupported(`status.conditions[${i}].status`, condition.status ?? '', [
            'False',
            'True',
            'Unknown',
          ]),
        );
    }
    if (seen.has('Approved') && seen.has('Denied'))
      causes.push(
        cause.invalid(
          'status.conditions',
          'Approved',
          'Approved and Denied conditions are mutually exclusive',
        ),
      );
    return causes;
  },
};

function csrCauses(object: JsonObject): StatusCause[] {
  const spec = asObject(object.spec);
  if (spec === undefined) return [cause.required('spec.request')];
  const causes: StatusCause[] = [];
  if (typeof spec.request !== 'string' || spec.request === '') causes.push(cause.required('spec.request'));
  else {
    const pem = Buffer.from(spec.request, 'base64').toString('utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE REQUEST-----'))
      causes.push(cause.invalid('spec.request', '<redacted>', 'PEM block type must be CERTIFICATE REQUEST'));
  }
  const signer = spec.signerName;
  if (typeof signer !== 'string' || signer === '') causes.push(cause.required('spec.signerName'));
  else if (!/^[a-z0-9.-]+\/[^/]+$/.test(signer))
    causes.push(
      cause.invalid(
        'spec.signerName',
        signer,
        "must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ),
    );
  if (!Array.isArray(spec.usages) || spec.usages.length === 0) causes.push(cause.required('spec.usages'));
  else
    spec.usages.forEach((usage, i) => {
      if (!KNOWN_USAGES.includes(String(usage)))
        causes.push(cause.unsupported(`spec.usages[${i}]`, usage, KNOWN_USAGES));
    });
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600)
    causes.push(
      cause.invalid(
        'spec.expirationSeconds',
        spec.expirationSeconds,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  return causes;
}
