import {
  type DeleteOptions,
  type DeleteResult,
  fieldError,
  InvalidError,
  type KubeObject,
  type ObjectKey,
  type PropagationPolicy,
  type StatusCause,
} from '@converge/runtime';
import { rfc3339, tracksGeneration, withMutableMeta } from '@converge/store';
import type { TypeBucket } from './bucket.ts';
import type { BackendContext } from './context.ts';
import { conflict, notFound } from './errors.ts';
import {
  deleteOperation,
  FOREGROUND_FINALIZER,
  liveObject,
  MAX_ATTEMPTS,
  ORPHAN_FINALIZER,
} from './writes.ts';

const POLICIES: readonly PropagationPolicy[] = ['Background', 'Foreground', 'Orphan'];
const EMPTY = new Uint8Array(0);

/**
 * Deletes an object as the apiserver does: preconditions (uid, resourceVersion) must match (else a
 * ConflictError); an object already terminating is returned as is; the policy adds its finalizer
 * (Foreground `foregroundDeletion`, Orphan `orphan`); with finalizers the object gets a
 * deletionTimestamp (grace 0, generation + 1 if tracked) and stays, otherwise the key gets a delete
 * marker (`KV-Operation: DEL`, or `PURGE` with `deleteMode: 'purge'`) whose body is the object's last
 * state, so watchers report DELETED with it. A key holding garbage another writer left is removed
 * with a bare marker.
 */
export async function deleteObject(
  ctx: BackendContext,
  bucket: TypeBucket,
  objectKey: ObjectKey,
  options: DeleteOptions,
): Promise<DeleteResult> {
  const type = bucket.type;
  const policy = checkOptions(options);
  const { name } = objectKey;
  const key = bucket.key(objectKey.namespace, name);
  if (key === undefined) throw notFound(type, name);
  const dryRun = options.dryRun === true;
  const fence = options.fence;
  if (dryRun && fence !== undefined) await bucket.checkFence(fence);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const current = await bucket.current(key);
    if (current === undefined || current.kind === 'deleted' || current.kind === 'internal')
      throw notFound(type, name);
    if (current.kind === 'malformed') {
      if (dryRun) return { status: 'deleted' };
      const seq = await bucket.publish(key, EMPTY, {
        operation: deleteOperation(ctx),
        expected: current.entry.seq,
        fence,
      });
      if (seq === undefined) continue;
      return { status: 'deleted' };
    }
    const prev = liveObject(current) as KubeObject;
    checkPreconditions(bucket, prev, options);
    if (prev.metadata.deletionTimestamp !== undefined) return { status: 'pending', object: prev };
    const finalizers = [...(prev.metadata.finalizers ?? [])];
    if (policy === 'Foreground' && !finalizers.includes(FOREGROUND_FINALIZER))
      finalizers.push(FOREGROUND_FINALIZER);
    if (policy === 'Orphan' && !finalizers.includes(ORPHAN_FINALIZER)) finalizers.push(ORPHAN_FINALIZER);
    if (finalizers.length === 0) {
      if (dryRun) return { status: 'deleted' };
      const seq = await bucket.publish(key, bucket.encode(prev), {
        operation: deleteOperation(ctx),
        expected: current.entry.seq,
        fence,
      });
      if (seq === undefined) continue;
      ctx.garbageMayExist();
      return { status: 'deleted' };
    }
    const draft = withMutableMeta(prev);
    const meta = draft.metadata;
    meta.deletionTimestamp = rfc3339(ctx.options.clock.now());
    meta.deletionGracePeriodSeconds = 0;
    meta.finalizers = finalizers;
    const generation = prev.metadata.generation ?? 0;
    if (tracksGeneration(type) && generation > 0) meta.generation = generation + 1;
    const object = draft as unknown as KubeObject;
    if (dryRun) return { status: 'pending', object };
    const seq = await bucket.publish(key, bucket.encode(draft), {
      operation: 'PUT',
      expected: current.entry.seq,
      fence,
    });
    if (seq === undefined) continue;
    meta.resourceVersion = String(seq);
    if (policy !== 'Background') ctx.garbageMayExist();
    return { status: 'pending', object };
  }
  throw conflict(type, name, 'the object changed too often to delete it');
}

function checkPreconditions(bucket: TypeBucket, prev: KubeObject, options: DeleteOptions): void {
  const pre = options.preconditions;
  const name = prev.metadata.name ?? '';
  if (pre?.uid !== undefined && pre.uid !== prev.metadata.uid) {
    throw conflict(
      bucket.type,
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${prev.metadata.uid ?? ''}`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== prev.metadata.resourceVersion) {
    throw conflict(
      bucket.type,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${prev.metadata.resourceVersion ?? ''}`,
    );
  }
}

function checkOptions(options: DeleteOptions): PropagationPolicy {
  if (typeof options !== 'object' || options === null) {
    throw invalidOptions(fieldError.invalid('options', options, 'must be an object'));
  }
  const policy = options.propagationPolicy ?? 'Background';
  if (!POLICIES.includes(policy))
    throw invalidOptions(fieldError.unsupported('propagationPolicy', policy, POLICIES));
  const grace = options.gracePeriodSeconds;
  if (grace !== undefined && (!Number.isSafeInteger(grace) || grace < 0)) {
    throw invalidOptions(fieldError.invalid('gracePeriodSeconds', grace, 'must be a non-negative integer'));
  }
  const pre = options.preconditions;
  if (pre !== undefined) {
    if (typeof pre !== 'object' || pre === null)
      throw invalidOptions(fieldError.invalid('preconditions', pre, 'must be an object'));
    for (const field of ['uid', 'resourceVersion'] as const) {
      if (pre[field] !== undefined && typeof pre[field] !== 'string') {
        throw invalidOptions(fieldError.invalid(`preconditions.${field}`, pre[field], 'must be a string'));
      }
    }
  }
  return policy;
}

function invalidOptions(cause: StatusCause): InvalidError {
  return new InvalidError(`DeleteOptions.meta.k8s.io "" is invalid: ${cause.field}: ${cause.message}`, {
    details: { name: '', group: 'meta.k8s.io', kind: 'DeleteOptions', causes: [cause] },
  });
}
