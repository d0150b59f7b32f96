import { namespaceSelected, objectSelected, ruleMatches } from '../match.ts';
import type { AdmissionAttributes, Webhook } from '../types.ts';
import type { MatchResources, NamedRule } from './types.ts';

function ruleAndNameMatch(rule: NamedRule, attributes: AdmissionAttributes): boolean {
  if (typeof rule !== 'object' || rule === null || !ruleMatches(rule, attributes)) return false;
  const names = Array.isArray(rule.resourceNames) ? rule.resourceNames : [];
  return names.length === 0 || names.includes(attributes.name);
}

/**
 * Whether `match` (a policy's `matchConstraints` or a binding's `matchResources`) selects the
 * request, as kube-apiserver's policy matcher: namespace and object selectors, then no
 * `excludeResourceRules` may match, then one `resourceRules` entry must (with `resourceNames`
 * when listed). `emptyRulesMatch`: a binding without `resourceRules` does not narrow the policy.
 *
 * `matchPolicy` needs no conversion here: the embedded server serves each kind in one version
 * (custom resources aside), so Exact and Equivalent select the same requests.
 */
export async function resourcesMatch(
  match: MatchResources | undefined,
  attributes: AdmissionAttributes,
  namespaceLabels: (name: string) => Promise<Record<string, string>>,
  emptyRulesMatch: boolean,
): Promise<boolean> {
  if (match === undefined || match === null || typeof match !== 'object') return emptyRulesMatch;
  const selectors = {
    namespaceSelector: match.namespaceSelector,
    objectSelector: match.objectSelector,
  } as unknown as Webhook;
  if (!objectSelected(selectors, attributes)) return false;
  if (!(await namespaceSelected(selectors, attributes, namespaceLabels))) return false;
  const exclude = Array.isArray(match.excludeResourceRules) ? match.excludeResourceRules : [];
  if (exclude.some((rule) => ruleAndNameMatch(rule, attributes))) return false;
  const rules = Array.isArray(match.resourceRules) ? match.resourceRules : [];
  if (rules.length === 0) return emptyRulesMatch;
  return rules.some((rule) => ruleAndNameMatch(rule, attributes));
}
