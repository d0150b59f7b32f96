import type { JsonObject } from './api-resource.ts';

/** `value` if it is a plain JSON object, else undefined. */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

/** The object at `parent[key]`, created (or replaced when not an object) if needed. */
export function ensureObject(parent: JsonObject, key: string): JsonObject {
  const existing = asObject(parent[key]);
  if (existing !== undefined) return existing;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/** Sets `object[key] = value` when the key is absent (undefined). */
export function setDefault(object: JsonObject, key: string, value: unknown): void {
  if (object[key] === undefined || object[key] === null) object[key] = value;
}

/** The value at a dotted path (`.spec.replicas` or `spec.replicas`), own properties only. */
export function getPath(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const part of path.replace(/^\./, '').split('.')) {
    const parent = asObject(current);
    if (parent === undefined || !Object.hasOwn(parent, part)) return undefined;
    current = parent[part];
  }
  return current;
}

/** Sets the value at a dotted path, creating objects on the way. */
export function setPath(object: JsonObject, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let current = object;
  for (const part of parts.slice(0, -1)) current = ensureObject(current, part);
  current[parts[parts.length - 1] as string] = value;
}

/** A deep copy of JSON data (objects from the store are frozen). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
