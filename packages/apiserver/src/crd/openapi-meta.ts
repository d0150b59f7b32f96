/**
 * The apimachinery component schemas a CRD's OpenAPI v3 document references (ObjectMeta, ListMeta,
 * Status, Patch, DeleteOptions, autoscaling/v1 Scale), so `kubectl explain` can resolve
 * `metadata` and the operations' bodies.
 */

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** `#/components/schemas/<name>`. */
export function ref(name: string): { readonly $ref: string } {
  return { $ref: `#/components/schemas/${name}` };
}

/** A `$ref` with a description, as kube publishes it in v3 (`allOf` around the reference). */
export function refWith(
  name: string,
  description: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { allOf: [ref(name)], description, ...extra };
}

const string = (description: string): Record<string, unknown> => ({ type: 'string', description });
const int64 = (description: string): Record<string, unknown> => ({
  type: 'integer',
  format: 'int64',
  description,
});
const bool = (description: string): Record<string, unknown> => ({ type: 'boolean', description });
const stringMap = (description: string): Record<string, unknown> => ({
  type: 'object',
  additionalProperties: { type: 'string', default: '' },
  description,
});

/** TypeMeta's two properties, with kube's descriptions. */
export const TYPE_META = {
  apiVersion: string(
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  ),
  kind: string(
    'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  ),
};

/** The description kube gives a CRD's `metadata` property. */
export const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

const OBJECT_META = {
  description:
    'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
  type: 'object',
  properties: {
    annotations: stringMap(
      'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata.',
    ),
    creationTimestamp: refWith(
      `${META}.Time`,
      'CreationTimestamp is a timestamp representing the server time when this object was created. Populated by the system. Read-only.',
    ),
    deletionGracePeriodSeconds: int64(
      'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set.',
    ),
    deletionTimestamp: refWith(
      `${META}.Time`,
      'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. Set by the server when a graceful deletion is requested. Read-only.',
    ),
    finalizers: {
      type: 'array',
      items: { type: 'string', default: '' },
      description:
        'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list.',
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    },
    generateName: string(
      'GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided.',
    ),
    generation: int64(
      'A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.',
    ),
    labels: stringMap(
      'Map of string keys and values that can be used to organize and categorize (scope and select) objects. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels',
    ),
    managedFields: {
      type: 'array',
      items: { allOf: [ref(`${META}.ManagedFieldsEntry`)], default: {} },
      description:
        'ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.',
      'x-kubernetes-list-type': 'atomic',
    },
    name: string(
      'Name must be unique within a namespace. Is required when creating resources. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
    ),
    namespace: string(
      'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces',
    ),
    ownerReferences: {
      type: 'array',
      items: { allOf: [ref(`${META}.OwnerReference`)], default: {} },
      description:
        'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.',
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    },
    resourceVersion: string(
      'An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Populated by the system. Read-only.',
    ),
    selfLink: string(
      'Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.',
    ),
    uid: string(
      'UID is the unique in time and space value for this object. Populated by the system. Read-only.',
    ),
  },
};

const SCALE = 'io.k8s.api.autoscaling.v1';

/** Component schemas every CRD document carries (Scale ones only when a version has a scale subresource). */
export function metaComponents(withScale: boolean): Record<string, unknown> {
  const components: Record<string, unknown> = {
    [`${META}.ObjectMeta`]: OBJECT_META,
    [`${META}.ListMeta`]: {
      description:
        'ListMeta describes metadata that synthetic resources must have, including lists and various status objects.',
      type: 'object',
      properties: {
        continue: string(
          'continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available.',
        ),
        remainingItemCount: int64(
          'remainingItemCount is the number of subsequent items in the list which are not included in this list response.',
        ),
        resourceVersion: string(
          "String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed.",
        ),
        selfLink: string(
          'Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.',
        ),
      },
    },
    [`${META}.OwnerReference`]: {
      description:
        'OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.',
      type: 'object',
      required: ['apiVersion', 'kind', 'name', 'uid'],
      properties: {
        apiVersion: { type: 'string', default: '', description: 'API version of the referent.' },
        blockOwnerDeletion: bool(
          'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed.',
        ),
        controller: bool('If true, this reference points to the managing controller.'),
        kind: { type: 'string', default: '', description: 'Kind of the referent.' },
        name: { type: 'string', default: '', description: 'Name of the referent.' },
        uid: { type: 'string', default: '', description: 'UID of the referent.' },
      },
      'x-kubernetes-map-type': 'atomic',
    },
    [`${META}.ManagedFieldsEntry`]: {
      description:
        'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
      type: 'object',
      properties: {
        apiVersion: string('APIVersion defines the version of this resource that this field set applies to.'),
        fieldsType: string(
          'FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: "FieldsV1"',
        ),
        fieldsV1: refWith(
          `${META}.FieldsV1`,
          'FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.',
        ),
        manager: string('Manager is an identifier of the workflow managing these fields.'),
        operation: string(
          "Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are 'Apply' and 'Update'.",
        ),
        subresource: string(
          'Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource.',
        ),
        time: refWith(`${META}.Time`, 'Time is the timestamp of when the ManagedFields entry was added.'),
      },
    },
    [`${META}.FieldsV1`]: {
      description: 'FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.',
      type: 'object',
    },
    [`${META}.Time`]: {
      description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.',
      type: 'string',
      format: 'date-time',
    },
    [`${META}.Patch`]: {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
    [`${META}.Preconditions`]: {
      description:
        'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
      type: 'object',
      properties: {
        resourceVersion: string('Specifies the target ResourceVersion'),
        uid: string('Specifies the target UID.'),
      },
    },
    [`${META}.DeleteOptions`]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      type: 'object',
      properties: {
        ...TYPE_META,
        dryRun: {
          type: 'array',
          items: { type: 'string', default: '' },
          description: 'When present, indicates that modifications should not be persisted.',
          'x-kubernetes-list-type': 'atomic',
        },
        gracePeriodSeconds: int64('The duration in seconds before the object should be deleted.'),
        orphanDependents: bool('Deprecated: please use the PropagationPolicy.'),
        preconditions: refWith(
          `${META}.Preconditions`,
          'Must be fulfilled before a deletion is carried out.',
        ),
        propagationPolicy: string(
          "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
        ),
      },
    },
    [`${META}.StatusCause`]: {
      description:
        'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
      type: 'object',
      properties: {
        field: string(
          'The field of the resource that has caused this error, as named by its JSON serialization.',
        ),
        message: string('A human-readable description of the cause of the error.'),
        reason: string('A machine-readable description of the cause of the error.'),
      },
    },
    [`${META}.StatusDetails`]: {
      description:
        'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
      type: 'object',
      properties: {
        causes: {
          type: 'array',
          items: { allOf: [ref(`${META}.StatusCause`)], default: {} },
          description: 'The Causes array includes more details associated with the StatusReason failure.',
          'x-kubernetes-list-type': 'atomic',
        },
        group: string('The group attribute of the resource associated with the status StatusReason.'),
        kind: string('The kind attribute of the resource associated with the status StatusReason.'),
        name: string(
          'The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).',
        ),
        retryAfterSeconds: {
          type: 'integer',
          format: 'int32',
          description: 'If specified, the time in seconds before the operation should be retried.',
        },
        uid: string('UID of the resource.'),
      },
    },
    [`${META}.Status`]: {
      description: "Status is a return value for calls that don't return other objects.",
      type: 'object',
      properties: {
        ...TYPE_META,
        code: {
          type: 'integer',
          format: 'int32',
          description: 'Suggested HTTP return code for this status, 0 if not set.',
        },
        details: refWith(`${META}.StatusDetails`, 'Extended data associated with the reason.', {
          'x-kubernetes-list-type': 'atomic',
        }),
        message: string('A human-readable description of the status of this operation.'),
        metadata: refWith(
          `${META}.ListMeta`,
          'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
          { default: {} },
        ),
        reason: string('A machine-readable description of why this operation is in the "Failure" status.'),
        status: string('Status of the operation. One of: "Success" or "Failure".'),
      },
      'x-kubernetes-group-version-kind': [{ group: '', kind: 'Status', version: 'v1' }],
    },
  };
  if (withScale) {
    components[`${SCALE}.Scale`] = {
      description: 'Scale represents a scaling request for a resource.',
      type: 'object',
      properties: {
        ...TYPE_META,
        metadata: refWith(`${META}.ObjectMeta`, METADATA_DESCRIPTION, { default: {} }),
        spec: refWith(`${SCALE}.ScaleSpec`, 'spec defines the behavior of the scale.', { default: {} }),
        status: refWith(`${SCALE}.ScaleStatus`, 'status is the current status of the scale. Read-only.', {
          default: {},
        }),
      },
      'x-kubernetes-group-version-kind': [{ group: 'autoscaling', kind: 'Scale', version: 'v1' }],
    };
    components[`${SCALE}.ScaleSpec`] = {
      description: 'ScaleSpec describes the attributes of a scale subresource.',
      type: 'object',
      properties: {
        replicas: {
          type: 'integer',
          format: 'int32',
          description: 'replicas is the desired number of instances for the scaled object.',
        },
      },
    };
    components[`${SCALE}.ScaleStatus`] = {
      description: 'ScaleStatus represents the current status of a scale subresource.',
      type: 'object',
      required: ['replicas'],
      properties: {
        replicas: {
          type: 'integer',
          format: 'int32',
          default: 0,
          description: 'replicas is the actual number of observed instances of the scaled object.',
        },
        selector: string('selector is the label query over pods that should match the replicas count.'),
      },
    };
  }
  return components;
}

/** The scale component's name. */
export const SCALE_SCHEMA = `${SCALE}.Scale`;
/** apimachinery's component names used by operations. */
export const META_SCHEMAS = {
  objectMeta: `${META}.ObjectMeta`,
  listMeta: `${META}.ListMeta`,
  status: `${META}.Status`,
  patch: `${META}.Patch`,
  deleteOptions: `${META}.DeleteOptions`,
} as const;
