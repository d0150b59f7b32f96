import { cloneJson, getOwn, hasOwn, type JsonObject, ownKeys, setOwn } from './json.ts';
import { memberSchema, type PatchSchema } from './schema.ts';
import type { ListElement } from './typed-list.ts';
import { shapeOf } from './typed-shape.ts';

/**
 * Merges an apply configuration into a live object, as server-side apply does: objects member by
 * member, `map` and `set` lists element by element (an element matched by its keys merges, a new one
 * is inserted), everything else — leaves, atomic lists and objects — is taken from the
 * configuration. Pure: the result shares nothing with its inputs.
 */
export function mergeApplied(live: unknown, config: unknown, schema: PatchSchema | undefined): unknown {
  return mergeNode(live, config, schema);
}

function mergeNode(lhs: unknown, rhs: unknown, schema: PatchSchema | undefined): unknown {
  if (rhs === undefined) return cloneJson(lhs);
  if (lhs === undefined) return cloneJson(rhs);
  const shape = shapeOf(lhs, rhs, schema);
  if (shape.kind === 'leaf') return cloneJson(rhs);
  if (shape.kind === 'object') return mergeObjects(lhs as JsonObject, rhs as JsonObject, schema);
  const items = schema?.type === 'list' ? schema.items : undefined;
  return mergeElements(shape.lhs, shape.rhs, items);
}

function mergeObjects(lhs: JsonObject, rhs: JsonObject, schema: PatchSchema | undefined): JsonObject {
  const out: JsonObject = {};
  for (const key of ownKeys(lhs)) {
    setOwn(out, key, mergeNode(lhs[key], getOwn(rhs, key), memberSchema(schema, key)));
  }
  for (const key of ownKeys(rhs)) {
    if (!hasOwn(lhs, key)) setOwn(out, key, cloneJson(rhs[key]));
  }
  return out;
}

/**
 * Merges two granular lists. The configuration's order wins for the elements it names; live-only
 * elements keep their place relative to the shared elements around them, and come before a new
 * element inserted at the same position.
 */
function mergeElements(
  lhs: readonly ListElement[],
  rhs: readonly ListElement[],
  items: PatchSchema | undefined,
): unknown[] {
  const inRhs = new Set(rhs.map((e) => e.id));
  const firstInLhs = new Map<string, number>();
  const count = new Map<string, number>();
  lhs.forEach((e, i) => {
    if (!firstInLhs.has(e.id)) firstInLhs.set(e.id, i);
    count.set(e.id, (count.get(e.id) ?? 0) + 1);
  });
  const out: unknown[] = [];
  let next = 0;
  const flushUntil = (stop: number): void => {
    for (; next < stop; next++) {
      const e = lhs[next];
      if (e !== undefined && !inRhs.has(e.id)) out.push(cloneJson(e.item));
    }
  };
  for (const element of rhs) {
    const at = firstInLhs.get(element.id);
    if (at === undefined) {
      let stop = next;
      while (stop < lhs.length && !inRhs.has(lhs[stop]?.id ?? '')) stop++;
      flushUntil(stop);
      out.push(cloneJson(element.item));
      continue;
    }
    if (at >= next) flushUntil(at + 1);
    // A duplicated live element cannot be merged field by field: the configuration replaces it.
    const live = count.get(element.id) === 1 ? lhs[at]?.item : undefined;
    out.push(mergeNode(live, element.item, items));
  }
  flushUntil(lhs.length);
  return out;
}
