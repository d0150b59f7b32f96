import { deepEqual } from '@converge/runtime';
import { compareObjects } from './compare.ts';
import { conflictError, type ManagerConflict } from './conflict.ts';
import { malformedApply } from './errors.ts';
import { validateFieldManager } from './field-manager.ts';
import { fieldSetOf } from './field-set-of.ts';
import { cloneJson, getOwn, isJsonObject, type JsonObject, setOwn, withoutNullMembers } from './json.ts';
import { fieldsFromLastApplied, syncLastApplied } from './last-applied.ts';
import {
  decodeManagedFields,
  encodeManagedFields,
  identityOf,
  type ManagedFieldsEntry,
  type Managers,
  stripMeta,
} from './managed-fields.ts';
import { fieldElement } from './path-element.ts';
import { pruneApplied } from './prune.ts';
import type { PatchSchema } from './schema.ts';
import { mergeApplied } from './structured-merge.ts';
import { validateApplied } from './typed-list.ts';
import {
  managedFieldsOf,
  type ResetFields,
  recordUpdate,
  withoutManagedFields,
  withoutReset,
} from './update-managed-fields.ts';

/** Input of {@link serverSideApply}. */
export interface ServerSideApplyInput {
  /** The stored object; undefined when the apply creates it. */
  readonly live: object | undefined;
  /** The apply configuration (the request body, decoded from YAML or JSON). */
  readonly applied: object;
  /** The `fieldManager` parameter; required. */
  readonly manager: string;
  /** The `force` parameter: take over conflicting fields instead of failing. */
  readonly force: boolean;
  /** The request's group/version; the configuration's `apiVersion` must equal it. */
  readonly apiVersion: string;
  /** The kind's patch schema: a built-in's, or one made from a CRD's schema; undefined: all lists atomic. */
  readonly schema: PatchSchema | undefined;
  /** RFC 3339 time recorded on the applier's entry when the object changes. */
  readonly now: string;
  /** `status` or `scale` when applying to a subresource. */
  readonly subresource?: string | undefined;
  /** Fields the apply may not own, as for `updateManagedFields`. */
  readonly resetFields?: ResetFields | undefined;
}

/** The applied object (with `metadata.managedFields` set) and its managed fields. */
export interface ServerSideApplyResult {
  readonly object: object;
  readonly managedFields: ManagedFieldsEntry[];
}

type Attempt =
  | { readonly object: JsonObject; readonly managers: Managers }
  | { readonly conflicts: ManagerConflict[] };

/**
 * Server-side apply (`application/apply-patch+yaml`), as kube-apiserver's field manager does it:
 *
 * - merges the configuration into the live object — maps by key, `map` lists by their keys, `set`
 *   lists by value, everything else replaced — and creates the object when there is none;
 * - removes what this manager applied last time and omits now, unless another manager owns it;
 * - fails with a 409 listing every field whose value it changes that another manager owns
 *   (`Apply failed with 1 conflict: conflict with "mgr" using v1: .data.a`), unless `force`, which
 *   takes those fields over; `kubectl` may take over fields its last client-side apply set;
 * - records the manager's ownership (operation `Apply`) in `metadata.managedFields`. An object that
 *   had none is first attributed to `before-first-apply`.
 *
 * Pure: inputs are not changed. Throws InvalidError (fieldManager missing or invalid, list keys
 * missing or duplicated), BadRequestError (managedFields in the body, wrong apiVersion) or
 * ConflictError. The caller still runs the update or create pipeline on `object`.
 *
 * @example
 * const { object } = serverSideApply({ live, applied: body, manager: 'kubectl', force: false, apiVersion: 'v1', schema: patchSchemaFor('', 'v1', 'ConfigMap'), now: new Date().toISOString() });
 */
export function serverSideApply(input: ServerSideApplyInput): ServerSideApplyResult {
  validateFieldManager('PatchOptions', input.manager, { apply: true });
  const config = checkedConfig(input);
  validateApplied(config, input.schema);
  const live = withoutManagedFields(input.live);
  let managers = decodeManagedFields(managedFieldsOf(input.live)) ?? new Map();
  if (managers.size === 0 && input.live !== undefined) {
    managers = recordUpdate(new Map(), {}, live, { ...input, manager: 'before-first-apply' });
  }
  let result = applyOnce(managers, live, config, input, input.force);
  if ('conflicts' in result && input.manager === 'kubectl' && input.live !== undefined) {
    const allowed = fieldsFromLastApplied(live, input.apiVersion, input.schema);
    if (allowed !== undefined) {
      const remaining = result.conflicts
        .map((c) => ({ manager: c.manager, fields: c.fields.difference(allowed) }))
        .filter((c) => !c.fields.empty);
      result =
        remaining.length === 0 ? applyOnce(managers, live, config, input, true) : { conflicts: remaining };
    }
  }
  if ('conflicts' in result) throw conflictError(result.conflicts);
  const object = result.object;
  if (input.manager === 'kubectl') syncLastApplied(object, config);
  const managedFields = encodeManagedFields(result.managers);
  const metadata = getOwn(object, 'metadata');
  if (managedFields.length > 0) {
    const target = isJsonObject(metadata) ? metadata : {};
    setOwn(target, 'managedFields', cloneJson(managedFields));
    setOwn(object, 'metadata', target);
  } else if (isJsonObject(metadata)) {
    delete metadata.managedFields;
  }
  return { object, managedFields };
}

/** The configuration, checked and without a (null or non-list) managedFields member. */
function checkedConfig(input: ServerSideApplyInput): JsonObject {
  if (!isJsonObject(input.applied))
    throw malformedApply('error decoding patch: the apply configuration must be an object');
  const version = getOwn(input.applied, 'apiVersion');
  if (version !== input.apiVersion) {
    const specified = typeof version === 'string' ? version : '';
    throw malformedApply(
      `Incorrect version specified in apply patch. Specified patch version: ${specified}, expected: ${input.apiVersion}`,
    );
  }
  if (Array.isArray(managedFieldsOf(input.applied)))
    throw malformedApply('metadata.managedFields must be nil');
  return withoutManagedFields(input.applied);
}

function applyOnce(
  managers: Managers,
  live: JsonObject,
  config: JsonObject,
  input: ServerSideApplyInput,
  force: boolean,
): Attempt {
  const owner = {
    manager: input.manager,
    operation: 'Apply' as const,
    apiVersion: input.apiVersion,
    subresource: input.subresource,
  };
  const id = identityOf(owner);
  const reset = (input.resetFields ?? []).map((path) => path.map(fieldElement));
  const applying = fieldSetOf(config, input.schema).withoutPrefixes(reset);
  const previous = managers.get(id);
  const merged = mergeApplied(live, config, input.schema) as JsonObject;
  let owned = applying;
  for (const [other, m] of managers) if (other !== id) owned = owned.union(m.set);
  const object = previous === undefined ? merged : pruneApplied(merged, previous.set, owned, input.schema);
  const changes = withoutReset(compareObjects(live, object, input.schema), input.resetFields);
  const taken = changes.modified.union(changes.added);
  const conflicts: ManagerConflict[] = [];
  const next: Managers = new Map();
  for (const [other, m] of managers) {
    if (other === id) continue;
    const fields = m.set.intersection(taken);
    if (!fields.empty) conflicts.push({ manager: m, fields });
    const set = m.set.difference(taken).difference(changes.removed);
    if (!set.empty) next.set(other, { ...m, set });
  }
  if (conflicts.length > 0 && !force) return { conflicts };
  // Conflicts are found against the merged values; what is stored is what decoding into the
  // kind's types would keep, where a `null` member is an absent one.
  const stored = withoutNullMembers(object) as JsonObject;
  const own = stripMeta(applying);
  if (!own.empty) {
    const changed = !deepEqual(live, stored);
    const time = changed || previous?.time === undefined ? input.now : previous.time;
    next.set(id, { ...owner, time, set: own });
  }
  return { object: stored, managers: next };
}
