import {
  DELETE_FROM_PRIMITIVE_LIST,
  directiveTarget,
  literalMembers,
  PATCH_DIRECTIVE,
  RETAIN_KEYS,
  SET_ELEMENT_ORDER,
  setLiteral,
} from './directives.ts';
import { byKey, identityKey, itself, normalizeOrder, partition } from './element-order.ts';
import { invalidDirective, malformedPatch } from './errors.ts';
import {
  cloneJson,
  getOwn,
  hasOwn,
  isJsonObject,
  type JsonObject,
  nodeKind,
  ownKeys,
  render,
  setOwn,
} from './json.ts';
import { asList, memberSchema, type PatchSchema } from './schema.ts';
import { deleteFromPrimitiveList, literalList, mergeListField } from './strategic-list.ts';

const BAD_ORDER = 'invalid patch format of setElementOrder list';
const BAD_PRIMITIVE_LIST = 'invalid patch format of primitive list';
const BAD_RETAIN_KEYS = 'invalid patch format of retainKeys';

/**
 * Applies a strategic merge patch (`application/strategic-merge-patch+json`) to an object, with the
 * semantics of kube-apiserver for built-in kinds:
 *
 * - maps merge member by member; `null` deletes a member;
 * - lists whose schema says `merge` merge by merge key (objects) or as a union (primitives); other
 *   lists are replaced;
 * - `$patch: replace` replaces a map (or, as a list element, the list), `$patch: delete` empties a
 *   map or, as a list element, deletes the element with its merge key;
 * - `$setElementOrder/<list>` orders a merged list, `$deleteFromPrimitiveList/<list>` removes values,
 *   `$retainKeys` clears the original members it does not list.
 *
 * Pure: inputs are not changed and the result shares nothing with them. A malformed patch is a
 * BadRequestError (400); a directive that cannot be carried out is an InvalidError (422).
 *
 * @example
 * applyStrategicMergePatch(deployment, { spec: { template: { spec: { containers: [{ name: 'app', image: 'v2' }] } } } }, patchSchemaFor('apps', 'v1', 'Deployment')!);
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, schema: PatchSchema): unknown {
  if (!isJsonObject(patch)) throw malformedPatch('the strategic merge patch must be a JSON object');
  const base = isJsonObject(original) ? (cloneJson(original) as JsonObject) : {};
  return mergeMaps(base, cloneJson(patch) as JsonObject, schema, '');
}

function child(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Merges `patch` into `original`; both are private copies and may be changed. */
function mergeMaps(
  original: JsonObject,
  patch: JsonObject,
  schema: PatchSchema | undefined,
  path: string,
): JsonObject {
  if (hasOwn(patch, PATCH_DIRECTIVE)) {
    const directive = patch[PATCH_DIRECTIVE];
    if (directive === 'replace') return literalMembers(patch);
    if (directive === 'delete') return {};
    throw invalidDirective(path, `unknown patch type: ${render(directive)} in map: ${render(patch)}`);
  }
  retainKeys(original, patch);
  for (const key of ownKeys(patch)) {
    if (key.startsWith(SET_ELEMENT_ORDER)) setElementOrder(original, patch, key, schema, path);
  }
  for (const key of ownKeys(patch)) {
    const value = patch[key];
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      deleteFromList(
        original,
        directiveTarget(key, DELETE_FROM_PRIMITIVE_LIST, BAD_PRIMITIVE_LIST),
        value,
        path,
      );
      continue;
    }
    if (value === null) {
      delete original[key];
      continue;
    }
    const current = getOwn(original, key);
    const kind = nodeKind(value);
    if (current === undefined || current === null || nodeKind(current) !== kind || kind === 'scalar') {
      setLiteral(original, key, value);
    } else if (kind === 'object') {
      setOwn(
        original,
        key,
        mergeMaps(current as JsonObject, value as JsonObject, memberSchema(schema, key), child(path, key)),
      );
    } else {
      const listSchema = asList(memberSchema(schema, key));
      setOwn(
        original,
        key,
        mergeListField(current as unknown[], value as unknown[], listSchema, child(path, key), mergeMaps),
      );
    }
  }
  return original;
}

/** `$retainKeys`: drops original members it does not list; the patch may only set listed members. */
function retainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw malformedPatch(BAD_RETAIN_KEYS);
  const keep = new Set(list.filter((k): k is string => typeof k === 'string'));
  for (const key of ownKeys(patch)) {
    const directive = key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    if (patch[key] !== null && !directive && !keep.has(key)) throw malformedPatch(BAD_RETAIN_KEYS);
  }
  for (const key of ownKeys(original)) if (!keep.has(key)) delete original[key];
}

/** `$deleteFromPrimitiveList/<list>`; `null` deletes the whole list, as upstream does. */
function deleteFromList(original: JsonObject, key: string, values: unknown, path: string): void {
  const current = getOwn(original, key);
  if (current === undefined) return;
  if (values === null) {
    delete original[key];
    return;
  }
  if (!Array.isArray(current) || !Array.isArray(values)) return;
  setOwn(original, key, deleteFromPrimitiveList(current, values, child(path, key)));
}

/**
 * `$setElementOrder/<list>`: merges the patch's list (if any) and orders the result: listed elements
 * in the directive's order, server-only elements where they were relative to them.
 */
function setElementOrder(
  original: JsonObject,
  patch: JsonObject,
  directive: string,
  schema: PatchSchema | undefined,
  path: string,
): void {
  const order = patch[directive];
  delete patch[directive];
  const key = directiveTarget(directive, SET_ELEMENT_ORDER, BAD_ORDER);
  if (!Array.isArray(order)) throw malformedPatch(BAD_ORDER);
  const current = getOwn(original, key);
  const incoming = getOwn(patch, key);
  if (
    (current !== undefined && !Array.isArray(current)) ||
    (incoming !== undefined && !Array.isArray(incoming))
  ) {
    throw malformedPatch(`${BAD_ORDER}: ${child(path, key)} is not a list`);
  }
  const listSchema = asList(memberSchema(schema, key));
  const mergeKey = listSchema?.patchMergeKey ?? '';
  const identify = mergeKey === '' ? itself : byKey(mergeKey);
  checkOrder(incoming ?? [], order, mergeKey);
  if (current === undefined && incoming === undefined) return;
  let merged: unknown[];
  if (incoming === undefined) merged = current as unknown[];
  else if (current === undefined) merged = literalList(incoming);
  else merged = mergeListField(current, incoming, listSchema, child(path, key), mergeMaps);
  if (mergeKey !== '') {
    for (const item of merged) {
      if (!isJsonObject(item) || !hasOwn(item, mergeKey)) {
        throw malformedPatch(`map: ${render(item)} does not contain declared merge key: ${mergeKey}`);
      }
    }
  }
  const [listed, serverOnly] = partition(merged, order, identify);
  setOwn(original, key, normalizeOrder(listed, serverOnly, order, current ?? [], identify));
  delete patch[key];
}

/**
 * The patch list's elements (deletions and directives aside) must appear in the
 * `$setElementOrder` list, in the same relative order.
 */
function checkOrder(list: readonly unknown[], order: readonly unknown[], mergeKey: string): void {
  if (order.length === 0) return;
  const identify = mergeKey === '' ? itself : byKey(mergeKey);
  const elements = list.filter((item) => !(isJsonObject(item) && hasOwn(item, PATCH_DIRECTIVE)));
  let at = 0;
  for (const item of elements) {
    if (mergeKey !== '' && !(isJsonObject(item) && hasOwn(item, mergeKey))) {
      throw malformedPatch(`map: ${render(item)} does not contain declared merge key: ${mergeKey}`);
    }
    const id = identityKey(identify(item));
    while (at < order.length && identityKey(identify(order[at])) !== id) at++;
    if (at >= order.length) {
      throw malformedPatch(
        `The order in patch list:\n${render(list)}\n doesn't match $setElementOrder list:\n${render(order)}`,
      );
    }
    at++;
  }
}
