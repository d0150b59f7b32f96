import type { KubeObject } from '../object/index.ts';

/** True if the object carries the finalizer. */
export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) ?? false;
}

/** A copy with the finalizer added (the same object if it already has it). */
export function addFinalizer<T extends KubeObject>(object: T, finalizer: string): T {
  if (hasFinalizer(object, finalizer)) return object;
  return {
    ...object,
    metadata: { ...object.metadata, finalizers: [...(object.metadata.finalizers ?? []), finalizer] },
  };
}

/** A copy with the finalizer removed (the same object if it does not have it). */
export function removeFinalizer<T extends KubeObject>(object: T, finalizer: string): T {
  if (!hasFinalizer(object, finalizer)) return object;
  const finalizers = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  return { ...object, metadata: { ...object.metadata, finalizers } };
}

/** True once deletion has started (`metadata.deletionTimestamp` is set). */
export function isBeingDeleted(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined && object.metadata.deletionTimestamp !== null;
}
