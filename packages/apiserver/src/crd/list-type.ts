/**
 * The `x-kubernetes-list-type` invariants kube-apiserver enforces on custom resources: a `set` holds
 * no value twice, a `map` holds objects with unique `x-kubernetes-list-map-keys`. Each repeated
 * value is reported once, at its second occurrence.
 */
import type { StatusCause } from '@converge/runtime';
import { duplicate, invalid, path } from './field-errors.ts';
import { goJson } from './go-format.ts';
import { defineKey, isObject, type JsonObject } from './json.ts';
import type { SchemaNode } from './schema.ts';

const UNSPECIFIED: unique symbol = Symbol('unspecified');

function identity(value: unknown): string {
  if (value === UNSPECIFIED) return 'unspecified';
  if (isObject(value) || Array.isArray(value)) return `json:${goJson(value)}`;
  return `${typeof value}:${String(value)}`;
}

/** Indices whose value was seen exactly once before (kube reports only the second occurrence). */
function repeated(values: readonly unknown[]): number[] {
  if (values.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((v, i) => {
    const id = identity(v);
    const times = seen.get(id) ?? 0;
    seen.set(id, times + 1);
    if (times === 1) out.push(i);
  });
  return out;
}

function validateMap(node: SchemaNode, list: readonly unknown[], at: string, out: StatusCause[]): void {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (item !== null && !isObject(item)) {
      out.push(invalid(path.index(at, i), item, 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (list.length <= 1) return;
  const keyFields = node.listMapKeys;
  if (keyFields.length === 1) {
    const field = keyFields[0] ?? '';
    const keys = list.map((item) =>
      isObject(item) && Object.hasOwn(item, field) ? item[field] : UNSPECIFIED,
    );
    for (const i of repeated(keys)) {
      const key = keys[i];
      out.push(duplicate(path.index(at, i), key === UNSPECIFIED ? {} : { [field]: key }));
    }
    return;
  }
  const keys = list.map((item) => {
    const key: JsonObject = {};
    if (isObject(item)) for (const f of keyFields) if (Object.hasOwn(item, f)) defineKey(key, f, item[f]);
    return key;
  });
  for (const i of repeated(keys)) out.push(duplicate(path.index(at, i), keys[i]));
}

function visitArray(node: SchemaNode, list: readonly unknown[], at: string, out: StatusCause[]): void {
  if (node.listType === 'set') {
    for (const i of repeated(list)) out.push(duplicate(path.index(at, i), list[i]));
  } else if (node.listType === 'map') {
    validateMap(node, list, at, out);
  }
  if (node.items !== undefined) {
    for (let i = 0; i < list.length; i++) visit(node.items, list[i], path.index(at, i), out);
  }
}

function visit(node: SchemaNode, value: unknown, at: string, out: StatusCause[]): void {
  if (Array.isArray(value)) visitArray(node, value, at, out);
  else if (isObject(value)) visitObject(node, value, at, out);
}

function visitObject(
  node: SchemaNode,
  object: Readonly<Record<string, unknown>>,
  at: string,
  out: StatusCause[],
): void {
  const additional = node.additionalProperties;
  if (typeof additional === 'object') {
    for (const [k, v] of Object.entries(object)) visit(additional, v, path.key(at, k), out);
  }
  if (node.properties !== undefined) {
    for (const [k, v] of Object.entries(object)) {
      const prop = node.properties.get(k);
      if (prop !== undefined) visit(prop, v, path.child(at, k), out);
    }
  }
}

/** Appends a Duplicate cause for every repeated value of a `set` or key of a `map` list under `object`. */
export function validateListTypes(root: SchemaNode, object: unknown, out: StatusCause[]): void {
  if (isObject(object)) visitObject(root, object, '', out);
}
