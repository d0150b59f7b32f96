import {
  type DeleteOptions,
  type DeleteResult,
  InvalidError,
  type KubeObject,
  type PropagationPolicy,
} from '@converge/runtime';
import type { ServedType, StoreCore } from './core.ts';
import { conflict, fieldError, notFound } from './errors.ts';
import { deepFreeze, type JsonObject, rfc3339, withMutableMeta } from './json.ts';
import { decodeKey } from './keys.ts';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './namespaces.ts';
import { tracksGeneration } from './prepare.ts';

const POLICIES: readonly PropagationPolicy[] = ['Background', 'Foreground', 'Orphan'];

/**
 * Deletes an object as the apiserver does: checks preconditions (uid, resourceVersion: a mismatch
 * is a ConflictError); an object that is already terminating is returned unchanged; the policy adds
 * its finalizer (Foreground: `foregroundDeletion`, Orphan: `orphan`); with finalizers the object gets
 * a deletionTimestamp (grace 0, generation + 1 if tracked) and stays, otherwise it is removed.
 * Deleting a core Namespace always starts its termination (`status.phase: Terminating`); the
 * garbage collector empties it and removes it.
 */
export function deleteObject(
  core: StoreCore,
  td: ServedType,
  key: string,
  options: DeleteOptions,
): DeleteResult {
  const type = td.type;
  const policy = checkOptions(options);
  const name = decodeKey(key).name;
  const prev = td.latest(key);
  if (prev === undefined) throw notFound(type, name);
  const pre = options.preconditions;
  if (pre?.uid !== undefined && pre.uid !== prev.metadata.uid) {
    throw conflict(
      type,
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${prev.metadata.uid ?? ''}`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== prev.metadata.resourceVersion) {
    throw conflict(
      type,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${prev.metadata.resourceVersion ?? ''}`,
    );
  }
  if (prev.metadata.deletionTimestamp !== undefined) return { status: 'pending', object: prev };
  const isNamespace = td === core.namespaceType;
  const finalizers = [...(prev.metadata.finalizers ?? [])];
  if (!isNamespace) {
    if (policy === 'Foreground' && !finalizers.includes(FOREGROUND_FINALIZER))
      finalizers.push(FOREGROUND_FINALIZER);
    if (policy === 'Orphan' && !finalizers.includes(ORPHAN_FINALIZER)) finalizers.push(ORPHAN_FINALIZER);
  }
  if (finalizers.length === 0 && !isNamespace) {
    if (options.dryRun !== true) core.commit(td, key, prev, undefined);
    return { status: 'deleted' };
  }
  const draft = withMutableMeta(prev);
  const meta = draft.metadata;
  meta.deletionTimestamp = rfc3339(core.options.clock.now());
  meta.deletionGracePeriodSeconds = 0;
  if (finalizers.length > 0) meta.finalizers = finalizers;
  if (tracksGeneration(type) && (prev.metadata.generation ?? 0) > 0)
    meta.generation = (prev.metadata.generation ?? 0) + 1;
  if (isNamespace) {
    const status = (prev as unknown as JsonObject).status;
    draft.status = { ...(typeof status === 'object' && status !== null ? status : {}), phase: 'Terminating' };
  }
  const object: KubeObject =
    options.dryRun === true
      ? (deepFreeze(draft) as unknown as KubeObject)
      : core.commit(td, key, prev, draft);
  return { status: 'pending', object };
}

function checkOptions(options: DeleteOptions): PropagationPolicy {
  const policy = options.propagationPolicy ?? 'Background';
  if (!POLICIES.includes(policy)) {
    throw invalidOptions(fieldError.unsupported('propagationPolicy', policy, POLICIES));
  }
  const grace = options.gracePeriodSeconds;
  if (grace !== undefined && (!Number.isSafeInteger(grace) || grace < 0)) {
    throw invalidOptions(fieldError.invalid('gracePeriodSeconds', grace, 'must be a non-negative integer'));
  }
  const pre = options.preconditions;
  if (pre !== undefined) {
    if (typeof pre !== 'object' || pre === null) {
      throw invalidOptions(fieldError.invalid('preconditions', pre, 'must be an object'));
    }
    for (const field of ['uid', 'resourceVersion'] as const) {
      if (pre[field] !== undefined && typeof pre[field] !== 'string') {
        throw invalidOptions(fieldError.invalid(`preconditions.${field}`, pre[field], 'must be a string'));
      }
    }
  }
  return policy;
}

function invalidOptions(cause: { reason: string; message: string; field: string }): InvalidError {
  return new InvalidError(`DeleteOptions.meta.k8s.io "" is invalid: ${cause.field}: ${cause.message}`, {
    details: { name: '', group: 'meta.k8s.io', kind: 'DeleteOptions', causes: [cause] },
  });
}
