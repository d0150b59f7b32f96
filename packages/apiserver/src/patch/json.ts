/**
 * Helpers over JSON values shared by the patch module. Internal.
 *
 * Objects are read through own properties only and written with {@link setOwn}, so keys such as
 * `__proto__` are plain data. A property whose value is `undefined` counts as absent, as it does
 * once serialised.
 */

/** A JSON object: a non-null, non-array object. */
export type JsonObject = Record<string, unknown>;

/** A JSON primitive other than `null`. */
export type JsonScalar = string | number | boolean;

/** True for a non-null object that is not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a string, a number or a boolean. */
export function isScalar(value: unknown): value is JsonScalar {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** True if `object` has an own, defined property `key`. */
export function hasOwn(object: JsonObject, key: string): boolean {
  return Object.hasOwn(object, key) && object[key] !== undefined;
}

/** The own property `key` of `object`, or undefined; never an inherited one. */
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

/** The defined own keys of `object`, in insertion order. */
export function ownKeys(object: JsonObject): string[] {
  const keys = Object.keys(object);
  for (const key of keys) {
    if (object[key] === undefined) return keys.filter((k) => object[k] !== undefined);
  }
  return keys;
}

/** A deep copy sharing no object or array with `value`; `undefined` members are dropped. */
export function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (!isJsonObject(value)) return value;
  const copy: JsonObject = {};
  for (const key of ownKeys(value)) setOwn(copy, key, cloneJson(value[key]));
  return copy;
}

/** A deep copy without object members whose value is `null`, as decoding into Kubernetes types leaves it. */
export function withoutNullMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullMembers);
  if (!isJsonObject(value)) return value;
  const copy: JsonObject = {};
  for (const key of ownKeys(value)) {
    if (value[key] !== null) setOwn(copy, key, withoutNullMembers(value[key]));
  }
  return copy;
}

/** What kind of JSON node a value is: an object, an array, or anything else (a leaf). */
export function nodeKind(value: unknown): 'object' | 'array' | 'scalar' {
  if (Array.isArray(value)) return 'array';
  return isJsonObject(value) ? 'object' : 'scalar';
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * JSON the way Go's `encoding/json` writes it: object keys sorted, `<`, `>`, `&`, U+2028 and U+2029
 * escaped. Used where Kubernetes embeds JSON in strings (FieldsV1 keys, the last-applied annotation),
 * so that equal values always give equal strings.
 */
export function goJson(value: unknown): string {
  const text = JSON.stringify(sortKeys(value)) ?? 'null';
  return text.replace(HTML_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isJsonObject(value)) return value;
  const sorted: JsonObject = {};
  for (const key of ownKeys(value).sort(compareStrings)) setOwn(sorted, key, sortKeys(value[key]));
  return sorted;
}

/** Compares strings by code point, as Go compares their UTF-8 bytes. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order is code point order unless a surrogate pair meets a code unit above it: below
  // the surrogates, the first differing code units decide (without a regex test per comparison).
  const first = firstDifference(a, b);
  if (first < 0) return a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(first);
  const y = b.charCodeAt(first);
  if (x < 0xd800 && y < 0xd800) return x < y ? -1 : 1;
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length < 0 ? -1 : 1;
}

/** The first index where `a` and `b` differ; -1 when one is a prefix of the other. */
function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return i;
  return -1;
}

/** A short rendering of a value for error messages. */
export function render(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
