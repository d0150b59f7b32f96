/**
 * Tolerant readers of JSON objects for the printers: a missing or mistyped field reads as Go's
 * zero value, as it would after decoding into the typed struct.
 */

/** A JSON object (any object that is not an array). */
export type Json = Readonly<Record<string, unknown>>;

/** The value at a path of object keys, or undefined. */
export function at(value: unknown, ...path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = Object.hasOwn(current, key) ? (current as Json)[key] : undefined;
  }
  return current;
}

/** A string, or '' (Go's zero string). */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An integer, or 0; fractions are truncated as Go's int conversion does. */
export function int(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : 0;
}

/** An integer, or `fallback` when absent (a defaulted pointer such as `spec.replicas`). */
export function intOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : fallback;
}

/** An array, or []. */
export function arr(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** An array of objects (other entries read as empty objects), or []. */
export function objects(value: unknown): readonly Json[] {
  return arr(value).map(obj);
}

/** An object, or {}. */
export function obj(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/** The number of keys of an object (a Go map's `len`). */
export function size(value: unknown): number {
  return Object.keys(obj(value)).length;
}

/** A `map[string]string`: only string values are kept. */
export function stringMap(value: unknown): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(obj(value))) {
    if (typeof v === 'string') Object.defineProperty(out, key, { value: v, enumerable: true });
  }
  return out;
}
