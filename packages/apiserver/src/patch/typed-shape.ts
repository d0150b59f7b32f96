import { isJsonObject, nodeKind } from './json.ts';
import { isAtomicObject, type PatchSchema } from './schema.ts';
import { type ListElement, listElements } from './typed-list.ts';

/**
 * How server-side apply sees a node present on one or both sides of a comparison or a merge: as a
 * leaf (a scalar, an atomic object or list, mismatched kinds, or empty on both sides — the empty /
 * absent distinction is kept as a value), as an object walked member by member, or as a list walked
 * element by element.
 */
export type Shape =
  | { readonly kind: 'leaf' }
  | { readonly kind: 'object' }
  | {
      readonly kind: 'list';
      readonly lhs: readonly ListElement[];
      readonly rhs: readonly ListElement[];
    };

const LEAF: Shape = { kind: 'leaf' };
const OBJECT: Shape = { kind: 'object' };

function isEmpty(value: unknown): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (!isJsonObject(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key) && value[key] !== undefined) return false;
  return true;
}

/** The shape of a node whose value is `lhs` on one side and `rhs` on the other (either may be absent). */
export function shapeOf(lhs: unknown, rhs: unknown, schema: PatchSchema | undefined): Shape {
  const left = lhs === undefined ? undefined : nodeKind(lhs);
  const right = rhs === undefined ? undefined : nodeKind(rhs);
  if (left !== undefined && right !== undefined && left !== right) return LEAF;
  const kind = left ?? right;
  if (kind === 'scalar' || kind === undefined) return LEAF;
  if (isEmpty(lhs) && isEmpty(rhs)) return LEAF;
  if (kind === 'object') return isAtomicObject(schema) ? LEAF : OBJECT;
  const l = Array.isArray(lhs) ? listElements(schema, lhs) : [];
  const r = Array.isArray(rhs) ? listElements(schema, rhs) : [];
  if (l === undefined || r === undefined) return LEAF;
  return { kind: 'list', lhs: l, rhs: r };
}

/** Groups list elements by identity, keeping the order of first appearance. */
export function groupElements(elements: readonly ListElement[]): Map<string, ListElement[]> {
  const groups = new Map<string, ListElement[]>();
  for (const element of elements) {
    const group = groups.get(element.id);
    if (group === undefined) groups.set(element.id, [element]);
    else group.push(element);
  }
  return groups;
}
