import { labelSelectorFromObject } from '@converge/runtime';
import type { AdmissionAttributes, JsonObject, Webhook, WebhookRule } from './types.ts';

/** Matches a list of rule values where `*` matches everything. */
function listed(values: readonly string[] | undefined, value: string): boolean {
  return (values ?? []).some((v) => v === '*' || v === value);
}

/**
 * Whether `pattern` of a rule's `resources` names the resource and subresource: `pods` (main
 * resource only), `pods/status`, `pods/*` (pods and every subresource), `*` (every main resource),
 * `*\/status`, `*\/*` (everything), as kube-apiserver's rule matcher.
 */
function resourceMatches(pattern: string, resource: string, subResource: string): boolean {
  if (typeof pattern !== 'string') return false; // a malformed stored rule matches nothing
  const [res = '', sub] = pattern.split('/', 2);
  if (res !== '*' && res !== resource) return false;
  if (sub === undefined) return subResource === '';
  return sub === '*' || sub === subResource;
}

function scopeMatches(scope: string | undefined, namespaced: boolean): boolean {
  if (scope === undefined || scope === '*') return true;
  return scope === (namespaced ? 'Namespaced' : 'Cluster');
}

/** Whether one rule matches the request (operation, group, version, resource, scope). */
export function ruleMatches(rule: WebhookRule, attributes: AdmissionAttributes): boolean {
  return (
    listed(rule.operations, attributes.operation) &&
    listed(rule.apiGroups, attributes.resource.group) &&
    listed(rule.apiVersions, attributes.resource.version) &&
    (rule.resources ?? []).some((p) =>
      resourceMatches(p, attributes.resource.resource, attributes.subResource),
    ) &&
    scopeMatches(rule.scope, attributes.namespaced)
  );
}

function labelsOf(object: JsonObject | null): Record<string, string> {
  const metadata = object?.metadata as { labels?: Record<string, string> } | undefined;
  return metadata?.labels ?? {};
}

function selects(selector: JsonObject | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return true;
  return labelSelectorFromObject(selector).matches(labels);
}

/** `objectSelector`: the new or the old object's labels must match (either is enough). */
export function objectSelected(webhook: Webhook, attributes: AdmissionAttributes): boolean {
  const selector = webhook.objectSelector;
  if (selector === undefined) return true;
  return (
    (attributes.object !== null && selects(selector, labelsOf(attributes.object))) ||
    (attributes.oldObject !== null && selects(selector, labelsOf(attributes.oldObject)))
  );
}

/**
 * `namespaceSelector`: for namespaced objects the labels of their namespace; for a Namespace
 * itself its own labels; other cluster-scoped objects always match.
 */
export async function namespaceSelected(
  webhook: Webhook,
  attributes: AdmissionAttributes,
  namespaceLabels: (name: string) => Promise<Record<string, string>>,
): Promise<boolean> {
  const selector = webhook.namespaceSelector;
  if (selector === undefined || Object.keys(selector).length === 0) return true;
  const { group, resource } = attributes.resource;
  if (group === '' && resource === 'namespaces' && attributes.subResource === '') {
    return selects(selector, labelsOf(attributes.object ?? attributes.oldObject));
  }
  if (!attributes.namespaced) return true;
  return selects(selector, await namespaceLabels(attributes.namespace));
}

/**
 * Requests kube-apiserver never sends to webhooks, so a broken webhook cannot lock itself in:
 * writes to webhook configurations and admission policies.
 */
export function isExempt(attributes: AdmissionAttributes): boolean {
  return (
    attributes.resource.group === 'admissionregistration.k8s.io' &&
    [
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'mutatingadmissionpolicies',
      'mutatingadmissionpolicybindings',
    ].includes(attributes.resource.resource)
  );
}

/** Whether a webhook's rules name the request's own group/version/resource (`matchPolicy: Equivalent` in match-policy.ts). */
export function webhookMatches(webhook: Webhook, attributes: AdmissionAttributes): boolean {
  return (webhook.rules ?? []).some((rule) => ruleMatches(rule, attributes));
}
