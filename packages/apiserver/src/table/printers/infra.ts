/**
 * Printers of the cluster's infrastructure kinds: core/v1 Node, PersistentVolume(Claim),
 * ResourceQuota, LimitRange; storage.k8s.io, scheduling.k8s.io, certificates.k8s.io, node.k8s.io
 * and rbac.authorization.k8s.io kinds (kube-apiserver 1.32's columns and cells).
 */
import { CREATION_TIMESTAMP } from '../descriptions.ts';
import { arr, at, int, type Json, obj, objects, str, stringMap } from '../fields.ts';
import { compareUtf8 } from '../go-format.ts';
import { AGE_COLUMN, column, NAME_COLUMN, type Printer, wide } from '../printer.ts';
import { ageSince, formatRfc3339, humanDuration } from '../time.ts';

const name = (o: Json) => str(at(o, 'metadata', 'name'));
const age = (o: Json, nowMs: number) => ageSince(at(o, 'metadata', 'creationTimestamp'), nowMs);
const orUnknown = (text: string) => (text === '' ? '<unknown>' : text);
const orNone = (text: string) => (text === '' ? '<none>' : text);

function nodeStatus(o: Json): string {
  const ready = objects(at(o, 'status', 'conditions')).find((c) => c.type === 'Ready');
  const states = [
    ready === undefined
      ? 'Unknown'
      : ready.status === 'True'
        ? 'Ready'
        : ready.status === 'False'
          ? 'NotReady'
          : 'Unknown',
  ];
  if (at(o, 'spec', 'unschedulable') === true) states.push('SchedulingDisabled');
  return states.join(',');
}

const ROLE_PREFIX = 'node-role.kubernetes.io/';

function nodeRoles(o: Json): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(stringMap(at(o, 'metadata', 'labels')))) {
    if (key.startsWith(ROLE_PREFIX) && key.length > ROLE_PREFIX.length)
      roles.add(key.slice(ROLE_PREFIX.length));
    else if (key === 'kubernetes.io/role' && value !== '') roles.add(value);
  }
  return roles.size === 0 ? '<none>' : [...roles].sort(compareUtf8).join(',');
}

function nodeAddress(o: Json, type: string): string {
  return orNone(str(objects(at(o, 'status', 'addresses')).find((a) => a.type === type)?.address));
}

/** NAME STATUS ROLES AGE VERSION, + INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME. */
export const nodePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The status of the node'),
    column('Roles', 'string', 'The roles of the node'),
    AGE_COLUMN,
    column('Version', 'string', 'Kubelet Version reported by the node.'),
    wide(
      'Internal-IP',
      'List of addresses reachable to the node. Queried from cloud provider, if available.',
    ),
    wide(
      'External-IP',
      'List of addresses reachable to the node. Queried from cloud provider, if available.',
    ),
    wide(
      'OS-Image',
      'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
    ),
    wide(
      'Kernel-Version',
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    ),
    wide(
      'Container-Runtime',
      'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
    ),
  ],
  row: (o, nowMs) => {
    const info = obj(at(o, 'status', 'nodeInfo'));
    return {
      cells: [
        name(o),
        nodeStatus(o),
        nodeRoles(o),
        age(o, nowMs),
        str(info.kubeletVersion),
        nodeAddress(o, 'InternalIP'),
        nodeAddress(o, 'ExternalIP'),
        orUnknown(str(info.osImage)),
        orUnknown(str(info.kernelVersion)),
        orUnknown(str(info.containerRuntimeVersion)),
      ],
    };
  },
};

const ACCESS_MODE_SHORT: readonly [string, string][] = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

function accessModes(modes: unknown): string {
  const present = new Set(arr(modes).map(str));
  return ACCESS_MODE_SHORT.filter(([mode]) => present.has(mode))
    .map(([, short]) => short)
    .join(',');
}

function phase(o: Json): string {
  return typeof at(o, 'metadata', 'deletionTimestamp') === 'string'
    ? 'Terminating'
    : str(at(o, 'status', 'phase'));
}

function storageClassOf(o: Json): string {
  const fromSpec = at(o, 'spec', 'storageClassName');
  if (typeof fromSpec === 'string') return fromSpec;
  return str(at(o, 'metadata', 'annotations', 'volume.beta.kubernetes.io/storage-class'));
}

function attributesClass(o: Json): string {
  const value = at(o, 'spec', 'volumeAttributesClassName');
  return typeof value === 'string' && value !== '' ? value : '<unset>';
}

/** NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE, + VOLUMEMODE. */
export const persistentVolumePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Capacity', 'string', 'The capacity of the volume.'),
    column('Access Modes', 'string', 'The ways the volume can be mounted.'),
    column('Reclaim Policy', 'string', 'What happens to the volume when released from its claim.'),
    column('Status', 'string', 'The phase of the volume.'),
    column('Claim', 'string', 'The claim bound to the volume.'),
    column('StorageClass', 'string', 'The storage class of the volume.'),
    column('VolumeAttributesClass', 'string', 'The volume attributes class of the volume.'),
    column('Reason', 'string', 'Why the volume is in its phase.'),
    AGE_COLUMN,
    wide('VolumeMode', 'Whether the volume is a filesystem or a raw block device.'),
  ],
  row: (o, nowMs) => {
    const claim = obj(at(o, 'spec', 'claimRef'));
    return {
      cells: [
        name(o),
        str(at(o, 'spec', 'capacity', 'storage')),
        accessModes(at(o, 'spec', 'accessModes')),
        str(at(o, 'spec', 'persistentVolumeReclaimPolicy')),
        phase(o),
        claim.name === undefined ? '' : `${str(claim.namespace)}/${str(claim.name)}`,
        storageClassOf(o),
        attributesClass(o),
        str(at(o, 'status', 'reason')),
        age(o, nowMs),
        orUnknown(str(at(o, 'spec', 'volumeMode'))),
      ],
    };
  },
};

/** NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, + VOLUMEMODE. */
export const persistentVolumeClaimPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The phase of the claim.'),
    column('Volume', 'string', 'The volume bound to the claim.'),
    column('Capacity', 'string', 'The capacity of the bound volume.'),
    column('Access Modes', 'string', 'The access modes of the bound volume.'),
    column('StorageClass', 'string', 'The storage class of the claim.'),
    column('VolumeAttributesClass', 'string', 'The volume attributes class of the claim.'),
    AGE_COLUMN,
    wide('VolumeMode', 'Whether the claim is a filesystem or a raw block device.'),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      phase(o),
      str(at(o, 'spec', 'volumeName')),
      str(at(o, 'status', 'capacity', 'storage')),
      accessModes(at(o, 'status', 'accessModes')),
      storageClassOf(o),
      attributesClass(o),
      age(o, nowMs),
      orUnknown(str(at(o, 'spec', 'volumeMode'))),
    ],
  }),
};

/** `resource: used/hard` of every hard limit, sorted; requests and limits apart. */
function quotaCells(o: Json): [string, string] {
  const hard = stringMap(at(o, 'spec', 'hard'));
  const used = stringMap(at(o, 'status', 'used'));
  const requests: string[] = [];
  const limits: string[] = [];
  for (const resource of Object.keys(hard).sort(compareUtf8)) {
    const text = `${resource}: ${used[resource] ?? '0'}/${hard[resource]}`;
    if (resource.startsWith('limits.')) limits.push(text);
    else requests.push(text);
  }
  return [requests.join(', '), limits.join(', ')];
}

/** NAME AGE REQUEST LIMIT. */
export const resourceQuotaPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    column(
      'Request',
      'string',
      'Request represents a minimum amount of cpu/memory that a container may consume.',
    ),
    column(
      'Limit',
      'string',
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    ),
  ],
  row: (o, nowMs) => ({ cells: [name(o), age(o, nowMs), ...quotaCells(o)] }),
};

/** NAME CREATED AT: LimitRange, Role and ClusterRole. */
export const createdAtPrinter: Printer = {
  columns: [NAME_COLUMN, column('Created At', 'date', CREATION_TIMESTAMP)],
  row: (o) => ({ cells: [name(o), formatRfc3339(at(o, 'metadata', 'creationTimestamp'))] }),
};

function subjectsOf(o: Json, kind: string): string {
  return objects(o.subjects)
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name)))
    .join(', ');
}

/** NAME ROLE AGE, + USERS GROUPS SERVICEACCOUNTS: RoleBinding and ClusterRoleBinding. */
export const roleBindingPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Role', 'string', 'Role referenced by this binding.'),
    AGE_COLUMN,
    wide('Users', 'Users in the binding.'),
    wide('Groups', 'Groups in the binding.'),
    wide('ServiceAccounts', 'ServiceAccounts in the binding.'),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      `${str(at(o, 'roleRef', 'kind'))}/${str(at(o, 'roleRef', 'name'))}`,
      age(o, nowMs),
      subjectsOf(o, 'User'),
      subjectsOf(o, 'Group'),
      subjectsOf(o, 'ServiceAccount'),
    ],
  }),
};

function bool(value: unknown): boolean {
  return value === true;
}

/** NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE; `(default)` marks the default class. */
export const storageClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Provisioner', 'string', 'Indicates the type of the provisioner.'),
    column('ReclaimPolicy', 'string', 'Indicates the type of the reclaim policy.'),
    column(
      'VolumeBindingMode',
      'string',
      'Indicates when volume binding and dynamic provisioning should occur.',
    ),
    column('AllowVolumeExpansion', 'string', 'Indicates whether the storage class allows volume expand.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const annotations = stringMap(at(o, 'metadata', 'annotations'));
    const isDefault =
      annotations['storageclass.kubernetes.io/is-default-class'] === 'true' ||
      annotations['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
    return {
      cells: [
        isDefault ? `${name(o)} (default)` : name(o),
        str(o.provisioner),
        str(o.reclaimPolicy) || 'Delete',
        str(o.volumeBindingMode) || 'Immediate',
        bool(o.allowVolumeExpansion),
        age(o, nowMs),
      ],
    };
  },
};

/** NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE. */
export const csiDriverPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('AttachRequired', 'boolean', 'Indicates this CSI volume driver requires an attach operation.'),
    column(
      'PodInfoOnMount',
      'boolean',
      'Indicates this CSI volume driver requires additional pod information during mount operations.',
    ),
    column(
      'StorageCapacity',
      'boolean',
      'Indicates this CSI volume driver supports storage capacity tracking.',
    ),
    column(
      'TokenRequests',
      'string',
      'Indicates the CSI driver needs pods service account tokens it is mounting volume for to do necessary authentication.',
    ),
    column(
      'RequiresRepublish',
      'boolean',
      'Indicates the CSI driver wants NodePublishVolume being periodically called.',
    ),
    column('Modes', 'string', 'Defines the kind of volumes this CSI volume driver supports.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const spec = obj(o.spec);
    const tokens = objects(spec.tokenRequests).map((t) => str(t.audience) || '<api-server>');
    const modes = arr(spec.volumeLifecycleModes).map(str);
    return {
      cells: [
        name(o),
        spec.attachRequired !== false,
        bool(spec.podInfoOnMount),
        bool(spec.storageCapacity),
        tokens.length === 0 ? '<unset>' : tokens.join(','),
        bool(spec.requiresRepublish),
        modes.length === 0 ? '<none>' : modes.join(','),
        age(o, nowMs),
      ],
    };
  },
};

/** NAME DRIVERS AGE. */
export const csiNodePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({ cells: [name(o), arr(at(o, 'spec', 'drivers')).length, age(o, nowMs)] }),
};

/** NAME STORAGECLASSNAME CAPACITY AGE. */
export const csiStorageCapacityPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('StorageClassName', 'string', 'The storage class of the capacity.'),
    column('Capacity', 'string', 'The capacity reported by the driver.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({ cells: [name(o), str(o.storageClassName), str(o.capacity), age(o, nowMs)] }),
};

/** NAME ATTACHER PV NODE ATTACHED AGE. */
export const volumeAttachmentPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Attacher',
      'string',
      'Attacher indicates the name of the volume driver that MUST handle this request.',
    ),
    column('PV', 'string', 'Name of the persistent volume to attach.'),
    column('Node', 'string', 'The node that the volume should be attached to.'),
    column('Attached', 'boolean', 'Indicates the volume is successfully attached.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      str(at(o, 'spec', 'attacher')),
      str(at(o, 'spec', 'source', 'persistentVolumeName')),
      str(at(o, 'spec', 'nodeName')),
      bool(at(o, 'status', 'attached')),
      age(o, nowMs),
    ],
  }),
};

/** NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY. */
export const priorityClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Value', 'integer', 'The integer value of this priority class.'),
    column('Global-Default', 'boolean', 'Whether this is the default priority class for pods without one.'),
    AGE_COLUMN,
    column('PreemptionPolicy', 'string', 'The policy for preempting pods with lower priority.'),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      int(o.value),
      bool(o.globalDefault),
      age(o, nowMs),
      str(o.preemptionPolicy) || 'PreemptLowerPriority',
    ],
  }),
};

function csrCondition(o: Json): string {
  const types = objects(at(o, 'status', 'conditions')).map((c) => str(c.type));
  const shown: string[] = [];
  for (const type of ['Approved', 'Denied', 'Failed']) if (types.includes(type)) shown.push(type);
  if (shown.length === 0) shown.push('Pending');
  if (typeof at(o, 'status', 'certificate') === 'string' && at(o, 'status', 'certificate') !== '')
    shown.push('Issued');
  return shown.join(',');
}

/** NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION. */
export const csrPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    column('SignerName', 'string', 'The signer of the certificate.'),
    column('Requestor', 'string', 'Name of the user who created the request.'),
    column('RequestedDuration', 'string', 'The requested duration of validity of the certificate.'),
    column('Condition', 'string', 'The approval and issuance state of the request.'),
  ],
  row: (o, nowMs) => {
    const seconds = at(o, 'spec', 'expirationSeconds');
    return {
      cells: [
        name(o),
        age(o, nowMs),
        str(at(o, 'spec', 'signerName')),
        str(at(o, 'spec', 'username')),
        typeof seconds === 'number' ? humanDuration(seconds * 1000) : '<none>',
        csrCondition(o),
      ],
    };
  },
};

/** NAME HANDLER AGE. */
export const runtimeClassPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Handler', 'string', 'The underlying runtime and configuration of the class.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({ cells: [name(o), str(o.handler), age(o, nowMs)] }),
};

/** NAME STATUS MESSAGE ERROR (the Healthy condition). */
export const componentStatusPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Status of the component conditions'),
    column('Message', 'string', 'Message of the component conditions'),
    column('Error', 'string', 'Error of the component conditions'),
  ],
  row: (o) => {
    const healthy = objects(o.conditions).find((c) => c.type === 'Healthy');
    const status = healthy === undefined ? 'Unknown' : healthy.status === 'True' ? 'Healthy' : 'Unhealthy';
    return { cells: [name(o), status, str(healthy?.message), str(healthy?.error)] };
  },
};
