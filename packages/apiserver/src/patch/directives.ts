import { malformedPatch } from './errors.ts';
import { hasOwn, isJsonObject, type JsonObject, ownKeys, setOwn } from './json.ts';

/** `$patch: replace | merge | delete` on a map or a list element. */
export const PATCH_DIRECTIVE = '$patch';
/** `$retainKeys: [...]`: clear the members of the original map not listed. */
export const RETAIN_KEYS = '$retainKeys';
/** `$setElementOrder/<list>: [...]`: the order of the merged list. */
export const SET_ELEMENT_ORDER = '$setElementOrder';
/** `$deleteFromPrimitiveList/<list>: [...]`: values to remove from a merged list of primitives. */
export const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

/** True for a key that is a directive rather than data. */
export function isDirectiveKey(key: string): boolean {
  return (
    key === PATCH_DIRECTIVE ||
    key === RETAIN_KEYS ||
    key.startsWith(SET_ELEMENT_ORDER) ||
    key.startsWith(DELETE_FROM_PRIMITIVE_LIST)
  );
}

/**
 * The list a parallel-list directive refers to: `$setElementOrder/containers` → `containers`. A key
 * without the `/` separator is a malformed patch.
 */
export function directiveTarget(key: string, prefix: string, problem: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw malformedPatch(problem);
  return key.slice(slash + 1);
}

/** Marks a value that must not be stored at all. */
export const REMOVED: unique symbol = Symbol('removed');

/**
 * A patch value that is stored as is (nothing to merge with): maps carrying `$patch` disappear,
 * `null` members are dropped and other directive keys are removed, at every depth. Kubernetes would
 * drop those keys when it decodes the result into its types; an embedded server must not store them.
 */
export function literal(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(literal).filter((v) => v !== REMOVED);
  if (!isJsonObject(value)) return value;
  if (hasOwn(value, PATCH_DIRECTIVE)) return REMOVED;
  return literalMembers(value);
}

/** The members of a map as stored: no nulls, no directives, nested values made literal. */
export function literalMembers(value: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ownKeys(value)) {
    if (value[key] === null || isDirectiveKey(key)) continue;
    const member = literal(value[key]);
    if (member !== REMOVED) setOwn(out, key, member);
  }
  return out;
}

/** Sets `key` to a literal value, or deletes it when the value disappears. */
export function setLiteral(target: JsonObject, key: string, value: unknown): void {
  const stored = literal(value);
  if (stored === REMOVED) delete target[key];
  else setOwn(target, key, stored);
}
