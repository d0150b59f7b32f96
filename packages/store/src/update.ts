import type { KubeObject, StatusCause } from '@converge/runtime';
import type { ServedType, StoreCore } from './core.ts';
import { type Draft, metaOf } from './draft.ts';
import { conflict, fieldError, invalid, notFound } from './errors.ts';
import { deepFreeze, jsonEqual } from './json.ts';
import { decodeKey, encodeKey } from './keys.ts';
import { namespaceEmpty } from './namespaces.ts';
import { prepareStatusUpdate, prepareUpdate } from './prepare.ts';
import { validateMeta } from './validate.ts';

/** How an update was asked for. */
export interface UpdateRequest {
  /** `status`: only `.status` changes (when the type has a status subresource). */
  readonly mode: 'main' | 'status';
  /** Whether a missing resourceVersion is an error for types that require it (false for patches). */
  readonly requireResourceVersion: boolean;
  /** The key the object must keep (patches); absent: taken from the object (updates). */
  readonly key?: string;
  readonly dryRun: boolean;
}

/**
 * The update pipeline shared by update, updateStatus, patch and the garbage collector: find the
 * current object, check the resourceVersion precondition, run the update (or status) strategy,
 * validate, skip no-op writes, and either store the result or — when it empties the finalizers of a
 * terminating object — delete the object and return its final state.
 */
export function updateObject(
  core: StoreCore,
  td: ServedType,
  draft: Draft,
  request: UpdateRequest,
): KubeObject {
  const type = td.type;
  const meta = metaOf(draft);
  let key = request.key;
  if (key === undefined) {
    const scope = scopeCauses(td, meta.name ?? '', meta.namespace ?? '');
    if (scope.length > 0) throw invalid(type, meta.name ?? '', scope);
    key = encodeKey(meta.namespace ?? '', meta.name as string);
  } else {
    const { namespace, name } = decodeKey(key);
    const causes: StatusCause[] = [];
    if ((meta.name ?? '') !== name)
      causes.push(fieldError.invalid('metadata.name', meta.name ?? '', 'field is immutable'));
    if ((meta.namespace ?? '') !== namespace) {
      causes.push(fieldError.invalid('metadata.namespace', meta.namespace ?? '', 'field is immutable'));
    }
    if (causes.length > 0) throw invalid(type, name, causes);
  }
  const name = decodeKey(key).name;
  const prev = td.latest(key);
  if (prev === undefined) throw notFound(type, name);
  const rv = meta.resourceVersion ?? '';
  if (rv !== '' && rv !== prev.metadata.resourceVersion) throw conflict(type, name);
  if (rv === '' && request.requireResourceVersion && type.requireResourceVersionOnUpdate === true) {
    throw invalid(type, name, [
      fieldError.invalid('metadata.resourceVersion', undefined, 'must be specified for an update'),
    ]);
  }
  let next: Draft;
  const causes: StatusCause[] = [];
  if (request.mode === 'status' && type.statusSubresource === true) {
    next = prepareStatusUpdate(prev, draft);
  } else {
    next = draft;
    causes.push(...prepareUpdate(type, prev, next));
  }
  causes.push(...validateMeta(type, next, false));
  if (causes.length > 0) throw invalid(type, name, causes);
  next.metadata.resourceVersion = prev.metadata.resourceVersion;
  if (jsonEqual(next, prev)) return prev;
  const nextMeta = metaOf(next);
  if (
    nextMeta.deletionTimestamp !== undefined &&
    (nextMeta.finalizers ?? []).length === 0 &&
    removable(core, td, name)
  ) {
    if (request.dryRun) return deepFreeze(next) as unknown as KubeObject;
    return core.commit(td, key, prev, undefined, next);
  }
  if (request.dryRun) return deepFreeze(next) as unknown as KubeObject;
  return core.commit(td, key, prev, next);
}

/** Namespace and name requirements that locate the object of an update. */
function scopeCauses(td: ServedType, name: string, namespace: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (name === '') causes.push(fieldError.required('metadata.name', 'name or generateName is required'));
  if (td.type.namespaced && namespace === '') causes.push(fieldError.required('metadata.namespace'));
  return causes;
}

/** A terminating object without finalizers goes, except a Namespace that still has content. */
function removable(core: StoreCore, td: ServedType, name: string): boolean {
  return td !== core.namespaceType || namespaceEmpty(core, name);
}
