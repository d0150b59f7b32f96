import type { StatusCause } from '@converge/runtime';
import type { JsonObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, getPath } from './json-util.ts';
import { items, labelSelector, sameJson } from './strategy-rules.ts';

/** rbac.authorization.k8s.io/v1: the rules of `pkg/apis/rbac/validation`, as kube-apiserver words them. */

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function count(value: unknown): number {
  return Array.isArray(value) ? value.length : 0;
}

function ruleCauses(rules: unknown, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [rule, i] of items(rules)) {
    const at = `rules[${i}]`;
    if (count(rule.verbs) === 0)
      causes.push(cause.required(`${at}.verbs`, 'verbs must contain at least one value'));
    if (count(rule.nonResourceURLs) > 0) {
      if (namespaced)
        causes.push(
          cause.invalid(
            `${at}.nonResourceURLs`,
            rule.nonResourceURLs,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      if (count(rule.apiGroups) > 0 || count(rule.resources) > 0 || count(rule.resourceNames) > 0)
        causes.push(
          cause.invalid(
            `${at}.nonResourceURLs`,
            rule.nonResourceURLs,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      continue;
    }
    if (count(rule.apiGroups) === 0)
      causes.push(cause.required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (count(rule.resources) === 0)
      causes.push(cause.required(`${at}.resources`, 'resource rules must supply at least one resource'));
  }
  return causes;
}

/** Role: every rule names verbs, groups and resources; no non-resource URLs. */
export const roleStrategy: Strategy = {
  prepareForCreate: (object) => ruleCauses(object.rules, true),
  prepareForUpdate: (object) => ruleCauses(object.rules, true),
};

function clusterRoleCauses(object: JsonObject): StatusCause[] {
  const causes = ruleCauses(object.rules, false);
  const aggregation = asObject(object.aggregationRule);
  if (aggregation !== undefined) {
    const selectors = items(aggregation.clusterRoleSelectors);
    if (selectors.length === 0)
      causes.push(
        cause.required(
          'aggregationRule.clusterRoleSelectors',
          'at least one clusterRoleSelector required if aggregationRule is non-nil',
        ),
      );
    for (const [selector, i] of selectors)
      causes.push(...labelSelector(`aggregationRule.clusterRoleSelectors[${i}]`, selector));
  }
  return causes;
}

/** ClusterRole: rules as a Role's, non-resource URLs allowed; an aggregation rule has selectors. */
export const clusterRoleStrategy: Strategy = {
  prepareForCreate: (object) => clusterRoleCauses(object),
  prepareForUpdate: (object) => clusterRoleCauses(object),
};

/** A path segment name (RBAC names may hold `:`): not `.`/`..`, no `/` or `%`. */
function pathSegmentCauses(field: string, name: string): StatusCause[] {
  if (name === '.' || name === '..') return [cause.invalid(field, name, `may not be '${name}'`)];
  for (const bad of ['/', '%'])
    if (name.includes(bad)) return [cause.invalid(field, name, `may not contain '${bad}'`)];
  return [];
}

function bindingCauses(object: JsonObject, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const roleRef = ensureObject(object, 'roleRef');
  if (roleRef.apiGroup === undefined || roleRef.apiGroup === '') roleRef.apiGroup = RBAC_GROUP;
  if (roleRef.apiGroup !== RBAC_GROUP)
    causes.push(cause.unsupported('roleRef.apiGroup', roleRef.apiGroup, [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(String(roleRef.kind)))
    causes.push(cause.unsupported('roleRef.kind', roleRef.kind ?? '', kinds));
  if (typeof roleRef.name !== 'string' || roleRef.name === '') causes.push(cause.required('roleRef.name'));
  else causes.push(...pathSegmentCauses('roleRef.name', roleRef.name));
  for (const [subject, i] of items(object.subjects)) {
    const at = `subjects[${i}]`;
    if (typeof subject.name !== 'string' || subject.name === '') causes.push(cause.required(`${at}.name`));
    switch (subject.kind) {
      case 'ServiceAccount':
        // defaulted to "" (omitted: Go's omitempty)
        if (subject.apiGroup === '') delete subject.apiGroup;
        if (subject.apiGroup !== undefined)
          causes.push(cause.unsupported(`${at}.apiGroup`, subject.apiGroup, ['']));
        if (!namespaced && (typeof subject.namespace !== 'string' || subject.namespace === ''))
          causes.push(cause.required(`${at}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (subject.apiGroup === undefined || subject.apiGroup === '') subject.apiGroup = RBAC_GROUP;
        if (subject.apiGroup !== RBAC_GROUP)
          causes.push(cause.unsupported(`${at}.apiGroup`, subject.apiGroup, [RBAC_GROUP]));
        break;
      default:
        causes.push(cause.unsupported(`${at}.kind`, subject.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  }
  return causes;
}

function binding(namespaced: boolean): Strategy {
  return {
    prepareForCreate: (object) => bindingCauses(object, namespaced),
    prepareForUpdate(object, old) {
      const causes = bindingCauses(object, namespaced);
      if (!sameJson(object.roleRef, getPath(old, 'roleRef')))
        causes.push(cause.invalid('roleRef', object.roleRef, 'cannot change roleRef'));
      return causes;
    },
  };
}

/** RoleBinding: roleRef to a Role or ClusterRole, never changed; subjects of known kinds. */
export const roleBindingStrategy: Strategy = binding(true);
/** ClusterRoleBinding: roleRef to a ClusterRole, never changed; ServiceAccount subjects name a namespace. */
export const clusterRoleBindingStrategy: Strategy = binding(false);
