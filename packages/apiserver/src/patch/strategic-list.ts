import { literal, PATCH_DIRECTIVE, REMOVED } from './directives.ts';
import { byKey, type Identify, identityKey, itself, normalizeOrder, partition } from './element-order.ts';
import { invalidDirective, malformedPatch } from './errors.ts';
import { hasOwn, isJsonObject, type JsonObject, render } from './json.ts';
import type { ListSchema, PatchSchema } from './schema.ts';

/** Merges two maps of a strategic merge patch (the recursion of lists into their elements). */
export type MergeMaps = (
  original: JsonObject,
  patch: JsonObject,
  schema: PatchSchema | undefined,
  path: string,
) => JsonObject;

/** The kind shared by every element, or undefined when there are none. Lists of lists are refused. */
function elementKind(items: readonly unknown[], path: string): string | undefined {
  let kind: string | undefined;
  for (const item of items) {
    if (Array.isArray(item)) throw invalidDirective(path, 'lists of lists are not supported');
    const current = item === null ? 'null' : typeof item;
    if (current === 'null') throw malformedPatch(`${path}: list elements may not be null`);
    if (kind !== undefined && kind !== current) {
      throw malformedPatch(`list element types are not identical: ${render(items)}`);
    }
    kind = current;
  }
  return kind;
}

function noMergeKey(item: unknown, mergeKey: string): Error {
  return malformedPatch(`map: ${render(item)} does not contain declared merge key: ${mergeKey}`);
}

/** A list stored as sent: its elements made literal. */
export function literalList(list: readonly unknown[]): unknown[] {
  return list.map(literal).filter((item) => item !== REMOVED);
}

/**
 * Merges a patch list into an original list. Lists whose strategy is not `merge` are replaced;
 * merged lists of primitives are unioned; merged lists of objects are merged by merge key, with
 * `$patch: delete` / `replace` elements honoured.
 */
export function mergeListField(
  original: readonly unknown[],
  patch: readonly unknown[],
  schema: ListSchema | undefined,
  path: string,
  mergeMaps: MergeMaps,
): unknown[] {
  if (schema?.patchStrategy !== 'merge') return literalList(patch);
  if (original.length === 0 && patch.length === 0) return [...original];
  const kind = elementKind([...original, ...patch], path);
  if (kind !== 'object') {
    const seen = new Set<string>();
    const merged: unknown[] = [];
    for (const item of [...original, ...patch]) {
      const key = identityKey(item);
      if (!seen.has(key)) merged.push(item);
      seen.add(key);
    }
    const [fromPatch, serverOnly] = partition(merged, patch, itself);
    return normalizeOrder(fromPatch, serverOnly, patch, original, itself);
  }
  const mergeKey = schema.patchMergeKey;
  if (mergeKey === undefined || mergeKey === '')
    throw malformedPatch(`cannot merge lists without merge key for ${path}`);
  const identify = byKey(mergeKey);
  const { base, elements } = specialElements(original, patch, mergeKey, identify, path);
  const merged = mergeByKey(base, elements, mergeKey, identify, schema.items, path, mergeMaps);
  const [fromPatch, serverOnly] = partition(merged, elements, identify);
  return normalizeOrder(fromPatch, serverOnly, elements, base, identify);
}

/** Applies the `$patch` elements of a patch list; returns the remaining original and patch elements. */
function specialElements(
  original: readonly unknown[],
  patch: readonly unknown[],
  mergeKey: string,
  identify: Identify,
  path: string,
): { base: unknown[]; elements: JsonObject[] } {
  const deleted = new Set<string>();
  const elements: JsonObject[] = [];
  let replace = false;
  for (const item of patch) {
    if (!isJsonObject(item)) continue;
    if (!hasOwn(item, PATCH_DIRECTIVE)) {
      elements.push(item);
      continue;
    }
    const directive = item[PATCH_DIRECTIVE];
    if (directive === 'delete') {
      if (!hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      deleted.add(identityKey(identify(item)));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw invalidDirective(path, 'merging lists cannot yet be specified in the patch');
    } else {
      throw invalidDirective(path, `unknown patch type: ${render(directive)} in map: ${render(item)}`);
    }
  }
  if (replace) return { base: literalList(elements), elements: [] };
  return { base: original.filter((item) => !deleted.has(identityKey(identify(item)))), elements };
}

/** Merges each patch element into the original element with the same merge key, or appends it. */
function mergeByKey(
  base: readonly unknown[],
  elements: readonly JsonObject[],
  mergeKey: string,
  identify: Identify,
  items: PatchSchema | undefined,
  path: string,
  mergeMaps: MergeMaps,
): unknown[] {
  const out = [...base];
  const index = new Map<string, number>();
  out.forEach((item, i) => {
    const key = identityKey(identify(item));
    if (isJsonObject(item) && hasOwn(item, mergeKey) && !index.has(key)) index.set(key, i);
  });
  for (const element of elements) {
    if (!hasOwn(element, mergeKey)) throw noMergeKey(element, mergeKey);
    const key = identityKey(identify(element));
    const at = index.get(key);
    const current = at === undefined ? undefined : out[at];
    if (at !== undefined && isJsonObject(current)) {
      out[at] = mergeMaps(current, element, items, `${path}[${render(element[mergeKey])}]`);
    } else {
      const stored = literal(element);
      if (stored === REMOVED) continue;
      index.set(key, out.length);
      out.push(stored);
    }
  }
  for (const item of out)
    if (!isJsonObject(item) || !hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
  return out;
}

/** `$deleteFromPrimitiveList`: removes every occurrence of the listed values. */
export function deleteFromPrimitiveList(
  original: readonly unknown[],
  values: readonly unknown[],
  path: string,
): unknown[] {
  const kind = elementKind([...original, ...values], path);
  if (kind === 'object') throw malformedPatch('invalid patch format of primitive list');
  const remove = new Set(values.map(identityKey));
  return original.filter((item) => !remove.has(identityKey(item)));
}
