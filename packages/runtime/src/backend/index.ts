/**
 * The Backend contract: where objects live (the in-process store, a Kubernetes API server, a
 * NATS KV bucket), with Kubernetes semantics and typed errors. Every backend passes the
 * conformance suite `runBackendSuite` from `@converge/runtime/testing`. Reads take `metadataOnly`
 * (objects reduced to `{ apiVersion, kind, metadata }`); {@link metadataProjection},
 * {@link metadataOnlyList} and {@link metadataOnlyEvents} project for backends that cannot reduce
 * what they read.
 *
 * @module
 */
export type {
  Backend,
  BackendReader,
  BackendWriter,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  JsonPatchOperation,
  ListOptions,
  MetadataOnlyOption,
  ObjectList,
  Patch,
  PatchOptions,
  PropagationPolicy,
  SelectorOptions,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from './backend.ts';
export {
  AlreadyExistsError,
  BackendError,
  BackendErrorCodes,
  type BackendErrorOptions,
  BadRequestError,
  ConflictError,
  type ErrorDetails,
  ExpiredError,
  ForbiddenError,
  InternalError,
  InvalidError,
  isAlreadyExists,
  isConflict,
  isExpired,
  isNotFound,
  NotFoundError,
  type StatusCause,
  type StatusReason,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
  UnsupportedError,
} from './errors.ts';
export {
  checkFence,
  FENCE_HEADER,
  FENCED_ERROR_CODE,
  FENCED_MARKER,
  type Fence,
  FencedError,
  FenceTable,
  formatFenceHeader,
  isFenced,
  parseFenceHeader,
} from './fence.ts';
export { fieldError } from './field-errors.ts';
export { metadataOnlyEvents, metadataOnlyList, metadataProjection } from './metadata-only.ts';
export {
  apiVersionOf,
  type KubeObjectLike,
  type ObjectOf,
  qualifiedResource,
  type ResourceType,
  resourceType,
  typeId,
} from './resource-type.ts';
export { RoutedBackend } from './routed.ts';
export { statusError } from './status-errors.ts';
