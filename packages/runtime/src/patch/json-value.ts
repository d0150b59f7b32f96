/**
 * Helpers over JSON values shared by the patch functions. Internal to the patch module.
 *
 * Objects are read through own properties only and written with {@link setOwn}, so keys such as
 * `__proto__`, `constructor` and `prototype` are plain data and never reach a prototype.
 * Properties whose value is `undefined` count as absent, as they do once serialised to JSON.
 */

/** A JSON object: a non-null, non-array object. */
export type JsonObject = Record<string, unknown>;

/** True for a non-null object that is not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The own property `key` of `object`, or undefined; never a property inherited from a prototype. */
export function getOwn(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Sets an own data property, also for `__proto__` (where assignment would change the prototype). */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/** A deep copy sharing no object or array with `value`; `undefined` object properties are dropped. */
export function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (!isJsonObject(value)) return value;
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (member !== undefined) setOwn(copy, key, cloneJson(member));
  }
  return copy;
}
