import type { JsonPatchOperation, ResourceType } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import { isResult, type ReconcileReturn } from '../reconcile/index.ts';
import type { Client } from './client.ts';
import { hasFinalizer, isBeingDeleted } from './finalizers.ts';

/** What the finalizer helper asks the reconciler to do. */
export type FinalizerEvent<T> =
  | { readonly type: 'apply'; readonly object: T }
  | { readonly type: 'cleanup'; readonly object: T };

/**
 * Runs a reconcile behind a finalizer (kube-rs `finalizer()`):
 * - the object lives and lacks the finalizer → adds it first, then `apply` on the patched object,
 *   so anything `apply` creates is guaranteed a `cleanup`;
 * - the object lives and has it → `apply`;
 * - the object is being deleted and has it → `cleanup`; the finalizer is removed only when cleanup
 *   finishes with `done()` (or nothing); a cleanup that throws keeps it and is retried, and one that
 *   returns a requeue (`requeueAfter(ms)`, …) keeps it and is called again then (waiting for an
 *   external deletion, say);
 * - being deleted without it → nothing.
 * Finalizer writes are JSON patches guarded by `test` operations (the resourceVersion when adding,
 * the finalizer's position and name when removing), so a racing writer makes them fail and the
 * reconcile is retried on fresh state instead of clobbering the other write.
 *
 * @example
 * return finalizer(client, websiteType, 'websites.example.com/cleanup', site, async (event) =>
 *   event.type === 'apply' ? apply(event.object) : cleanup(event.object));
 */
export async function finalizer<T extends KubeObject>(
  client: Client,
  type: ResourceType,
  name: string,
  object: T,
  reconcile: (event: FinalizerEvent<T>) => ReconcileReturn | Promise<ReconcileReturn>,
): Promise<ReconcileReturn> {
  const key = { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
  const has = hasFinalizer(object, name);
  if (isBeingDeleted(object)) {
    if (!has) return undefined;
    const result = await reconcile({ type: 'cleanup', object });
    if (result !== undefined && isResult(result) && result.kind !== 'done') return result;
    const finalizers = object.metadata.finalizers ?? [];
    const index = finalizers.indexOf(name);
    const ops: JsonPatchOperation[] = [
      { op: 'test', path: `/metadata/finalizers/${index}`, value: name },
      { op: 'remove', path: `/metadata/finalizers/${index}` },
    ];
    await client.patch(type, key, { type: 'json', patch: ops });
    return result;
  }
  let current = object;
  if (!has) {
    const rv = object.metadata.resourceVersion;
    const ops: JsonPatchOperation[] = [
      ...(rv === undefined ? [] : [{ op: 'test' as const, path: '/metadata/resourceVersion', value: rv }]),
      object.metadata.finalizers === undefined || object.metadata.finalizers.length === 0
        ? { op: 'add', path: '/metadata/finalizers', value: [name] }
        : { op: 'add', path: '/metadata/finalizers/-', value: name },
    ];
    current = await client.patch<T>(type, key, { type: 'json', patch: ops });
  }
  return reconcile({ type: 'apply', object: current });
}
