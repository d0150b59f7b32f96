import type { KubeObject, ObjectMeta } from './object.ts';

/**
 * An object reduced to its metadata (Kubernetes' `meta.k8s.io/v1` `PartialObjectMetadata`): what a
 * metadata-only list, watch, get, informer or cache holds. Its `apiVersion` and `kind` are the
 * **watched kind's** (`v1` / `Pod`), not `meta.k8s.io/v1` / `PartialObjectMetadata` as a Kubernetes
 * API server writes them: controller-runtime sets the watched kind back on every such object, so
 * that handlers and owner mapping see which kind it is, and Converge does the same everywhere.
 */
export interface PartialObjectMetadata extends KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
}

/** The apiVersion and kind a Kubernetes API server writes on a metadata-only object. */
export const PARTIAL_OBJECT_METADATA = Object.freeze({
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  listKind: 'PartialObjectMetadataList',
});

/** Whether `object` holds nothing but `apiVersion`, `kind` and `metadata`, with these two values. */
function isProjected(object: KubeObject, apiVersion: string, kind: string): boolean {
  if (object.apiVersion !== apiVersion || object.kind !== kind) return false;
  for (const field in object) {
    if (field !== 'apiVersion' && field !== 'kind' && field !== 'metadata') return false;
  }
  return true;
}

/**
 * `object` reduced to `{ apiVersion, kind, metadata }`, with the given apiVersion and kind (the
 * watched kind's). Cheap: the body is never copied or walked; `metadata` is the object's own
 * (shared), an object that already has that shape is returned as it is, and the result of a frozen
 * object is frozen (a store's or a cache's shared objects stay read-only).
 *
 * @example
 * const partial = toPartialObjectMetadata(pod, 'v1', 'Pod'); // { apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata }
 */
export function toPartialObjectMetadata(
  object: KubeObject,
  apiVersion: string,
  kind: string,
): PartialObjectMetadata {
  if (isProjected(object, apiVersion, kind)) return object as PartialObjectMetadata;
  const partial: PartialObjectMetadata = { apiVersion, kind, metadata: object.metadata };
  return Object.isFrozen(object) ? Object.freeze(partial) : partial;
}
