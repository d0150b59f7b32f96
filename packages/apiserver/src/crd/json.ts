import { CrdNotJsonError } from './errors.ts';

/** A JSON object as decoded from a request body. */
export type JsonObject = { [key: string]: unknown };

/** True for a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own enumerable property, safe against `__proto__` and inherited keys. */
export function hasOwn(object: JsonObject, key: string): boolean {
  return Object.hasOwn(object, key);
}

/** Reads an own property (never an inherited one such as `constructor`). */
export function own(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Deep equality of JSON values (key order ignored), as Go's `reflect.DeepEqual` on decoded JSON. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** A deep copy of a JSON value. */
export function jsonClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => jsonClone(v)) as T;
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) defineKey(out, k, jsonClone(v));
    return out as T;
  }
  return value;
}

/** Sets `out[key]`, also for the key `__proto__` (which plain assignment would not create). */
export function defineKey(out: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    out[key] = value;
  }
}

/** Appends `.key` to a dotted field path (`spec` + `replicas` → `spec.replicas`). */
export function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * Throws {@link CrdNotJsonError} unless `value` is JSON data: null, booleans, finite numbers,
 * strings, arrays and plain objects, without cycles.
 */
export function assertJson(value: unknown, path = ''): void {
  walk(value, path, new Set(), 0);
}

/** Objects nest at most this deep (Kubernetes objects stay far below; deeper input is refused, not a stack overflow). */
export const MAX_NESTING = 512;

function walk(value: unknown, path: string, seen: Set<object>, depth: number): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CrdNotJsonError(path, String(value));
      return;
    case 'object': {
      if (value === null) return;
      if (seen.has(value)) throw new CrdNotJsonError(path, 'a cyclic reference');
      if (depth >= MAX_NESTING)
        throw new CrdNotJsonError(path, `a value nested deeper than ${MAX_NESTING} levels`);
      const proto = Object.getPrototypeOf(value) as unknown;
      if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
        throw new CrdNotJsonError(path, 'an instance of a class');
      }
      seen.add(value);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) walk(value[i] as unknown, `${path}[${i}]`, seen, depth + 1);
      } else {
        for (const [k, v] of Object.entries(value)) walk(v, childPath(path, k), seen, depth + 1);
      }
      seen.delete(value);
      return;
    }
    case 'bigint':
    case 'function':
    case 'symbol':
    case 'undefined':
      throw new CrdNotJsonError(path, typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`);
  }
}

/** The Go type a decoded JSON number has in an unstructured object: int64 when integral, else float64. */
export function isInt64(value: number): boolean {
  return Number.isInteger(value) && Math.abs(value) < 2 ** 63;
}
