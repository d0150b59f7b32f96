/**
 * The client: reads from the cache, writes to the backend, with read-your-writes (`getMetadata` /
 * `listMetadata` read only metadata, from a metadata-only cache); and the helpers
 * controllers need around it — createOrUpdate / createOrPatch, owner references, finalizers (and
 * the kube-rs style {@link finalizer} wrapper), status conditions, and {@link ignoreNotFound} for
 * reads and deletes of objects that may be gone.
 *
 * @module
 */
export {
  type CacheProvider,
  Client,
  type ClientListOptions,
  type ClientOptions,
  type ReadOptions,
} from './client.ts';
export {
  type Condition,
  type ConditionInput,
  findStatusCondition,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
} from './conditions.ts';
export { createOrPatch, createOrUpdate, type Mutate, type OperationResult } from './create-or-update.ts';
export { AlreadyOwnedError, ClientErrorCodes, InvalidOwnerError } from './errors.ts';
export { type FinalizerEvent, finalizer } from './finalizer.ts';
export { addFinalizer, hasFinalizer, isBeingDeleted, removeFinalizer } from './finalizers.ts';
export { ignoreNotFound } from './ignore-not-found.ts';
export type { ClientInterceptor, ClientRequestInfo, ClientVerb, ClientWriteBody } from './intercept.ts';
export {
  controllerOf,
  type OwnerOptions,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './owner.ts';
export { compareResourceVersions, type ObjectReader } from './pending-writes.ts';
export { WriteLedger, type WriteLedgerOptions } from './write-ledger.ts';
export {
  currentWriter,
  runAsWriter,
  runInWriterCell,
  WriterCell,
  type WriterScope,
} from './writer-scope.ts';
