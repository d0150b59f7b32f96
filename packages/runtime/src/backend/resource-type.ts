import { OptionsError } from '../errors.ts';

/** A kind of object a backend serves (Kubernetes' GroupVersionKind + resource). */
export interface ResourceType {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural resource name, as in URLs (`configmaps`). */
  readonly plural: string;
  readonly namespaced: boolean;
  /** Lower-case singular name. Default: `kind` lower-cased. */
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  /** Whether `status` is a subresource: the main resource ignores `.status`, `updateStatus` ignores the rest. */
  readonly statusSubresource?: boolean;
  /**
   * Whether the backend tracks `metadata.generation` (1 on create, +1 when anything outside
   * metadata and status changes). Default true; false for ConfigMap, Secret, Namespace, Lease, Event.
   */
  readonly generation?: boolean;
  /** Whether an update must carry a resourceVersion (custom resources: true). Default false. */
  readonly requireResourceVersionOnUpdate?: boolean;
}

/** `group/version`, or `version` for the core group. */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** A stable id of a type within a backend: `group/version/plural` (version included). */
export function typeId(type: Pick<ResourceType, 'group' | 'version' | 'plural'>): string {
  return `${type.group}/${type.version}/${type.plural}`;
}

/** `plural.group` (or `plural` for core), the resource name used in errors (`configmaps "x" not found`). */
export function qualifiedResource(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Validates and normalises a resource type; throws {@link OptionsError} naming the bad field.
 */
export function resourceType(type: ResourceType): ResourceType {
  if (typeof type !== 'object' || type === null)
    throw new OptionsError('type', type, 'a ResourceType object');
  if (typeof type.group !== 'string')
    throw new OptionsError('type.group', type.group, "a string ('' for core)");
  if (typeof type.version !== 'string' || !DNS_LABEL.test(type.version)) {
    throw new OptionsError('type.version', type.version, 'a DNS label such as v1');
  }
  if (typeof type.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(type.kind)) {
    throw new OptionsError('type.kind', type.kind, 'a PascalCase kind such as ConfigMap');
  }
  if (typeof type.plural !== 'string' || !DNS_LABEL.test(type.plural)) {
    throw new OptionsError('type.plural', type.plural, 'a lower-case plural such as configmaps');
  }
  if (typeof type.namespaced !== 'boolean')
    throw new OptionsError('type.namespaced', type.namespaced, 'a boolean');
  return Object.freeze({ ...type, singular: type.singular ?? type.kind.toLowerCase() });
}
