import { ForbiddenError, NotFoundError } from '@converge/runtime';
import type { JsonObject } from './api-resource.ts';
import { requestUser } from './auth.ts';
import { authorize, heldRules, MASTERS_GROUP, type UserInfo } from './authorize.ts';
import type { RequestContext } from './context.ts';
import { type PolicyRule, readRule } from './rbac-rules.ts';

/**
 * RBAC's privilege escalation prevention (`pkg/registry/rbac/{role,clusterrole,rolebinding,
 * clusterrolebinding}/policybased`): a user may write a Role or ClusterRole only with rules it
 * already holds (in the role's namespace; cluster-wide for a ClusterRole) unless it may `escalate`
 * that role, and may bind a role only when it holds the role's rules itself unless it may `bind`
 * it; setting a ClusterRole's `aggregationRule` takes holding everything. `system:masters` is never
 * checked. Covering follows `pkg/registry/rbac/validation`
 * (`Covers`): each requested rule is broken into one verb × group × resource (× name) or one
 * verb × URL, and each piece must be covered by one held rule.
 */

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function has(values: readonly string[] | undefined, value: string): boolean {
  return (values ?? []).includes(value);
}

function hasAll(values: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean {
  return (wanted ?? []).every((w) => has(values, w));
}

function resourcesCover(
  owned: readonly string[] | undefined,
  wanted: readonly string[] | undefined,
): boolean {
  if (has(owned, '*')) return true;
  return (wanted ?? []).every((w) => {
    if (has(owned, w)) return true;
    const slash = w.indexOf('/');
    return slash >= 0 && has(owned, `*/${w.slice(slash + 1)}`);
  });
}

function urlCovers(owned: string, wanted: string): boolean {
  return owned === wanted || (owned.endsWith('*') && wanted.startsWith(owned.slice(0, -1)));
}

/** `ruleCovers`: whether one held rule covers one broken-down requested rule. */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourcesCover(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((w) =>
    (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, w)),
  );
  const ownerNames = owner.resourceNames ?? [];
  const names =
    (sub.resourceNames ?? []).length === 0
      ? ownerNames.length === 0
      : ownerNames.length === 0 || hasAll(ownerNames, sub.resourceNames);
  return verbs && groups && resources && urls && names;
}

/** `BreakdownRule`: one rule per verb × group × resource (× name), or per verb × URL. */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        for (const name of names)
          out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
      }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of rule.verbs) out.push({ verbs: [verb], nonResourceURLs: [url] });
  return out;
}

/** Go's `%q` of a string slice: `["a" "b"]`. */
function quoted(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

/** `CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["update"]}`. */
function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if ((rule.apiGroups ?? []).length > 0) parts.push(`APIGroups:${quoted(rule.apiGroups ?? [])}`);
  if ((rule.resources ?? []).length > 0) parts.push(`Resources:${quoted(rule.resources ?? [])}`);
  if ((rule.nonResourceURLs ?? []).length > 0)
    parts.push(`NonResourceURLs:${quoted(rule.nonResourceURLs ?? [])}`);
  if ((rule.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${quoted(rule.resourceNames ?? [])}`);
  if (rule.verbs.length > 0) parts.push(`Verbs:${quoted(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** `CompactRules`: simple rules (one group, one resource, no names) of the same resource share one rule's verbs. */
function compact(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, { verbs: string[]; apiGroups: string[]; resources: string[] }>();
  for (const rule of rules) {
    const groups = rule.apiGroups ?? [];
    const resources = rule.resources ?? [];
    if (
      groups.length === 1 &&
      resources.length === 1 &&
      (rule.resourceNames ?? []).length === 0 &&
      (rule.nonResourceURLs ?? []).length === 0
    ) {
      const key = JSON.stringify([groups[0], resources[0]]);
      const existing = simple.get(key);
      if (existing === undefined) {
        const merged = { verbs: [...rule.verbs], apiGroups: [...groups], resources: [...resources] };
        simple.set(key, merged);
        out.push(merged);
      } else existing.verbs.push(...rule.verbs.filter((v) => !existing.verbs.includes(v)));
    } else out.push(rule);
  }
  return out;
}

/** `ConfirmNoEscalation`: undefined when `user` holds every requested rule in `namespace`, else the message. */
export function escalationMessage(
  user: UserInfo,
  held: readonly PolicyRule[],
  errors: readonly string[],
  requested: readonly PolicyRule[],
): string | undefined {
  const missing = requested.flatMap(breakdown).filter((sub) => !held.some((owner) => ruleCovers(owner, sub)));
  if (missing.length === 0) return undefined;
  const lines = [...new Set(compact(missing).map(compactString))].sort();
  let message = `user ${JSON.stringify(user.username)} (groups=${quoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (errors.length > 0) message += `; resolution errors: [${errors.join(' ')}]`;
  return message;
}

function forbidden(plural: string, name: string, message: string): ForbiddenError {
  return new ForbiddenError(`${plural}.${RBAC_GROUP} ${JSON.stringify(name)} is forbidden: ${message}`, {
    details: { name, group: RBAC_GROUP, kind: plural },
  });
}

/**
 * Refuses a create or update of an RBAC object that would grant its writer more than it holds
 * (403, as kube-apiserver words it; a binding of a role that does not exist: 404). Other resources
 * and `system:masters` pass.
 */
export function confirmNoEscalation(ctx: RequestContext, object: JsonObject): void {
  const { resource } = ctx;
  if (resource.group !== RBAC_GROUP) return;
  const user = requestUser(ctx.req);
  if (user.groups.includes(MASTERS_GROUP)) return;
  const rbac = ctx.server.rbac;
  const metadata = (object.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const namespace = resource.namespaced ? ctx.target.namespace || String(metadata.namespace ?? '') : '';
  const may = (verb: string, plural: string, target: string): boolean =>
    authorize(
      user,
      {
        resourceRequest: true,
        verb,
        group: RBAC_GROUP,
        version: '',
        resource: plural,
        subresource: '',
        namespace,
        name: target,
      },
      rbac,
    ).allowed;
  let requested: readonly PolicyRule[];
  switch (resource.plural) {
    case 'roles':
    case 'clusterroles':
      if (may('escalate', resource.plural, name)) return;
      requested = (Array.isArray(object.rules) ? object.rules : []).map(readRule);
      break;
    case 'rolebindings':
    case 'clusterrolebindings': {
      const roleRef = (object.roleRef ?? {}) as { kind?: unknown; name?: unknown };
      const kind = String(roleRef.kind ?? '');
      const roleName = String(roleRef.name ?? '');
      if (may('bind', kind === 'Role' ? 'roles' : 'clusterroles', roleName)) return;
      const rules = rbac?.roleRefRules(kind, roleName, namespace) ?? [];
      if (typeof rules === 'string')
        throw new NotFoundError(rules, {
          details: { name: roleName, group: RBAC_GROUP, kind: kind.toLowerCase() },
        });
      requested = rules;
      break;
    }
    default:
      return;
  }
  const held = heldRules(user, namespace, rbac);
  const message = escalationMessage(user, held.rules, held.errors, requested);
  if (message !== undefined) throw forbidden(resource.plural, name, message);
  // an aggregation rule can gather anything: setting one takes everything
  if (
    resource.plural === 'clusterroles' &&
    object.aggregationRule !== undefined &&
    object.aggregationRule !== null &&
    escalationMessage(user, held.rules, held.errors, FULL_AUTHORITY) !== undefined
  )
    throw forbidden(resource.plural, name, 'must have cluster-admin privileges to use the aggregationRule');
}

/** Everything: what setting an aggregationRule requires. */
const FULL_AUTHORITY: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];
