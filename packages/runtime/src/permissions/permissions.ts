import type { ResourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';

/**
 * One RBAC permission an operator needs: `verbs` on `resource` (a plural such as `deployments`, or
 * `plural/subresource` such as `deployments/status`) in API group `group` ('' for the core group).
 * With `namespace` it is granted by a Role in that namespace; without, by the operator's
 * ClusterRole. With `resourceNames` it covers only the objects of those names.
 */
export interface PermissionRule {
  readonly group: string;
  readonly resource: string;
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly namespace?: string;
}

/** Options of {@link Permissions.require} with a resource type. */
export interface RequireOptions {
  /** `status`, `scale`, `finalizers`, …: the rule is for `plural/subresource`. */
  readonly subresource?: string;
  /** Granted only in this namespace (a Role there). Default: cluster-wide (the ClusterRole). */
  readonly namespace?: string;
  /** Only objects of these names. */
  readonly resourceNames?: readonly string[];
}

/** The verbs of kube-apiserver's RBAC authorizer, and `*` (every verb). */
const VERBS: ReadonlySet<string> = new Set([
  '*',
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'bind',
  'escalate',
  'impersonate',
  'approve',
  'sign',
  'use',
]);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A resource (`*`, a lower-case plural) with an optional `/subresource`. */
const RESOURCE = /^(\*|[a-z0-9]([-a-z0-9.]*[a-z0-9])?)(\/(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?))?$/;

/**
 * The RBAC rules an operator needs, collected while it is wired (controller-runtime's
 * `+kubebuilder:rbac` markers, as values): the builder registers what Converge itself does with
 * each kind on `complete()` (derived rules), and the operator declares with {@link require} what
 * its reconcilers do with the client beyond that. `converge manifests` turns {@link rules} into a
 * ClusterRole and Roles, and {@link types} into CRDs.
 *
 * Wiring only records; nothing is contacted, so a module can be wired into a manager that never
 * starts just to read its permissions.
 *
 * @example
 * manager.controller(websiteType).owns(deploymentType).complete(reconcile);
 * manager.permissions.require(secretType, ['get']);                       // a read the reconciler does
 * manager.permissions.require({ group: '', resource: 'configmaps', verbs: ['create'], namespace: 'web' });
 * manager.permissions.rules(); // merged, sorted: what the ClusterRole and Roles grant
 */
export class Permissions {
  /** Rules by group, resource, namespace and resource names; each holds its verbs. */
  readonly #rules = new Map<string, { readonly rule: Omit<PermissionRule, 'verbs'>; verbs: Set<string> }>();
  readonly #types = new Map<string, ResourceType>();

  /**
   * Declares a permission: a rule, or `verbs` on a resource type (its `subresource`, in one
   * `namespace`, for some `resourceNames`). The type is also recorded in {@link types}. Throws an
   * {@link OptionsError} naming the field for a malformed rule (no verbs, an unknown verb, a
   * resource that is not a lower-case plural, a group or namespace Kubernetes would refuse).
   */
  require(rule: PermissionRule): void;
  require(type: ResourceType, verbs: readonly string[], options?: RequireOptions): void;
  require(
    ruleOrType: PermissionRule | ResourceType,
    verbs?: readonly string[],
    options: RequireOptions = {},
  ): void {
    if (typeof ruleOrType !== 'object' || ruleOrType === null)
      throw new OptionsError('permission', ruleOrType, 'a PermissionRule or a ResourceType');
    if (verbs === undefined) {
      if ('plural' in ruleOrType)
        throw new OptionsError('verbs', verbs, 'the verbs required on the resource type');
      this.#add(ruleOrType as PermissionRule);
      return;
    }
    const type = ruleOrType as ResourceType;
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('permission.options', options, 'an object');
    checkType(type);
    const { subresource, namespace, resourceNames } = options;
    if (subresource !== undefined && (typeof subresource !== 'string' || !DNS_LABEL.test(subresource)))
      throw new OptionsError('permission.subresource', subresource, 'a subresource such as status or scale');
    this.#add({
      group: type.group,
      resource: subresource === undefined ? type.plural : `${type.plural}/${subresource}`,
      verbs,
      ...(namespace === undefined ? {} : { namespace }),
      ...(resourceNames === undefined ? {} : { resourceNames }),
    });
    this.recordType(type);
  }

  /**
   * Records that the wiring touches `type` (it appears in {@link types}, so its CRD is generated
   * if it is a defined kind) without granting anything.
   */
  recordType(type: ResourceType): void {
    checkType(type);
    const id = `${type.group}/${type.version}/${type.plural}`;
    if (!this.#types.has(id)) this.#types.set(id, type);
  }

  /**
   * Every rule, derived and declared, merged — one per group, resource, namespace and resource
   * names, with the union of their verbs (only `*` if any rule gave `*`) — and sorted (cluster-wide
   * first, then by namespace, group, resource and names; verbs sorted): the same wiring always
   * gives the same list.
   */
  rules(): readonly PermissionRule[] {
    const rules = [...this.#rules.values()].map(({ rule, verbs }) => ({
      ...rule,
      verbs: verbs.has('*') ? ['*'] : [...verbs].sort(),
    }));
    return rules.sort(compareRules);
  }

  /** Every resource type the wiring touched or a declaration named, sorted by group, plural and version. */
  types(): readonly ResourceType[] {
    return [...this.#types.values()].sort(
      (a, b) => cmp(a.group, b.group) || cmp(a.plural, b.plural) || cmp(a.version, b.version),
    );
  }

  #add(rule: PermissionRule): void {
    const checked = checkRule(rule);
    const key = JSON.stringify([
      checked.namespace ?? '',
      checked.group,
      checked.resource,
      checked.resourceNames ?? [],
    ]);
    const entry = this.#rules.get(key);
    if (entry === undefined) {
      const { verbs, ...rest } = checked;
      this.#rules.set(key, { rule: rest, verbs: new Set(verbs) });
    } else {
      for (const verb of checked.verbs) entry.verbs.add(verb);
    }
  }
}

function checkType(type: ResourceType): void {
  if (typeof type !== 'object' || type === null)
    throw new OptionsError('permission.type', type, 'a ResourceType');
  if (typeof type.group !== 'string' || (type.group !== '' && !DNS_SUBDOMAIN.test(type.group)))
    throw new OptionsError('permission.type.group', type.group, "'' or a DNS subdomain");
  if (typeof type.plural !== 'string' || !DNS_LABEL.test(type.plural))
    throw new OptionsError('permission.type.plural', type.plural, 'a lower-case plural');
  if (typeof type.version !== 'string' || !DNS_LABEL.test(type.version))
    throw new OptionsError('permission.type.version', type.version, 'a version such as v1');
}

/** A copy of `rule` with only its known fields, checked; names and verbs de-duplicated and sorted. */
function checkRule(rule: PermissionRule): PermissionRule {
  if (typeof rule !== 'object' || rule === null)
    throw new OptionsError('permission', rule, 'a PermissionRule');
  const { group, resource, verbs, resourceNames, namespace } = rule;
  if (typeof group !== 'string' || (group !== '' && group !== '*' && !DNS_SUBDOMAIN.test(group)))
    throw new OptionsError('permission.group', group, "'' (core), '*' or an API group such as apps");
  if (typeof resource !== 'string' || !RESOURCE.test(resource))
    throw new OptionsError('permission.resource', resource, 'a lower-case plural, optionally /subresource');
  if (!Array.isArray(verbs) || verbs.length === 0)
    throw new OptionsError('permission.verbs', verbs, 'a non-empty array of verbs');
  for (const verb of verbs) {
    if (typeof verb !== 'string' || !VERBS.has(verb))
      throw new OptionsError('permission.verbs', verb, `one of ${[...VERBS].join(', ')}`);
  }
  if (namespace !== undefined && (typeof namespace !== 'string' || !DNS_LABEL.test(namespace)))
    throw new OptionsError('permission.namespace', namespace, 'a namespace name (a DNS label)');
  let names: string[] | undefined;
  if (resourceNames !== undefined) {
    if (!Array.isArray(resourceNames) || resourceNames.length === 0)
      throw new OptionsError('permission.resourceNames', resourceNames, 'a non-empty array of names');
    for (const name of resourceNames) {
      if (typeof name !== 'string' || name === '' || name.length > 253 || /[\s/]/.test(name))
        throw new OptionsError('permission.resourceNames', name, 'object names');
    }
    names = [...new Set(resourceNames)].sort();
  }
  return {
    group,
    resource,
    verbs: [...new Set(verbs)].sort(),
    ...(names === undefined ? {} : { resourceNames: names }),
    ...(namespace === undefined ? {} : { namespace }),
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function compareRules(a: PermissionRule, b: PermissionRule): number {
  const scope = Number(a.namespace !== undefined) - Number(b.namespace !== undefined);
  return (
    scope ||
    cmp(a.namespace ?? '', b.namespace ?? '') ||
    cmp(a.group, b.group) ||
    cmp(a.resource, b.resource) ||
    cmp((a.resourceNames ?? []).join(','), (b.resourceNames ?? []).join(','))
  );
}

/**
 * The rules Converge needs for what a controller's wiring does with a kind (decision 2 of issue
 * 19, kubebuilder's scaffold markers): every kind it watches or reads is listed and watched; the
 * primary (`for`) is also updated and patched, its status and finalizers written; an owned kind is
 * also created, updated, patched and deleted.
 */
export function derivedRules(
  type: ResourceType,
  role: 'for' | 'owns' | 'watches' | 'reads',
  namespace?: string,
): PermissionRule[] {
  const scope = namespace === undefined ? {} : { namespace };
  const read = ['get', 'list', 'watch'];
  const rule = (resource: string, verbs: string[]): PermissionRule => ({
    group: type.group,
    resource,
    verbs,
    ...scope,
  });
  switch (role) {
    case 'for':
      return [
        rule(type.plural, [...read, 'update', 'patch']),
        ...(type.statusSubresource === true
          ? [rule(`${type.plural}/status`, ['get', 'update', 'patch'])]
          : []),
        rule(`${type.plural}/finalizers`, ['update']),
      ];
    case 'owns':
      return [rule(type.plural, [...read, 'create', 'update', 'patch', 'delete'])];
    case 'watches':
    case 'reads':
      return [rule(type.plural, read)];
  }
}
