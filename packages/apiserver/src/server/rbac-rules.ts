/**
 * RBAC policy rules and how one rule matches a request, as kube-apiserver's
 * `pkg/apis/rbac/v1/evaluation_helpers.go` (`RuleAllows` of the RBAC authorizer): a verb, an API
 * group, a resource (`*`, `resource`, `resource/subresource` or `*`/`subresource` — there is no
 * `resource/*`), resource names (a rule that names objects only matches a request that names one)
 * and non-resource URLs (exact, `*`, or a prefix ending in `*`). Rules are compiled once into sets,
 * so a decision is a few set lookups.
 */

/** One rule of a Role or ClusterRole, as stored (`rbacv1.PolicyRule`). */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

/** A request as RBAC sees it (a subset of the authorizer's attributes). */
export type RuleRequest =
  | {
      readonly resourceRequest: true;
      readonly verb: string;
      readonly group: string;
      readonly resource: string;
      readonly subresource: string;
      readonly name: string;
    }
  | { readonly resourceRequest: false; readonly verb: string; readonly path: string };

/** A set that may be `*` (everything). */
interface Match {
  readonly all: boolean;
  readonly values: ReadonlySet<string>;
}

/** A {@link PolicyRule} compiled for matching. */
export interface CompiledRule {
  readonly rule: PolicyRule;
  readonly verbs: Match;
  readonly groups: Match;
  /** Resources and `resource/subresource` names; `all` for `*`. */
  readonly resources: Match;
  /** The subresources of `*`/`subresource` entries. */
  readonly anySubresource: ReadonlySet<string>;
  /** undefined: every name (the rule names none). */
  readonly names: ReadonlySet<string> | undefined;
  /** undefined: not a non-resource rule. */
  readonly urls:
    | { readonly all: boolean; readonly exact: ReadonlySet<string>; readonly prefixes: readonly string[] }
    | undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function match(values: readonly string[]): Match {
  return { all: values.includes('*'), values: new Set(values) };
}

/** Reads a stored rule (anything not a string list counts as empty). */
export function readRule(raw: unknown): PolicyRule {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const rule: {
    verbs: string[];
    apiGroups?: string[];
    resources?: string[];
    resourceNames?: string[];
    nonResourceURLs?: string[];
  } = { verbs: strings(r.verbs) };
  for (const key of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
    const values = strings(r[key]);
    if (values.length > 0) rule[key] = values;
  }
  return rule;
}

/** Compiles a rule for {@link ruleAllows}. */
export function compileRule(rule: PolicyRule): CompiledRule {
  const resources = rule.resources ?? [];
  const urls = rule.nonResourceURLs ?? [];
  const names = rule.resourceNames ?? [];
  return {
    rule,
    verbs: match(rule.verbs),
    groups: match(rule.apiGroups ?? []),
    resources: match(resources),
    anySubresource: new Set(resources.filter((r) => r.startsWith('*/')).map((r) => r.slice(2))),
    names: names.length === 0 ? undefined : new Set(names),
    urls:
      urls.length === 0
        ? undefined
        : {
            all: urls.includes('*'),
            exact: new Set(urls),
            prefixes: urls.filter((u) => u.endsWith('*')).map((u) => u.slice(0, -1)),
          },
  };
}

function has(m: Match, value: string): boolean {
  return m.all || m.values.has(value);
}

/** Whether one compiled rule allows a request (`RuleAllows`). */
export function ruleAllows(rule: CompiledRule, request: RuleRequest): boolean {
  if (!has(rule.verbs, request.verb)) return false;
  if (!request.resourceRequest) {
    const urls = rule.urls;
    if (urls === undefined) return false;
    return urls.all || urls.exact.has(request.path) || urls.prefixes.some((p) => request.path.startsWith(p));
  }
  if (!has(rule.groups, request.group)) return false;
  const combined =
    request.subresource === '' ? request.resource : `${request.resource}/${request.subresource}`;
  const resourceMatches =
    has(rule.resources, combined) ||
    (request.subresource !== '' && rule.anySubresource.has(request.subresource));
  if (!resourceMatches) return false;
  return rule.names === undefined || rule.names.has(request.name);
}

/** Sorted copy, as kube's rule builder stores bootstrap rules. */
function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** A resource rule (sorted lists). */
export function resourceRule(
  verbs: readonly string[],
  apiGroups: readonly string[],
  resources: readonly string[],
  resourceNames?: readonly string[],
): PolicyRule {
  return {
    verbs: sorted(verbs),
    apiGroups: sorted(apiGroups),
    resources: sorted(resources),
    ...(resourceNames === undefined ? {} : { resourceNames: sorted(resourceNames) }),
  };
}

/** A non-resource rule (sorted lists). */
export function urlRule(verbs: readonly string[], urls: readonly string[]): PolicyRule {
  return { verbs: sorted(verbs), nonResourceURLs: sorted(urls) };
}
