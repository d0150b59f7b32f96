import { type Comparison, compareObjects } from './compare.ts';
import { FieldSet } from './field-set.ts';
import { getOwn, isJsonObject, type JsonObject, setOwn } from './json.ts';
import {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  identityOf,
  isResetRequest,
  type ManagedFieldsEntry,
  type Managers,
  stripMeta,
} from './managed-fields.ts';
import { fieldElement } from './path-element.ts';
import type { PatchSchema } from './schema.ts';

/** Field-name paths whose subtrees a write never takes ownership of (the strategy resets them). */
export type ResetFields = readonly (readonly string[])[];

/** Input of {@link updateManagedFields}. */
export interface UpdateManagedFieldsInput {
  /** The stored object; undefined for a create. */
  readonly live: object | undefined;
  /** The object about to be stored (after decoding, patching and defaulting). */
  readonly updated: object;
  /** The field manager (`fieldManager` parameter, else from the User-Agent); empty means `unknown`. */
  readonly manager: string;
  /** The request's group/version, e.g. `v1` or `apps/v1`. */
  readonly apiVersion: string;
  /** RFC 3339 time recorded on the manager's entry when it takes fields. */
  readonly now: string;
  /** `status` or `scale` for writes to a subresource. */
  readonly subresource?: string | undefined;
  /** The kind's patch schema (the same one apply uses); undefined for custom resources. */
  readonly schema?: PatchSchema | undefined;
  /** Fields the write may not own, e.g. `[['status']]` on the main resource of a kind with a status subresource. */
  readonly resetFields?: ResetFields | undefined;
}

/** The `metadata.managedFields` member of an object, if any. */
export function managedFieldsOf(object: unknown): unknown {
  const metadata = isJsonObject(object) ? getOwn(object, 'metadata') : undefined;
  return isJsonObject(metadata) ? getOwn(metadata, 'managedFields') : undefined;
}

/** An object without `metadata.managedFields`, shallow where possible. */
export function withoutManagedFields(object: unknown): JsonObject {
  if (!isJsonObject(object)) return {};
  const metadata = getOwn(object, 'metadata');
  if (!isJsonObject(metadata) || getOwn(metadata, 'managedFields') === undefined) return object;
  const { managedFields: _, ...rest } = metadata;
  const copy = { ...object };
  setOwn(copy, 'metadata', rest);
  return copy;
}

/** The comparison without anything below the reset fields. */
export function withoutReset(comparison: Comparison, reset: ResetFields | undefined): Comparison {
  if (reset === undefined || reset.length === 0) return comparison;
  const prefixes = reset.map((path) => path.map(fieldElement));
  return {
    added: comparison.added.withoutPrefixes(prefixes),
    modified: comparison.modified.withoutPrefixes(prefixes),
    removed: comparison.removed.withoutPrefixes(prefixes),
  };
}

/**
 * Records a non-apply write as the apiserver does: the writer takes every field it added or changed
 * (stealing it from other managers: updates never conflict), every manager loses the fields the
 * write removed, and the writer's entry (operation `Update`) gets `now`. The result becomes the
 * stored object's `metadata.managedFields` (`[]`: store none).
 *
 * The starting point is the live object's managedFields, unless the written object carries valid
 * ones of its own (then those; `[]` clears them). Like the apiserver, an existing object without
 * managedFields is not tracked by updates: only creates and applies start tracking.
 *
 * @example
 * stored.metadata.managedFields = updateManagedFields({ live, updated, manager: 'kubectl-edit', apiVersion: 'v1', now, schema });
 */
export function updateManagedFields(input: UpdateManagedFieldsInput): ManagedFieldsEntry[] {
  const liveFields = managedFieldsOf(input.live);
  const sentFields = managedFieldsOf(input.updated);
  let base: Managers;
  if (input.subresource !== undefined) base = decodeManagedFields(liveFields) ?? new Map();
  else if (isResetRequest(sentFields)) base = new Map();
  else {
    const sent = decodeManagedFields(sentFields);
    base = sent !== undefined && sent.size > 0 ? sent : (decodeManagedFields(liveFields) ?? new Map());
  }
  if (base.size === 0 && input.live !== undefined) return [];
  const managers = recordUpdate(
    base,
    withoutManagedFields(input.live),
    withoutManagedFields(input.updated),
    input,
  );
  return encodeManagedFields(capUpdateManagers(managers));
}

/** The managers after an update by `input.manager` from `live` to `updated`. */
export function recordUpdate(
  base: Managers,
  live: JsonObject,
  updated: JsonObject,
  input: Pick<
    UpdateManagedFieldsInput,
    'manager' | 'apiVersion' | 'now' | 'subresource' | 'schema' | 'resetFields'
  >,
): Managers {
  const changes = withoutReset(compareObjects(live, updated, input.schema), input.resetFields);
  const taken = changes.modified.union(changes.added);
  const lost = taken.union(changes.removed);
  const managers: Managers = new Map();
  for (const [id, m] of base) {
    const set = m.set.difference(lost);
    if (!set.empty) managers.set(id, { ...m, set });
  }
  const owner = {
    manager: input.manager === '' ? 'unknown' : input.manager,
    operation: 'Update' as const,
    apiVersion: input.apiVersion,
    subresource: input.subresource,
  };
  const id = identityOf(owner);
  const took = stripMeta(taken);
  if (!took.empty) {
    const previous = managers.get(id)?.set ?? new FieldSet();
    managers.set(id, { ...owner, time: input.now, set: previous.union(took) });
  }
  return managers;
}
