import { invalidApply } from './errors.ts';
import { hasOwn, isJsonObject, isScalar, ownKeys } from './json.ts';
import {
  type FieldPath,
  fieldElement,
  keyElement,
  type PathElement,
  pathString,
  serializeElement,
  valueElement,
} from './path-element.ts';
import { asList, isAtomicObject, type ListSchema, memberSchema, type PatchSchema } from './schema.ts';

/** An element of a granular list with the path element that identifies it. */
export interface ListElement {
  readonly pe: PathElement;
  readonly id: string;
  readonly item: unknown;
}

/** Identifies one element of a granular list, or says why it cannot be identified. */
function elementOf(ls: ListSchema, item: unknown): PathElement | string {
  if (ls.listType === 'set') {
    if (isScalar(item)) return valueElement(item);
    if (item === null) return "associative list without keys has an element that's an explicit null";
    return Array.isArray(item)
      ? 'not supported: associative list with lists as elements'
      : "associative list without keys has an element that's a map type";
  }
  if (item === null) return 'associative list with keys may not have a null element';
  if (!isJsonObject(item)) return 'associative list with keys may not have non-map elements';
  const keys = ls.listMapKeys ?? [];
  const fields: (readonly [string, unknown])[] = [];
  for (const key of keys) {
    if (hasOwn(item, key)) fields.push([key, item[key]]);
    else if (ls.keyDefaults !== undefined && hasOwn(ls.keyDefaults, key))
      fields.push([key, ls.keyDefaults[key]]);
  }
  if (fields.length === 0) {
    return `associative list with keys has an element that omits all key fields ${JSON.stringify(keys)} (and doesn't have default values for any key fields)`;
  }
  return keyElement(fields);
}

/** True if server-side apply treats a list with this schema element by element. */
export function isGranularList(schema: PatchSchema | undefined): schema is ListSchema {
  const ls = asList(schema);
  return ls !== undefined && (ls.listType === 'set' || ls.listType === 'map');
}

/**
 * The elements of a list with their identities, or undefined when server-side apply treats the list
 * as atomic: its schema says so, or an element cannot be identified (live objects are read
 * leniently; apply configurations are checked first by {@link validateApplied}).
 */
export function listElements(
  schema: PatchSchema | undefined,
  items: readonly unknown[],
): ListElement[] | undefined {
  if (!isGranularList(schema)) return undefined;
  const out: ListElement[] = [];
  for (const item of items) {
    const pe = elementOf(schema, item);
    if (typeof pe === 'string') return undefined;
    out.push({ pe, id: serializeElement(pe), item });
  }
  return out;
}

/**
 * Checks that an apply configuration respects the list semantics of its schema: every element of a
 * `set` or `map` list is identifiable and appears once. Throws an InvalidError naming the field.
 */
export function validateApplied(value: unknown, schema: PatchSchema | undefined, path: FieldPath = []): void {
  if (isJsonObject(value)) {
    if (isAtomicObject(schema)) return;
    for (const key of ownKeys(value)) {
      validateApplied(value[key], memberSchema(schema, key), [...path, fieldElement(key)]);
    }
    return;
  }
  if (!Array.isArray(value) || !isGranularList(schema)) return;
  const seen = new Set<string>();
  value.forEach((item, index) => {
    const pe = elementOf(schema, item);
    if (typeof pe === 'string') throw invalidApply(pathString(path), `element ${index}: ${pe}`);
    const id = serializeElement(pe);
    if (seen.has(id)) throw invalidApply(pathString(path), `duplicate entries for key ${pathString([pe])}`);
    seen.add(id);
    validateApplied(item, schema.items, [...path, pe]);
  });
}
