/**
 * Authorization: one decision, {@link authorize}, for every request and every access review, as
 * kube-apiserver's authorizer chain with `--authorization-mode=RBAC`: `system:masters` may do
 * everything (the privileged-group authorizer, decided before anything is computed); everyone
 * else gets what the bootstrap policy gives every client (`system:discovery`,
 * `system:basic-user`, `system:public-info-viewer` — held even where the bootstrap objects are
 * absent) plus what the stored Roles and ClusterRoles bound to the user, its groups or its
 * ServiceAccount grant ({@link RbacAuthorizer}, rbac-authorizer.ts).
 */
import type { RbacAuthorizer } from './rbac-authorizer.ts';
import { BASIC_USER_RULES, DISCOVERY_RULES, PUBLIC_INFO_RULES } from './rbac-bootstrap.ts';
import {
  type CompiledRule,
  compileRule,
  type PolicyRule,
  type RuleRequest,
  ruleAllows,
} from './rbac-rules.ts';

/** Who makes a request, as `user.Info`. */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What a request does, as `authorizer.Attributes`. */
export type RequestAttributes =
  | {
      readonly resourceRequest: true;
      readonly verb: string;
      readonly group: string;
      readonly version: string;
      readonly resource: string;
      readonly subresource: string;
      readonly namespace: string;
      readonly name: string;
    }
  | { readonly resourceRequest: false; readonly verb: string; readonly path: string };

/** An authorization decision: allowed, or denied (with the authorizer's reason, often empty). */
export interface Decision {
  readonly allowed: boolean;
  readonly denied: boolean;
  readonly reason: string;
}

/** One rule a user holds, as a SelfSubjectRulesReview lists it. */
export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
}

export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

/** What a user may do in a namespace, as a SelfSubjectRulesReview answers. */
export interface UserRules {
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
  readonly incomplete: boolean;
  /** The errors met (bindings of missing roles), '' when none. */
  readonly evaluationError: string;
}

export const MASTERS_GROUP = 'system:masters';
const AUTHENTICATED_GROUP = 'system:authenticated';
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

const AUTHENTICATED_RULES: readonly PolicyRule[] = [
  ...DISCOVERY_RULES,
  ...BASIC_USER_RULES,
  ...PUBLIC_INFO_RULES,
];
const COMPILED_AUTHENTICATED: readonly CompiledRule[] = AUTHENTICATED_RULES.map(compileRule);
const COMPILED_PUBLIC: readonly CompiledRule[] = PUBLIC_INFO_RULES.map(compileRule);
const ALL_RULES: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** The bootstrap rules a user holds through its groups. */
function bootstrapRules(user: UserInfo): readonly PolicyRule[] {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return AUTHENTICATED_RULES;
  if (user.groups.includes(UNAUTHENTICATED_GROUP)) return PUBLIC_INFO_RULES;
  return [];
}

function compiledBootstrap(user: UserInfo): readonly CompiledRule[] {
  if (user.groups.includes(AUTHENTICATED_GROUP)) return COMPILED_AUTHENTICATED;
  if (user.groups.includes(UNAUTHENTICATED_GROUP)) return COMPILED_PUBLIC;
  return [];
}

/**
 * The policy rules a user holds in `namespace`: everything for `system:masters` (the
 * privileged-group resolver, ahead of RBAC's), the rules of every binding that names it
 * (ClusterRoleBindings, and the namespace's RoleBindings) and the bootstrap rules of its groups,
 * each distinct rule once in the order found; with the errors met (bindings of missing roles).
 */
export function heldRules(
  user: UserInfo,
  namespace: string,
  rbac?: RbacAuthorizer,
): { readonly rules: readonly PolicyRule[]; readonly errors: readonly string[] } {
  const stored = rbac?.rulesFor(user, namespace) ?? { rules: [], errors: [] };
  const all = [
    ...(user.groups.includes(MASTERS_GROUP) ? ALL_RULES : []),
    ...stored.rules,
    ...bootstrapRules(user),
  ];
  const seen = new Set<string>();
  const rules: PolicyRule[] = [];
  for (const rule of all) {
    const key = JSON.stringify([
      rule.verbs,
      rule.apiGroups,
      rule.resources,
      rule.resourceNames,
      rule.nonResourceURLs,
    ]);
    if (seen.has(key)) continue;
    seen.add(key);
    rules.push(rule);
  }
  return { rules, errors: stored.errors };
}

/**
 * The rules a user holds in `namespace` (`RulesFor`): everything for `system:masters`; else the
 * bootstrap rules of its groups and the rules of every binding that names it (ClusterRoleBindings,
 * and the namespace's RoleBindings), each distinct rule once, in the order found.
 */
export function rulesFor(user: UserInfo, namespace: string, rbac?: RbacAuthorizer): UserRules {
  const found = heldRules(user, namespace, rbac);
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const rule of found.rules) {
    // as the RBAC authorizer's RulesFor: a rule with resources is a resource rule, one with URLs a non-resource rule
    if ((rule.resources ?? []).length > 0)
      resourceRules.push({
        verbs: rule.verbs,
        apiGroups: rule.apiGroups ?? [],
        resources: rule.resources ?? [],
        ...((rule.resourceNames ?? []).length === 0 ? {} : { resourceNames: rule.resourceNames }),
      });
    if ((rule.nonResourceURLs ?? []).length > 0)
      nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs ?? [] });
  }
  const unique = [...new Set(found.errors)];
  const evaluationError =
    unique.length === 0 ? '' : unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
  return { resourceRules, nonResourceRules, incomplete: false, evaluationError };
}

const ALLOW: Decision = { allowed: true, denied: false, reason: '' };

/**
 * Decides whether `user` may do what `attributes` describe. `system:masters` is allowed
 * everything before any other work; then the bootstrap rules of the user's groups; then the RBAC
 * authorizer over the stored roles and bindings. Nothing else is ever allowed: the answer is
 * `denied: false` (RBAC's "no opinion") with the authorizer's reason (`RBAC: …` naming missing
 * roles, or ''), which the request path turns into a 403. `explain` (access reviews): an allowed
 * decision names the binding that granted it.
 */
export function authorize(
  user: UserInfo,
  attributes: RequestAttributes,
  rbac?: RbacAuthorizer,
  explain = false,
): Decision {
  if (user.groups.includes(MASTERS_GROUP)) return ALLOW;
  const request: RuleRequest = attributes;
  for (const rule of compiledBootstrap(user)) if (ruleAllows(rule, request)) return ALLOW;
  if (rbac === undefined) return { allowed: false, denied: false, reason: '' };
  const namespace = attributes.resourceRequest ? attributes.namespace : '';
  const decision = rbac.authorize(user, namespace, request, explain);
  return { allowed: decision.allowed, denied: false, reason: decision.reason };
}

/** kube-apiserver's message for a denied request (`responsewriters.forbiddenMessage`). */
export function forbiddenMessage(user: UserInfo, attributes: RequestAttributes): string {
  const who = JSON.stringify(user.username);
  if (!attributes.resourceRequest)
    return `User ${who} cannot ${attributes.verb} path ${JSON.stringify(attributes.path)}`;
  const resource =
    attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const where =
    attributes.namespace === ''
      ? 'at the cluster scope'
      : `in the namespace ${JSON.stringify(attributes.namespace)}`;
  return `User ${who} cannot ${attributes.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attributes.group)} ${where}`;
}
