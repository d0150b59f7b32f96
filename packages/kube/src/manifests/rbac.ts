import type { PermissionRule } from '@converge/runtime';

/** An RBAC PolicyRule as Roles and ClusterRoles hold it. */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

/** An RBAC PolicyRule for non-resource URLs (ClusterRoles only). */
export interface NonResourcePolicyRule {
  readonly nonResourceURLs: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * Announcing a fence (`POST /converge/fences`), which a leader does when its term starts and a
 * shard member when it revokes a member gone past its lease. Converge's API server serves it; a
 * Kubernetes cluster authorizes the path before it finds no handler, so without this rule it
 * answers 403 (which fails the manager, or stalls a revocation) rather than the 404 that tells
 * the backend the server does not fence.
 */
export const FENCES_RULE: NonResourcePolicyRule = {
  nonResourceURLs: ['/converge/fences'],
  verbs: ['post'],
};

/** The verbs leader election needs on Leases (client-go's and Converge's LeaseLock). */
export const LEASE_VERBS: readonly string[] = ['create', 'get', 'list', 'patch', 'update', 'watch'];
/** What recording Events needs, in both Event APIs (the recorder writes events.k8s.io/v1 first). */
export const EVENT_RULES: readonly PermissionRule[] = [
  { group: '', resource: 'events', verbs: ['create', 'patch'] },
  { group: 'events.k8s.io', resource: 'events', verbs: ['create', 'patch'] },
];

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Policy rules for `rules` (one scope's): rules of one group with the same verbs and resource
 * names share a PolicyRule listing their resources, as controller-gen writes them; sorted by
 * group, then resources, so the same permissions always give the same YAML.
 */
export function policyRules(rules: readonly PermissionRule[]): PolicyRule[] {
  const byKey = new Map<
    string,
    { group: string; verbs: string[]; names?: string[]; resources: Set<string> }
  >();
  for (const rule of rules) {
    const verbs = [...new Set(rule.verbs)].sort();
    const names = rule.resourceNames === undefined ? undefined : [...new Set(rule.resourceNames)].sort();
    const key = JSON.stringify([rule.group, verbs, names ?? null]);
    let entry = byKey.get(key);
    if (entry === undefined) {
      entry = { group: rule.group, verbs, ...(names === undefined ? {} : { names }), resources: new Set() };
      byKey.set(key, entry);
    }
    entry.resources.add(rule.resource);
  }
  return [...byKey.values()]
    .map((e) => ({
      apiGroups: [e.group],
      resources: [...e.resources].sort(),
      ...(e.names === undefined ? {} : { resourceNames: e.names }),
      verbs: e.verbs,
    }))
    .sort(
      (a, b) =>
        cmp(a.apiGroups[0] ?? '', b.apiGroups[0] ?? '') ||
        cmp(a.resources.join(','), b.resources.join(',')) ||
        cmp((a.resourceNames ?? []).join(','), (b.resourceNames ?? []).join(',')) ||
        cmp(a.verbs.join(','), b.verbs.join(',')),
    );
}
