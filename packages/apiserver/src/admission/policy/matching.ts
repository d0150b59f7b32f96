import { namespaceSelected, objectSelected } from '../match.ts';
import { type MatchedVersion, matchedVersion } from '../match-policy.ts';
import type { AdmissionAttributes, Webhook } from '../types.ts';
import type { MatchResources, NamedRule } from './types.ts';

/** The rules whose `resourceNames` (empty: any) allow the request's name, as a webhook's rules. */
function rulesFor(rules: readonly NamedRule[] | undefined, matchPolicy: unknown, name: string): Webhook {
  const allowed = (Array.isArray(rules) ? rules : []).filter((rule) => {
    if (typeof rule !== 'object' || rule === null) return false;
    const names = Array.isArray(rule.resourceNames) ? rule.resourceNames : [];
    return names.length === 0 || names.includes(name);
  });
  return {
    rules: allowed,
    matchPolicy: matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
  } as unknown as Webhook;
}

/**
 * Whether `match` (a policy's `matchConstraints` or a binding's `matchResources`) selects the
 * request, as kube-apiserver's policy matcher: namespace and object selectors, then no
 * `excludeResourceRules` may match, then one `resourceRules` entry must (with `resourceNames`
 * when listed). Under `matchPolicy: Equivalent` (the default) a rule naming another served version
 * of a custom resource matches too. Resolves with how it matched (the request, or the equivalent
 * version the policy then sees the objects in), or undefined. `emptyRulesMatch`: no
 * `resourceRules` selects every request (bindings).
 */
export async function resourcesMatch(
  match: MatchResources | undefined,
  attributes: AdmissionAttributes,
  namespaceLabels: (name: string) => Promise<Record<string, string>>,
  emptyRulesMatch: boolean,
): Promise<MatchedVersion | undefined> {
  if (match === undefined || match === null || typeof match !== 'object')
    return emptyRulesMatch ? 'request' : undefined;
  const selectors = {
    namespaceSelector: match.namespaceSelector,
    objectSelector: match.objectSelector,
  } as unknown as Webhook;
  if (!objectSelected(selectors, attributes)) return undefined;
  if (!(await namespaceSelected(selectors, attributes, namespaceLabels))) return undefined;
  const { name } = attributes;
  if (matchedVersion(rulesFor(match.excludeResourceRules, match.matchPolicy, name), attributes) !== undefined)
    return undefined;
  if (!Array.isArray(match.resourceRules) || match.resourceRules.length === 0)
    return emptyRulesMatch ? 'request' : undefined;
  return matchedVersion(rulesFor(match.resourceRules, match.matchPolicy, name), attributes);
}
