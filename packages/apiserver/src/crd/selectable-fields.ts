/**
 * The field set of a custom resource for field selectors: `metadata.name`, `metadata.namespace`
 * (namespaced kinds) and each selectable field of the version, as kube-apiserver's strategy builds
 * it (`GetAttrs`).
 */
import { goValue } from './go-format.ts';
import { assertJson, isObject } from './json.ts';
import { findResults, parseJsonPath } from './jsonpath.ts';

/**
 * The values field selectors match against: names without the leading dot, values printed as Go's
 * `fmt.Sprint` does (`true`, `3`), `''` when absent. Throws {@link CrdJsonPathError} for an
 * unparsable path.
 *
 * @example
 * selectableFieldValues(website, ['.spec.tier'], true);
 * // { 'metadata.name': 'w1', 'metadata.namespace': 'default', 'spec.tier': 'pro' }
 */
export function selectableFieldValues(
  object: unknown,
  selectableFields: readonly string[],
  namespaced: boolean,
): Record<string, string> {
  assertJson(object);
  const meta = isObject(object) && isObject(object.metadata) ? object.metadata : {};
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const out: Record<string, string> = { 'metadata.name': text(meta.name) };
  if (namespaced) out['metadata.namespace'] = text(meta.namespace);
  for (const jsonPath of selectableFields) {
    const name = jsonPath.startsWith('.') ? jsonPath.slice(1) : jsonPath;
    const [value] = findResults(parseJsonPath(jsonPath), object);
    out[name] = value === undefined || value === null ? '' : goValue(value);
  }
  return out;
}
