import {
  type Fence,
  fieldError,
  InternalError,
  type KubeObject,
  type ObjectKey,
  type StatusCause,
  type WriteOptions,
} from '@converge/runtime';
import {
  type Draft,
  generateName,
  jsonEqual,
  prepareCreate,
  prepareStatusUpdate,
  prepareUpdate,
  toDraft,
  validateMeta,
} from '@converge/store';
import type { TypeBucket } from './bucket.ts';
import { codecRefused, type DecodedEntry } from './codec.ts';
import type { BackendContext } from './context.ts';
import { alreadyExists, conflict, invalid, notFound } from './errors.ts';

/** Attempts of one write against concurrent writers before it reports a Conflict. */
export const MAX_ATTEMPTS = 32;
/** Generated names tried before a collision is reported (`RetryGenerateName`). */
const GENERATE_ATTEMPTS = 8;
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

/** The marker operation this backend deletes with. */
export function deleteOperation(ctx: BackendContext): 'DEL' | 'PURGE' {
  return ctx.options.deleteMode === 'purge' ? 'PURGE' : 'DEL';
}

/** The live object of an entry; a missing or deleted key is undefined, garbage an InternalError. */
export function liveObject(entry: DecodedEntry | undefined): KubeObject | undefined {
  if (entry === undefined || entry.kind === 'deleted' || entry.kind === 'internal') return undefined;
  if (entry.kind === 'malformed') {
    throw new InternalError(entry.error.message, { cause: entry.error });
  }
  return entry.object;
}

/**
 * Creates an object: the store's create strategy (server-set metadata, generation 1, no status
 * with a status subresource), name generation and metadata validation, then a put that requires
 * the key to be new or deleted (`expected last subject sequence` 0 or the delete marker's
 * revision), marked `Converge-Operation: CREATE`.
 */
export async function createObject(
  ctx: BackendContext,
  bucket: TypeBucket,
  input: unknown,
  options: WriteOptions,
): Promise<KubeObject> {
  const type = bucket.type;
  const draft = toDraft(type, input);
  prepareCreate(type, draft, ctx.options.clock.now());
  const meta = draft.metadata as {
    name?: string;
    generateName?: string;
    namespace?: string;
    resourceVersion?: string;
  };
  const generated = (meta.name ?? '') === '' && (meta.generateName ?? '') !== '';
  for (let attempt = 1; ; attempt++) {
    if (generated) meta.name = generateName(meta.generateName as string, () => ctx.options.clock.random());
    const causes = validateMeta(type, draft, true);
    if (causes.length > 0) throw invalid(type, meta.name ?? '', causes);
    if ((meta.resourceVersion ?? '') !== '') {
      throw new InternalError('resourceVersion should not be set on objects to be created');
    }
    const name = meta.name as string;
    const key = bucket.key(meta.namespace ?? '', name);
    if (key === undefined) {
      throw codecRefused(type, name, `codec ${bucket.codec.name} has no key for this name and namespace`);
    }
    const body = bucket.encode(draft);
    if (options.dryRun === true && options.fence !== undefined) await bucket.checkFence(options.fence);
    const created =
      options.dryRun === true
        ? await occupied(bucket, key)
        : await publishCreate(bucket, key, body, options.fence);
    if (typeof created === 'number') {
      meta.resourceVersion = String(created);
      return draft as unknown as KubeObject;
    }
    if (created === undefined) return draft as unknown as KubeObject;
    if (generated && attempt < GENERATE_ATTEMPTS) continue;
    const terminating = created.kind === 'object' && created.object.metadata.deletionTimestamp !== undefined;
    throw alreadyExists(type, name, terminating);
  }
}

/** The entry that occupies `key` (a live object or garbage), or undefined when it is free. */
async function occupied(bucket: TypeBucket, key: string): Promise<DecodedEntry | undefined> {
  const current = await bucket.current(key);
  return current === undefined || current.kind === 'deleted' || current.kind === 'internal'
    ? undefined
    : current;
}

/** Puts a new key; returns its revision, or the entry that already occupies the key. */
async function publishCreate(
  bucket: TypeBucket,
  key: string,
  body: Uint8Array,
  fence: Fence | undefined,
): Promise<number | DecodedEntry> {
  let expected = 0;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const seq = await bucket.publish(key, body, { operation: 'PUT', create: true, expected, fence });
    if (seq !== undefined) return seq;
    const current = await bucket.current(key);
    if (current === undefined) expected = 0;
    else if (current.kind === 'deleted' || current.kind === 'internal') expected = current.entry.seq;
    else return current;
  }
  throw conflict(bucket.type, key, 'the key changed too often to create it');
}

/** How one read-modify-write turns the current object into the next one. */
export interface Modification {
  /** `status`: only `.status` changes (for types with a status subresource). */
  readonly mode: 'main' | 'status';
  /** Whether an update without resourceVersion is refused for types that require one. */
  readonly requireResourceVersion: boolean;
  readonly dryRun: boolean;
  /** The ownership the write is made for (`WriteOptions.fence`). */
  readonly fence?: Fence | undefined;
  /**
   * The caller's desired object for this attempt (a fresh draft each time) and the resourceVersion
   * it must apply to, if the caller named one: then any concurrent write is a Conflict; without
   * one the write is retried on the new state.
   */
  build(prev: KubeObject): { readonly draft: Draft; readonly precondition: string | undefined };
}

/**
 * The update pipeline of update, updateStatus, patch and the garbage collector: read the key, check
 * the resourceVersion precondition, apply the store's update (or status) strategy, validate, skip
 * a write that changes nothing, then put with the read revision as `expected last subject
 * sequence`. An object that is terminating and has no finalizers left is removed instead: a delete
 * marker carrying its final state.
 */
export async function modifyObject(
  ctx: BackendContext,
  bucket: TypeBucket,
  objectKey: ObjectKey,
  modification: Modification,
): Promise<KubeObject> {
  const type = bucket.type;
  const { namespace, name } = objectKey;
  const key = bucket.key(namespace, name);
  if (key === undefined) throw notFound(type, name);
  for (let attempt = 1; ; attempt++) {
    const current = await bucket.current(key);
    const prev = liveObject(current);
    if (prev === undefined || current === undefined) throw notFound(type, name);
    const { draft, precondition } = modification.build(prev);
    const causes: StatusCause[] = [];
    const meta = draft.metadata as { name?: string; namespace?: string };
    if ((meta.name ?? '') !== name)
      causes.push(fieldError.invalid('metadata.name', meta.name ?? '', 'field is immutable'));
    if ((meta.namespace ?? '') !== namespace) {
      causes.push(fieldError.invalid('metadata.namespace', meta.namespace ?? '', 'field is immutable'));
    }
    if (causes.length > 0) throw invalid(type, name, causes);
    if (precondition !== undefined && precondition !== prev.metadata.resourceVersion)
      throw conflict(type, name);
    if (
      precondition === undefined &&
      modification.requireResourceVersion &&
      type.requireResourceVersionOnUpdate === true
    ) {
      throw invalid(type, name, [
        fieldError.invalid('metadata.resourceVersion', undefined, 'must be specified for an update'),
      ]);
    }
    let next: Draft;
    if (modification.mode === 'status' && type.statusSubresource === true)
      next = prepareStatusUpdate(prev, draft);
    else {
      next = draft;
      causes.push(...prepareUpdate(type, prev, next));
    }
    causes.push(...validateMeta(type, next, false));
    if (causes.length > 0) throw invalid(type, name, causes);
    next.metadata.resourceVersion = prev.metadata.resourceVersion;
    if (jsonEqual(next, prev)) return prev;
    const nextObject = next as unknown as KubeObject;
    const removing =
      nextObject.metadata.deletionTimestamp !== undefined &&
      (nextObject.metadata.finalizers ?? []).length === 0;
    if (modification.dryRun) {
      if (modification.fence !== undefined) await bucket.checkFence(modification.fence);
      return nextObject;
    }
    const seq = await bucket.publish(key, bucket.encode(next), {
      operation: removing ? deleteOperation(ctx) : 'PUT',
      expected: current.entry.seq,
      fence: modification.fence,
    });
    if (seq === undefined) {
      if (precondition !== undefined || attempt >= MAX_ATTEMPTS) throw conflict(type, name);
      continue;
    }
    next.metadata.resourceVersion = String(seq);
    if (removing || leavesWork(prev, nextObject)) ctx.garbageMayExist();
    return nextObject;
  }
}

/** Whether an update may give the garbage collector work: owner references changed, or an owner now waits for it. */
function leavesWork(prev: KubeObject, next: KubeObject): boolean {
  if (
    (prev.metadata.ownerReferences ?? []).length > 0 &&
    !jsonEqual(prev.metadata.ownerReferences, next.metadata.ownerReferences)
  ) {
    return true;
  }
  const finalizers = next.metadata.finalizers ?? [];
  return (
    next.metadata.deletionTimestamp !== undefined &&
    (finalizers.includes(FOREGROUND_FINALIZER) || finalizers.includes(ORPHAN_FINALIZER))
  );
}

/** `update` / `updateStatus`: the caller's object replaces the stored one. */
export async function updateObject(
  ctx: BackendContext,
  bucket: TypeBucket,
  input: unknown,
  mode: 'main' | 'status',
  options: WriteOptions,
): Promise<KubeObject> {
  const type = bucket.type;
  const template = toDraft(type, input);
  const meta = template.metadata as { name?: string; namespace?: string; resourceVersion?: string };
  const name = meta.name ?? '';
  const namespace = meta.namespace ?? '';
  const scope: StatusCause[] = [];
  if (name === '') scope.push(fieldError.required('metadata.name', 'name or generateName is required'));
  if (type.namespaced && namespace === '') scope.push(fieldError.required('metadata.namespace'));
  if (scope.length > 0) throw invalid(type, name, scope);
  const precondition = (meta.resourceVersion ?? '') === '' ? undefined : meta.resourceVersion;
  return await modifyObject(
    ctx,
    bucket,
    { namespace, name },
    {
      mode,
      requireResourceVersion: true,
      dryRun: options.dryRun === true,
      fence: options.fence,
      build: () => ({ draft: structuredClone(template), precondition }),
    },
  );
}
