import { deepEqual } from '@converge/runtime';
import { FieldSet } from './field-set.ts';
import { getOwn, isJsonObject, ownKeys } from './json.ts';
import { type FieldPath, fieldElement } from './path-element.ts';
import { memberSchema, type PatchSchema } from './schema.ts';
import type { ListElement } from './typed-list.ts';
import { groupElements, shapeOf } from './typed-shape.ts';

/** What changed from one object to another, as sets of field paths. No path is in two sets. */
export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/**
 * Compares two objects field by field under a schema: leaves that appear, change or disappear, and
 * objects, lists and list elements that appear or disappear as a whole (those are members too, so
 * the manager that creates `data` owns `.data` itself — the `.` of FieldsV1).
 */
export function compareObjects(lhs: unknown, rhs: unknown, schema: PatchSchema | undefined): Comparison {
  const result = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareNode(lhs, rhs, schema, [], result);
  return result;
}

function compareNode(
  lhs: unknown,
  rhs: unknown,
  schema: PatchSchema | undefined,
  path: FieldPath,
  out: Comparison,
): void {
  const shape = shapeOf(lhs, rhs, schema);
  if (shape.kind === 'leaf') {
    if (path.length === 0) return;
    if (lhs === undefined) out.added.insert(path);
    else if (rhs === undefined) out.removed.insert(path);
    else if (!deepEqual(lhs, rhs)) out.modified.insert(path);
    return;
  }
  if (shape.kind === 'object') {
    const l = isJsonObject(lhs) ? lhs : {};
    const r = isJsonObject(rhs) ? rhs : {};
    // Every key of either side once: the left's, then those only on the right.
    for (const key of ownKeys(l)) {
      compareNode(l[key], getOwn(r, key), memberSchema(schema, key), [...path, fieldElement(key)], out);
    }
    for (const key of ownKeys(r)) {
      if (getOwn(l, key) !== undefined) continue;
      compareNode(undefined, r[key], memberSchema(schema, key), [...path, fieldElement(key)], out);
    }
  } else {
    const items = schema?.type === 'list' ? schema.items : undefined;
    compareElements(shape.lhs, shape.rhs, items, path, out);
  }
  if (path.length === 0) return;
  if (lhs === undefined) out.added.insert(path);
  else if (rhs === undefined) out.removed.insert(path);
}

function compareElements(
  lhs: readonly ListElement[],
  rhs: readonly ListElement[],
  items: PatchSchema | undefined,
  path: FieldPath,
  out: Comparison,
): void {
  const left = groupElements(lhs);
  const right = groupElements(rhs);
  for (const id of new Set([...left.keys(), ...right.keys()])) {
    const l = left.get(id) ?? [];
    const r = right.get(id) ?? [];
    const pe = (l[0] ?? r[0])?.pe;
    if (pe === undefined) continue;
    const elementPath = [...path, pe];
    if (l.length <= 1 && r.length <= 1) {
      compareNode(l[0]?.item, r[0]?.item, items, elementPath, out);
    } else if (l.length >= 2 && r.length >= 2) {
      // Duplicates on both sides compare as one atomic value.
      const same = l.length === r.length && l.every((e, i) => deepEqual(e.item, r[i]?.item));
      if (!same) out.modified.insert(elementPath);
    } else if (l.length >= 2) {
      if (r[0] !== undefined) compareNode(undefined, r[0].item, items, elementPath, out);
      out.removed.insert(elementPath);
    } else {
      if (l[0] !== undefined) compareNode(l[0].item, undefined, items, elementPath, out);
      out.added.insert(elementPath);
    }
  }
}
