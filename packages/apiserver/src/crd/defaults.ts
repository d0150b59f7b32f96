import { assertJson, defineKey, isObject, jsonClone } from './json.ts';
import { compileSchema, type SchemaNode } from './schema.ts';
import type { StructuralSchema } from './types.ts';

function isNonNullableNull(value: unknown, s: SchemaNode | undefined): boolean {
  return value === null && s !== undefined && !s.nullable;
}

/** kube's `structuraldefaulting.Default`: mutates `x` (a private clone). */
function fill(x: unknown, s: SchemaNode | undefined): void {
  if (s === undefined) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], s.items) && s.items?.hasDefault === true) x[i] = jsonClone(s.items.default);
      fill(x[i], s.items);
    }
    return;
  }
  if (!isObject(x)) return;
  for (const [key, prop] of s.properties ?? []) {
    if (!prop.hasDefault) continue;
    if (!Object.hasOwn(x, key) || isNonNullableNull(x[key], prop)) defineKey(x, key, jsonClone(prop.default));
  }
  for (const key of Object.keys(x)) {
    const prop = s.properties?.get(key);
    if (prop !== undefined) {
      fill(x[key], prop);
    } else if (typeof s.additionalProperties === 'object') {
      const additional = s.additionalProperties;
      if (isNonNullableNull(x[key], additional) && additional.hasDefault)
        defineKey(x, key, jsonClone(additional.default));
      fill(x[key], additional);
    }
  }
}

/**
 * Applies the schema's `default`s as kube-apiserver does after pruning: a missing (or non-nullable
 * `null`) property with a default gets a copy of it, only inside objects that exist, and defaults
 * inside an applied default apply too. Returns a new object; the input is not touched. Idempotent.
 *
 * Throws {@link CrdSchemaError} for a malformed schema and {@link CrdNotJsonError} for non-JSON input.
 *
 * @example
 * applyDefaults(schema, { spec: {} }); // { spec: { replicas: 1, tls: { enabled: false } } }
 */
export function applyDefaults(schema: StructuralSchema, object: unknown): unknown {
  const root = compileSchema(schema);
  assertJson(object);
  const copy = jsonClone(object);
  fill(copy, root);
  return copy;
}
