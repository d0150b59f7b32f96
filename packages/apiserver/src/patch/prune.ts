import type { FieldSet } from './field-set.ts';
import { cloneJson, isJsonObject, type JsonObject, ownKeys, setOwn } from './json.ts';
import { fieldElement, type PathElement } from './path-element.ts';
import { isAtomicObject, isMapSchema, memberSchema, type PatchSchema } from './schema.ts';
import { listElements } from './typed-list.ts';

/**
 * Removes from a merged object what an applier owned last time (`last`) and no manager owns now
 * (`owned`, which includes the applier's new configuration). A named struct field counts as owned
 * while anything below it is owned; map keys and list elements only when they are members.
 * Removing a node removes everything below it that nobody owns.
 */
export function pruneApplied(
  merged: JsonObject,
  last: FieldSet,
  owned: FieldSet,
  schema: PatchSchema | undefined,
): JsonObject {
  return pruneObject(merged, schema, last, owned);
}

function verdict(pe: PathElement, named: boolean, last: FieldSet, owned: FieldSet): 'drop' | 'walk' | 'keep' {
  const lastBelow = last.at(pe);
  const inLast = last.hasMember(pe) || (named && !lastBelow.empty);
  const isOwned = owned.hasMember(pe) || (named && !owned.at(pe).empty);
  if (inLast && !isOwned) return 'drop';
  return lastBelow.empty ? 'keep' : 'walk';
}

function pruneObject(
  object: JsonObject,
  schema: PatchSchema | undefined,
  last: FieldSet,
  owned: FieldSet,
): JsonObject {
  const out: JsonObject = {};
  const named = !isMapSchema(schema);
  for (const key of ownKeys(object)) {
    const pe = fieldElement(key);
    const decision = verdict(pe, named, last, owned);
    if (decision === 'drop') continue;
    const value = object[key];
    setOwn(
      out,
      key,
      decision === 'keep'
        ? cloneJson(value)
        : pruneNode(value, memberSchema(schema, key), last.at(pe), owned.at(pe)),
    );
  }
  return out;
}

function pruneNode(
  value: unknown,
  schema: PatchSchema | undefined,
  last: FieldSet,
  owned: FieldSet,
): unknown {
  if (isJsonObject(value)) {
    return isAtomicObject(schema) ? cloneJson(value) : pruneObject(value, schema, last, owned);
  }
  const elements = Array.isArray(value) ? listElements(schema, value) : undefined;
  if (elements === undefined) return cloneJson(value);
  const items = schema?.type === 'list' ? schema.items : undefined;
  const out: unknown[] = [];
  for (const { pe, item } of elements) {
    const decision = verdict(pe, false, last, owned);
    if (decision === 'keep') out.push(cloneJson(item));
    else if (decision === 'walk') out.push(pruneNode(item, items, last.at(pe), owned.at(pe)));
  }
  return out;
}
