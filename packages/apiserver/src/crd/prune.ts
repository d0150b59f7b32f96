/**
 * Pruning of unknown fields, as kube-apiserver decodes a custom resource: drop what the structural
 * schema does not declare (unless `x-kubernetes-preserve-unknown-fields`), keep `apiVersion`, `kind`
 * and `metadata` at the root and in embedded resources (ObjectMeta itself keeps only its known
 * fields), and drop `null`s the schema does not allow and cannot default.
 */

import { assertJson, isObject, type JsonObject, jsonClone } from './json.ts';
import { pruneObjectMeta } from './object-meta.ts';
import { compileSchema, fieldSchema, type SchemaNode } from './schema.ts';
import type { StructuralSchema } from './types.ts';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

function join(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

/** kube's `prune`: mutates `x` (a private clone), recording unknown fields. */
function prune(
  x: unknown,
  s: SchemaNode | undefined,
  embedded: boolean,
  at: string,
  unknown: string[],
): void {
  if (s?.preserveUnknownFields === true) {
    skipPrune(x, s, embedded, at, unknown);
    return;
  }
  if (Array.isArray(x)) {
    x.forEach((item, i) => {
      prune(item, s?.items, s?.items?.embeddedResource ?? false, `${at}[${i}]`, unknown);
    });
    return;
  }
  if (!isObject(x)) return;
  for (const key of Object.keys(x)) {
    if (s !== undefined && embedded && META_FIELDS.has(key)) continue;
    const prop = s?.properties?.get(key);
    if (prop !== undefined) {
      prune(x[key], prop, prop.embeddedResource, join(at, key), unknown);
    } else if (s !== undefined && s.additionalProperties !== undefined) {
      const next = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      prune(x[key], next, next?.embeddedResource ?? false, join(at, key), unknown);
    } else {
      if (!META_FIELDS.has(key) || at !== '' || s === undefined) unknown.push(join(at, key));
      delete x[key];
    }
  }
}

/** kube's `skipPrune`: under preserve-unknown-fields only declared sub-schemas prune. */
function skipPrune(x: unknown, s: SchemaNode, embedded: boolean, at: string, unknown: string[]): void {
  if (Array.isArray(x)) {
    if (s.items === undefined) return;
    const items = s.items;
    x.forEach((item, i) => {
      skipPrune(item, items, items.embeddedResource, `${at}[${i}]`, unknown);
    });
    return;
  }
  if (!isObject(x)) return;
  for (const key of Object.keys(x)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const prop = s.properties?.get(key);
    if (prop !== undefined) {
      prune(x[key], prop, prop.embeddedResource, join(at, key), unknown);
    } else if (s.additionalProperties !== undefined) {
      const next = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
      prune(x[key], next, next?.embeddedResource ?? false, join(at, key), unknown);
    }
  }
}

/**
 * kube's `pruning.Prune`: removes unknown fields from `x` in place (callers pass a private copy) and
 * records their paths. With `isResourceRoot`, `apiVersion`, `kind` and `metadata` are kept as is.
 */
export function pruneInPlace(x: unknown, s: SchemaNode, isResourceRoot: boolean, unknown: string[]): void {
  prune(x, s, isResourceRoot || s.embeddedResource, '', unknown);
}

/** kube's `PruneNonNullableNullsWithoutDefaults`. */
function pruneNulls(x: unknown, s: SchemaNode | undefined): void {
  if (Array.isArray(x)) {
    for (const item of x) pruneNulls(item, s?.items);
    return;
  }
  if (!isObject(x)) return;
  for (const key of Object.keys(x)) {
    const schema = fieldSchema(s, key);
    if (x[key] === null && schema !== undefined && !schema.nullable && !schema.hasDefault) delete x[key];
    else pruneNulls(x[key], schema);
  }
}

/** kube's ObjectMeta coercion of embedded resources (the root's metadata is done separately). */
function coerceEmbedded(x: unknown, s: SchemaNode | undefined, at: string, unknown: string[]): void {
  if (s === undefined) return;
  if (Array.isArray(x)) {
    x.forEach((item, i) => {
      coerceEmbedded(item, s.items, `${at}[${i}]`, unknown);
    });
    return;
  }
  if (!isObject(x)) return;
  for (const key of Object.keys(x)) {
    if (s.embeddedResource && key === 'metadata') {
      x.metadata = pruneObjectMeta(x.metadata, join(at, 'metadata'), unknown);
    }
    const prop = s.properties?.get(key);
    if (prop !== undefined) coerceEmbedded(x[key], prop, join(at, key), unknown);
    else if (typeof s.additionalProperties === 'object')
      coerceEmbedded(x[key], s.additionalProperties, `${at}[${key}]`, unknown);
  }
}

/**
 * Removes the fields of `object` its schema does not know, as kube-apiserver does while decoding a
 * custom resource. Returns a new object (the input is not touched) and the pruned paths, in kube's
 * order (root metadata, then the schema walk sorted, then embedded metadata sorted): the text of the
 * `Warning: unknown field "spec.foo"` headers (`fieldValidation=Warn`, the default), or of the 400
 * `strict decoding error: unknown field "spec.foo"` (`fieldValidation=Strict`). Non-nullable `null`s
 * without a default are dropped too (not reported), as kube does.
 *
 * Throws {@link CrdSchemaError} for a malformed schema and {@link CrdNotJsonError} for non-JSON input.
 *
 * @example
 * const { object, pruned } = pruneUnknownFields(schema, body);
 * for (const p of pruned) warnings.push(`unknown field "${p}"`);
 */
export function pruneUnknownFields(
  schema: StructuralSchema,
  object: unknown,
): { readonly object: unknown; readonly pruned: readonly string[] } {
  const root = compileSchema(schema);
  assertJson(object);
  const copy = jsonClone(object);
  const metaUnknown: string[] = [];
  if (isObject(copy) && Object.hasOwn(copy, 'metadata')) {
    (copy as JsonObject).metadata = pruneObjectMeta(copy.metadata, 'metadata', metaUnknown);
  }
  const schemaUnknown: string[] = [];
  prune(copy, root, true, '', schemaUnknown);
  pruneNulls(copy, root);
  const embeddedUnknown: string[] = [];
  coerceEmbedded(copy, root, '', embeddedUnknown);
  return { object: copy, pruned: [...metaUnknown, ...schemaUnknown.sort(), ...embeddedUnknown.sort()] };
}

/**
 * The `Warning` texts for pruned fields under `fieldValidation=Warn` (the default): one
 * `unknown field "spec.foo"` per path, each sent as a `Warning: 299 - "…"` header.
 */
export function unknownFieldWarnings(pruned: readonly string[]): string[] {
  return pruned.map((p) => `unknown field "${p}"`);
}

/**
 * The message of the 400 BadRequest kube-apiserver answers under `fieldValidation=Strict` when
 * fields were pruned: `strict decoding error: unknown field "spec.foo", unknown field "spec.bar"`.
 * Undefined when nothing was pruned.
 */
export function strictDecodingMessage(pruned: readonly string[]): string | undefined {
  return pruned.length === 0
    ? undefined
    : `strict decoding error: ${unknownFieldWarnings(pruned).join(', ')}`;
}
