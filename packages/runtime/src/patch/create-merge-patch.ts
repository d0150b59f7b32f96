import { deepEqual } from './deep-equal.ts';
import { cloneJson, getOwn, isJsonObject, type JsonObject, setOwn } from './json-value.ts';

/**
 * Computes the JSON merge patch (RFC 7386) that turns `original` into `modified`: members that
 * changed, `null` for members that were removed, nested objects diffed recursively, arrays and
 * other values given whole. Two equal objects give `{}`.
 *
 * When either side is not an object the patch is `modified` itself (a non-object patch replaces
 * the target) — also when the two are equal, because `{}` would turn a non-object into `{}`.
 *
 * `applyMergePatch(original, createMergePatch(original, modified))` deep-equals `modified` for
 * every JSON `modified` without `null`s: merge patch cannot express "set to null", because a
 * `null` in a patch deletes.
 *
 * @example
 * createMergePatch({ spec: { replicas: 1, paused: true } }, { spec: { replicas: 3 } });
 * // { spec: { replicas: 3, paused: null } }
 */
export function createMergePatch(original: unknown, modified: unknown): unknown {
  if (!isJsonObject(original) || !isJsonObject(modified)) return cloneJson(modified);
  return diffObjects(original, modified);
}

function diffObjects(original: JsonObject, modified: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(original)) {
    if (original[key] !== undefined && getOwn(modified, key) === undefined) setOwn(patch, key, null);
  }
  for (const key of Object.keys(modified)) {
    const after = modified[key];
    if (after === undefined) continue;
    const before = getOwn(original, key);
    if (before === undefined) {
      setOwn(patch, key, cloneJson(after));
    } else if (!deepEqual(before, after)) {
      setOwn(
        patch,
        key,
        isJsonObject(before) && isJsonObject(after) ? diffObjects(before, after) : cloneJson(after),
      );
    }
  }
  return patch;
}
