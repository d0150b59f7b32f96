/**
 * Defaults and field validation of `MatchResources` (a policy's `matchConstraints`, a binding's
 * `matchResources`) and their rules, as kube-apiserver 1.32's admissionregistration validation
 * words them.
 */
import { fieldError, labelSelectorFromObject, type StatusCause } from '@converge/runtime';
import type { JsonObject } from '../types.ts';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];

/** `value` when it is a JSON object. */
export function object(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

/** A list as strings (anything else: empty). */
export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : String(v))) : [];
}

/** Sets `key` when it is absent or null. */
export function setDefault(target: JsonObject, key: string, value: unknown): void {
  if (target[key] === undefined || target[key] === null) target[key] = value;
}

/** kube's defaults of a `MatchResources`: `matchPolicy: Equivalent`, empty selectors, `scope: '*'`. */
export function defaultMatchResources(match: JsonObject): void {
  setDefault(match, 'matchPolicy', 'Equivalent');
  setDefault(match, 'namespaceSelector', {});
  setDefault(match, 'objectSelector', {});
  for (const key of ['resourceRules', 'excludeResourceRules']) {
    for (const rule of Array.isArray(match[key]) ? match[key] : []) {
      const r = object(rule);
      if (r !== undefined) setDefault(r, 'scope', '*');
    }
  }
}

function wildcardWithOthers(values: readonly string[]): boolean {
  return values.length > 1 && values.includes('*');
}

function resourcesCauses(resources: readonly string[], at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (resources.length === 0) causes.push(fieldError.required(at));
  const wildcardSub = new Set<string>();
  const wildcardRes = new Set<string>();
  let single = false;
  let plain = false;
  resources.forEach((item, i) => {
    if (item === '') {
      causes.push(fieldError.required(`${at}[${i}]`));
      return;
    }
    if (item === '*') single = true;
    const slash = item.indexOf('/');
    if (slash < 0) {
      plain ||= item !== '*';
      return;
    }
    const res = item.slice(0, slash);
    const sub = item.slice(slash + 1);
    if (wildcardSub.has(res))
      causes.push(
        fieldError.invalid(`${at}[${i}]`, item, `if '${res}/*' is present, must not specify ${item}`),
      );
    if (wildcardRes.has(sub))
      causes.push(
        fieldError.invalid(`${at}[${i}]`, item, `if '*/${sub}' is present, must not specify ${item}`),
      );
    if (sub === '*') wildcardSub.add(res);
    if (res === '*') wildcardRes.add(sub);
  });
  if (resources.length > 1 && resources.includes('*/*'))
    causes.push(fieldError.invalid(at, resources, "if '*/*' is present, must not specify other resources"));
  if (single && plain)
    causes.push(
      fieldError.invalid(
        at,
        resources,
        "if '*' is present, must not specify other resources without subresources",
      ),
    );
  return causes;
}

function ruleCauses(value: unknown, at: string): StatusCause[] {
  const rule = object(value) ?? {};
  const causes: StatusCause[] = [];
  for (const key of ['operations', 'apiGroups', 'apiVersions', 'resources', 'resourceNames']) {
    const list = rule[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list))
      causes.push(fieldError.invalid(`${at}.${key}`, list, 'must be a list of strings'));
    else
      list.forEach((item, i) => {
        if (typeof item !== 'string')
          causes.push(fieldError.invalid(`${at}.${key}[${i}]`, item, 'must be a string'));
      });
  }
  const names = strings(rule.resourceNames);
  const seen = new Set<string>();
  names.forEach((name, i) => {
    if (name === '.' || name === '..' || /[/%]/.test(name))
      causes.push(
        fieldError.invalid(
          `${at}.resourceNames[${i}]`,
          name,
          'may not contain \'/\' or \'%\' or be "." or ".."',
        ),
      );
    if (seen.has(name)) causes.push(fieldError.duplicate(`${at}.resourceNames[${i}]`, name));
    seen.add(name);
  });
  const operations = strings(rule.operations);
  if (operations.length === 0) causes.push(fieldError.required(`${at}.operations`));
  if (wildcardWithOthers(operations))
    causes.push(
      fieldError.invalid(
        `${at}.operations`,
        operations,
        "if '*' is present, must not specify other operations",
      ),
    );
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op))
      causes.push(fieldError.unsupported(`${at}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) causes.push(fieldError.required(`${at}.apiGroups`));
  if (wildcardWithOthers(groups))
    causes.push(
      fieldError.invalid(`${at}.apiGroups`, groups, "if '*' is present, must not specify other API groups"),
    );
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) causes.push(fieldError.required(`${at}.apiVersions`));
  if (wildcardWithOthers(versions))
    causes.push(
      fieldError.invalid(
        `${at}.apiVersions`,
        versions,
        "if '*' is present, must not specify other API versions",
      ),
    );
  versions.forEach((v, i) => {
    if (v === '') causes.push(fieldError.required(`${at}.apiVersions[${i}]`));
  });
  causes.push(...resourcesCauses(strings(rule.resources), `${at}.resources`));
  if (rule.scope !== undefined && !SCOPES.includes(rule.scope as string))
    causes.push(fieldError.unsupported(`${at}.scope`, rule.scope, SCOPES));
  return causes;
}

/** A label selector: required, and one kube accepts. */
export function selectorCauses(value: unknown, at: string): StatusCause[] {
  if (value === undefined || value === null) return [fieldError.required(at)];
  try {
    labelSelectorFromObject(value as never);
    return [];
  } catch (error) {
    return [fieldError.invalid(at, value, error instanceof Error ? error.message : String(error))];
  }
}

/** The field errors of a `MatchResources` at `at` (none when absent). */
export function matchResourcesCauses(value: unknown, at: string): StatusCause[] {
  if (value === undefined || value === null) return [];
  const match = object(value);
  if (match === undefined) return [fieldError.invalid(at, value, 'must be an object')];
  const causes: StatusCause[] = [];
  if (match.matchPolicy === undefined) causes.push(fieldError.required(`${at}.matchPolicy`));
  else if (match.matchPolicy !== 'Equivalent' && match.matchPolicy !== 'Exact')
    causes.push(fieldError.unsupported(`${at}.matchPolicy`, match.matchPolicy, ['Equivalent', 'Exact']));
  causes.push(...selectorCauses(match.namespaceSelector, `${at}.namespaceSelector`));
  causes.push(...selectorCauses(match.objectSelector, `${at}.objectSelector`));
  for (const key of ['resourceRules', 'excludeResourceRules']) {
    const rules = match[key];
    if (rules === undefined || rules === null) continue;
    if (!Array.isArray(rules)) causes.push(fieldError.invalid(`${at}.${key}`, rules, 'must be a list'));
    else
      rules.forEach((rule, i) => {
        causes.push(...ruleCauses(rule, `${at}.${key}[${i}]`));
      });
  }
  return causes;
}
