/**
 * The object model every backend speaks: Kubernetes-shaped objects with `metadata`, and keys.
 *
 * @module
 */

export { deepDerivative } from './deep-derivative.ts';
export {
  groupOf,
  type KubeObject,
  keyToString,
  type ObjectKey,
  type ObjectMeta,
  type OwnerReference,
  objectKey,
  parseKey,
  type UnstructuredObject,
} from './object.ts';
export {
  PARTIAL_OBJECT_METADATA,
  type PartialObjectMetadata,
  toPartialObjectMetadata,
} from './partial-object-metadata.ts';
export { rememberLastKey, requestKey } from './request-key.ts';
