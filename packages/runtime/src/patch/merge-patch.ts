import { cloneJson, getOwn, isJsonObject, type JsonObject, setOwn } from './json-value.ts';

/**
 * Applies a JSON merge patch (RFC 7386, `application/merge-patch+json`) and returns the result.
 *
 * - An object patch merges into the target member by member, recursively; a `null` member deletes
 *   that member; a target that is not an object is first replaced by `{}`.
 * - Any other patch (an array, a string, a number, `null`, …) replaces the target as a whole.
 *   Arrays are never merged element by element.
 *
 * Pure: neither input is mutated (frozen inputs are fine) and the result shares no object with
 * either. Keys like `__proto__` and `constructor` are ordinary members. Object members whose
 * value is `undefined` are treated as absent (JSON has no `undefined`).
 *
 * @example
 * applyMergePatch({ metadata: { labels: { a: '1', b: '2' } } }, { metadata: { labels: { a: null, c: '3' } } });
 * // { metadata: { labels: { b: '2', c: '3' } } }
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const base: JsonObject = isJsonObject(target) ? target : {};
  const result: JsonObject = {};
  for (const key of Object.keys(base)) {
    const current = base[key];
    const change = getOwn(patch, key);
    if (change === null) continue;
    if (change === undefined) {
      if (current !== undefined) setOwn(result, key, cloneJson(current));
    } else {
      setOwn(result, key, applyMergePatch(current, change));
    }
  }
  for (const key of Object.keys(patch)) {
    const change = patch[key];
    if (change === null || change === undefined || Object.hasOwn(base, key)) continue;
    setOwn(result, key, applyMergePatch(undefined, change));
  }
  return result;
}
