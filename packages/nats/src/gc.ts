import {
  isConflict,
  isNotFound,
  type KubeObject,
  type OwnerReference,
  type PropagationPolicy,
  type ResourceType,
} from '@converge/runtime';
import type { Draft } from '@converge/store';
import type { TypeBucket } from './bucket.ts';
import type { BackendContext } from './context.ts';
import { deleteObject } from './delete.ts';
import { readSnapshot } from './snapshot.ts';
import { FOREGROUND_FINALIZER, modifyObject, ORPHAN_FINALIZER } from './writes.ts';

/** What one garbage-collection pass did. */
export interface GarbageCollectionResult {
  /** Objects read across all served buckets. */
  readonly scanned: number;
  /** Dependents deleted (or marked for deletion, when they have finalizers) because their owners are gone. */
  readonly deleted: number;
  /** Owner references removed: dangling ones, and those of an owner deleted with `Orphan`. */
  readonly referencesRemoved: number;
  /** `orphan` and `foregroundDeletion` finalizers removed once their work was done. */
  readonly finalizersRemoved: number;
}

interface Item {
  readonly bucket: TypeBucket;
  readonly object: KubeObject;
}

type OwnerState = 'absent' | 'waiting' | 'solid';

/** The object changed identity (deleted and created again) since the pass read it. */
class Replaced extends Error {}

function uidOf(object: KubeObject): string {
  return object.metadata.uid ?? '';
}

function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) === true;
}

function terminating(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined;
}

/**
 * One pass of the owner-reference garbage collector over every bucket a backend serves, as
 * kube-controller-manager's collector does it:
 *
 * - an owner terminating with `orphan`: its references are removed from every dependent, then the
 *   finalizer (the owner goes once it has no other finalizers);
 * - an owner terminating with `foregroundDeletion`: its dependents are deleted; once none with
 *   `blockOwnerDeletion: true` is left, the finalizer is removed;
 * - a dependent whose owners are all gone is deleted (Background; Foreground when an owner waits
 *   for it and it has dependents itself); one with a live owner left loses only its dangling
 *   references.
 *
 * An owner counts as gone only after a live read of its key confirms it (absent, or another uid),
 * so an owner created after its bucket was scanned is never mistaken for a missing one. References
 * to kinds the backend does not serve are left alone (the owner may live in another backend). Every
 * write is conditional (uid preconditions, revision-checked updates), so passes in several
 * processes at once are safe.
 */
export async function collectGarbage(
  ctx: BackendContext,
  signal?: AbortSignal,
): Promise<GarbageCollectionResult> {
  const items: Item[] = [];
  const byUid = new Map<string, Item>();
  const dependents = new Map<string, Item[]>();
  for (const bucket of ctx.buckets()) {
    const snapshot = await readSnapshot(ctx.js, bucket, undefined, signal);
    for (const raw of snapshot.entries.values()) {
      const decoded = bucket.decode(raw);
      if (decoded.kind !== 'object') continue;
      const item = { bucket, object: decoded.object };
      items.push(item);
      byUid.set(uidOf(decoded.object), item);
      for (const ref of decoded.object.metadata.ownerReferences ?? []) {
        const list = dependents.get(ref.uid) ?? [];
        list.push(item);
        dependents.set(ref.uid, list);
      }
    }
  }
  const counts = { deleted: 0, referencesRemoved: 0, finalizersRemoved: 0 };
  const handled = new Set<string>();
  const pass = { ctx, byUid, dependents, counts, handled };
  for (const item of items) {
    if (signal?.aborted === true) break;
    if (!terminating(item.object)) continue;
    if (hasFinalizer(item.object, ORPHAN_FINALIZER)) await orphanDependents(pass, item);
    else if (hasFinalizer(item.object, FOREGROUND_FINALIZER)) await deleteDependents(pass, item);
  }
  for (const item of items) {
    if (signal?.aborted === true) break;
    const refs = item.object.metadata.ownerReferences ?? [];
    if (refs.length === 0 || terminating(item.object) || handled.has(uidOf(item.object))) continue;
    await attemptToDelete(pass, item);
  }
  return { scanned: items.length, ...counts };
}

interface Pass {
  readonly ctx: BackendContext;
  readonly byUid: Map<string, Item>;
  readonly dependents: Map<string, Item[]>;
  readonly counts: { deleted: number; referencesRemoved: number; finalizersRemoved: number };
  /** Dependents already dealt with in this pass. */
  readonly handled: Set<string>;
}

async function orphanDependents(pass: Pass, owner: Item): Promise<void> {
  const uid = uidOf(owner.object);
  for (const dependent of pass.dependents.get(uid) ?? []) {
    pass.handled.add(uidOf(dependent.object));
    const removed = await editMetadata(pass.ctx, dependent, (meta) => {
      const refs = (meta.ownerReferences ?? []) as OwnerReference[];
      setOrDelete(
        meta,
        'ownerReferences',
        refs.filter((ref) => ref.uid !== uid),
      );
    });
    if (removed) pass.counts.referencesRemoved++;
  }
  if (await removeFinalizer(pass.ctx, owner, ORPHAN_FINALIZER)) pass.counts.finalizersRemoved++;
}

async function deleteDependents(pass: Pass, owner: Item): Promise<void> {
  const uid = uidOf(owner.object);
  let blocked = false;
  for (const dependent of pass.dependents.get(uid) ?? []) {
    pass.handled.add(uidOf(dependent.object));
    const outcome = await attemptToDelete(pass, dependent);
    const blocks = (dependent.object.metadata.ownerReferences ?? []).some(
      (ref) => ref.uid === uid && ref.blockOwnerDeletion === true,
    );
    if (blocks && outcome !== 'gone') blocked = true;
  }
  if (!blocked && (await removeFinalizer(pass.ctx, owner, FOREGROUND_FINALIZER)))
    pass.counts.finalizersRemoved++;
}

/** Whether the owner a reference points at is live, waiting for its dependents, or gone. */
async function ownerState(pass: Pass, dependent: KubeObject, ref: OwnerReference): Promise<OwnerState> {
  const type = pass.ctx.resolveType(ref.apiVersion, ref.kind);
  if (type === undefined) return 'solid';
  const namespace = dependent.metadata.namespace ?? '';
  if (type.namespaced && namespace === '') return 'absent';
  const known = pass.byUid.get(ref.uid);
  const candidate =
    known !== undefined && known.bucket.type === type && known.object.metadata.name === ref.name
      ? known.object
      : await liveOwner(pass.ctx, type, type.namespaced ? namespace : '', ref);
  if (candidate === undefined) return 'absent';
  if ((candidate.metadata.namespace ?? '') !== (type.namespaced ? namespace : '')) return 'absent';
  return terminating(candidate) && hasFinalizer(candidate, FOREGROUND_FINALIZER) ? 'waiting' : 'solid';
}

/** The owner read live by its key, if it is there with the referenced uid. Garbage counts as present. */
async function liveOwner(
  ctx: BackendContext,
  type: ResourceType,
  namespace: string,
  ref: OwnerReference,
): Promise<KubeObject | undefined> {
  const bucket = ctx.bucketOf(type);
  const key = bucket.key(namespace, ref.name);
  if (key === undefined) return undefined;
  const current = await bucket.current(key);
  if (current === undefined || current.kind === 'deleted' || current.kind === 'internal') return undefined;
  if (current.kind === 'malformed') {
    return { metadata: { name: ref.name, uid: ref.uid, ...(namespace === '' ? {} : { namespace }) } };
  }
  return uidOf(current.object) === ref.uid ? current.object : undefined;
}

/** Deletes a dependent whose owners are gone, or prunes its dangling references. */
async function attemptToDelete(pass: Pass, item: Item): Promise<'gone' | 'pending' | 'kept'> {
  const object = item.object;
  if (terminating(object)) return 'pending';
  const refs = object.metadata.ownerReferences ?? [];
  const states: OwnerState[] = [];
  for (const ref of refs) states.push(await ownerState(pass, object, ref));
  if (states.includes('solid')) {
    const dangling = new Set(refs.filter((_, i) => states[i] !== 'solid').map((ref) => ref.uid));
    if (dangling.size > 0) {
      const removed = await editMetadata(pass.ctx, item, (meta) => {
        const current = (meta.ownerReferences ?? []) as OwnerReference[];
        setOrDelete(
          meta,
          'ownerReferences',
          current.filter((ref) => !dangling.has(ref.uid)),
        );
      });
      if (removed) pass.counts.referencesRemoved += dangling.size;
    }
    return 'kept';
  }
  const waits = states.includes('waiting') && (pass.dependents.get(uidOf(object)) ?? []).length > 0;
  const policy: PropagationPolicy = waits ? 'Foreground' : 'Background';
  const key = { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
  try {
    const result = await deleteObject(pass.ctx, item.bucket, key, {
      propagationPolicy: policy,
      preconditions: { uid: uidOf(object) },
    });
    pass.counts.deleted++;
    return result.status === 'deleted' ? 'gone' : 'pending';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    if (isConflict(error)) return 'kept';
    throw error;
  }
}

function setOrDelete(meta: Record<string, unknown>, field: string, list: readonly unknown[]): void {
  if (list.length === 0) delete meta[field];
  else meta[field] = [...list];
}

/** Removes one finalizer from an object (it goes if that was the last one and it is terminating). */
async function removeFinalizer(ctx: BackendContext, item: Item, finalizer: string): Promise<boolean> {
  return await editMetadata(ctx, item, (meta) => {
    const finalizers = (meta.finalizers ?? []) as string[];
    setOrDelete(
      meta,
      'finalizers',
      finalizers.filter((f) => f !== finalizer),
    );
  });
}

/**
 * Applies `edit` to the metadata of the current state of `item` (retrying on concurrent writes),
 * unless the object was deleted or replaced meanwhile. Returns whether it wrote.
 */
async function editMetadata(
  ctx: BackendContext,
  item: Item,
  edit: (meta: Record<string, unknown>) => void,
): Promise<boolean> {
  const uid = uidOf(item.object);
  const key = { namespace: item.object.metadata.namespace ?? '', name: item.object.metadata.name ?? '' };
  try {
    const result = await modifyObject(ctx, item.bucket, key, {
      mode: 'main',
      requireResourceVersion: false,
      dryRun: false,
      build: (prev) => {
        if (uidOf(prev) !== uid) throw new Replaced();
        const draft = structuredClone(prev) as unknown as Draft;
        edit(draft.metadata);
        return { draft, precondition: undefined };
      },
    });
    return result.metadata.resourceVersion !== item.object.metadata.resourceVersion;
  } catch (error) {
    if (error instanceof Replaced || isNotFound(error)) return false;
    throw error;
  }
}
