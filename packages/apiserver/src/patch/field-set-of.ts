import { FieldSet } from './field-set.ts';
import { isJsonObject, type JsonObject, ownKeys } from './json.ts';
import { type FieldPath, fieldElement } from './path-element.ts';
import { isAtomicObject, isMapSchema, memberSchema, type PatchSchema } from './schema.ts';
import { listElements } from './typed-list.ts';
import { groupElements } from './typed-shape.ts';

/**
 * The fields an object sets, as server-side apply owns them: every leaf (a scalar, `null`, an
 * atomic list or object), every element of a `set` or `map` list, every key of a map, and every
 * empty object. Named fields of a struct are not members themselves; they are owned through what
 * they contain.
 */
export function fieldSetOf(object: unknown, schema: PatchSchema | undefined): FieldSet {
  const set = new FieldSet();
  if (isJsonObject(object)) walkObject(object, schema, [], set);
  return set;
}

function walkObject(
  object: JsonObject,
  schema: PatchSchema | undefined,
  path: FieldPath,
  set: FieldSet,
): void {
  for (const key of ownKeys(object)) {
    const value = object[key];
    const child = [...path, fieldElement(key)];
    walk(value, memberSchema(schema, key), child, set);
    const emptyObject = isJsonObject(value) && ownKeys(value).length === 0;
    if (value === null || emptyObject || isMapSchema(schema)) set.insert(child);
  }
}

function walk(value: unknown, schema: PatchSchema | undefined, path: FieldPath, set: FieldSet): void {
  if (isJsonObject(value)) {
    if (isAtomicObject(schema)) set.insert(path);
    else walkObject(value, schema, path, set);
    return;
  }
  if (!Array.isArray(value)) {
    set.insert(path);
    return;
  }
  const elements = listElements(schema, value);
  if (elements === undefined) {
    set.insert(path);
    return;
  }
  const items = schema?.type === 'list' ? schema.items : undefined;
  for (const group of groupElements(elements).values()) {
    const [first] = group;
    if (first === undefined) continue;
    const elementPath = [...path, first.pe];
    // Duplicated elements (only in live objects) are owned as a whole, never field by field.
    if (group.length === 1) walk(first.item, items, elementPath, set);
    set.insert(elementPath);
  }
}
