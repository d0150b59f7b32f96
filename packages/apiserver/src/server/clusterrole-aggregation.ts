import { isConflict, isNotFound, type KubeObject, type ResourceType } from '@converge/runtime';
import type { Store } from '@converge/store';
import type { JsonObject } from './api-resource.ts';
import { asObject } from './json-util.ts';
import { items, sameJson, selectorMatches } from './strategy-rules.ts';

/**
 * kube-controller-manager's clusterrole-aggregation controller: a ClusterRole with an
 * `aggregationRule` gets the rules of every other ClusterRole its `clusterRoleSelectors` match
 * (selector by selector, matching roles by name, each rule once).
 */

function aggregatedRules(role: KubeObject, all: readonly KubeObject[]): unknown[] {
  const selectors = items(asObject((role as unknown as JsonObject).aggregationRule)?.clusterRoleSelectors);
  const byName = [...all].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  const rules: unknown[] = [];
  for (const [selector] of selectors) {
    for (const other of byName) {
      if (other.metadata.name === role.metadata.name) continue;
      if (!selectorMatches(selector, (other.metadata.labels ?? {}) as JsonObject)) continue;
      for (const rule of ((other as unknown as JsonObject).rules as unknown[] | undefined) ?? [])
        if (!rules.some((r) => sameJson(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

/** Brings every aggregated ClusterRole's rules up to date; one pass over the current roles. */
export async function aggregateClusterRoles(store: Store, type: ResourceType): Promise<void> {
  const { items: roles } = await store.list(type);
  for (const role of roles) {
    if (asObject((role as unknown as JsonObject).aggregationRule) === undefined) continue;
    const rules = aggregatedRules(role, roles);
    if (sameJson((role as unknown as JsonObject).rules ?? [], rules)) continue;
    const next = structuredClone(role) as unknown as JsonObject;
    next.rules = rules;
    try {
      await store.update(type, next as unknown as KubeObject);
    } catch (error) {
      // a newer version is on its way through the watch, which runs this again
      if (!isConflict(error) && !isNotFound(error)) throw error;
    }
  }
}
