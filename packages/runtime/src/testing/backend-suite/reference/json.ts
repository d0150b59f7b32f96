/** A JSON object (what every stored object is under its KubeObject type). */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy of JSON data. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Freezes JSON data in place, deeply, and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Structural equality of JSON data (object key order does not matter). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as JsonObject)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as JsonObject)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as JsonObject)[k], (b as JsonObject)[k]));
}

/** `value` after a JSON round trip; throws a TypeError for data JSON cannot carry. */
export function toJson<T>(value: T): T {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('not JSON data');
  return JSON.parse(text) as T;
}
