/**
 * Authorization: one decision, {@link authorize}, for every request and every access review. The
 * embedded server knows two kinds of users — `system:masters` (the admin token, insecure mode) may
 * do everything; anyone else gets what kube-apiserver's bootstrap RBAC policy grants every
 * authenticated user (`system:discovery`, `system:public-info-viewer`, `system:basic-user`): read
 * discovery, OpenAPI, `/version` and the health checks, and create the self reviews. An RBAC
 * authorizer replaces {@link authorize} later without changing its callers.
 */

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
}

export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

export const MASTERS_GROUP = 'system:masters';

/** The rules bootstrap RBAC gives `system:authenticated` (system:basic-user, system:discovery, system:public-info-viewer). */
const AUTHENTICATED_RESOURCE_RULES: readonly ResourceRule[] = [
  {
    verbs: ['create'],
    apiGroups: ['authorization.k8s.io'],
    resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
  },
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
];
const AUTHENTICATED_NON_RESOURCE_RULES: readonly NonResourceRule[] = [
  {
    verbs: ['get'],
    nonResourceURLs: [
      '/api',
      '/api/*',
      '/apis',
      '/apis/*',
      '/healthz',
      '/livez',
      '/openapi',
      '/openapi/*',
      '/readyz',
      '/version',
      '/version/',
    ],
  },
  { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
];
const ALL_RESOURCES: readonly ResourceRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
const ALL_NON_RESOURCES: readonly NonResourceRule[] = [{ verbs: ['*'], nonResourceURLs: ['*'] }];

/** The rules a user holds in a namespace (the same in every namespace here). */
export function rulesFor(user: UserInfo): {
  resourceRules: readonly ResourceRule[];
  nonResourceRules: readonly NonResourceRule[];
} {
  if (user.groups.includes(MASTERS_GROUP))
    return { resourceRules: ALL_RESOURCES, nonResourceRules: ALL_NON_RESOURCES };
  if (user.groups.includes('system:authenticated'))
    return {
      resourceRules: AUTHENTICATED_RESOURCE_RULES,
      nonResourceRules: AUTHENTICATED_NON_RESOURCE_RULES,
    };
  // system:unauthenticated keeps only system:public-info-viewer
  return { resourceRules: [], nonResourceRules: [AUTHENTICATED_NON_RESOURCE_RULES[1] as NonResourceRule] };
}

function matches(values: readonly string[], value: string): boolean {
  return values.includes('*') || values.includes(value);
}

/** RBAC's non-resource URL match: exact, `*`, or a prefix ending in `*`. */
function urlMatches(patterns: readonly string[], path: string): boolean {
  return patterns.some(
    (p) => p === '*' || p === path || (p.endsWith('*') && path.startsWith(p.slice(0, -1))),
  );
}

/**
 * Decides whether `user` may do what `attributes` describe. `system:masters` is allowed
 * everything (as kube-apiserver's privileged-group authorizer); other users get the rules of
 * {@link rulesFor}. Nothing else is ever allowed: the answer is `denied: false` with no reason
 * (RBAC's "no opinion"), which the request path turns into a 403.
 */
export function authorize(user: UserInfo, attributes: RequestAttributes): Decision {
  if (user.groups.includes(MASTERS_GROUP)) return { allowed: true, denied: false, reason: '' };
  const { resourceRules, nonResourceRules } = rulesFor(user);
  const allowed = attributes.resourceRequest
    ? resourceRules.some((rule) => {
        const resource =
          attributes.subresource === ''
            ? attributes.resource
            : `${attributes.resource}/${attributes.subresource}`;
        return (
          matches(rule.verbs, attributes.verb) &&
          matches(rule.apiGroups, attributes.group) &&
          matches(rule.resources, resource)
        );
      })
    : nonResourceRules.some(
        (rule) => matches(rule.verbs, attributes.verb) && urlMatches(rule.nonResourceURLs, attributes.path),
      );
  return { allowed, denied: false, reason: '' };
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
