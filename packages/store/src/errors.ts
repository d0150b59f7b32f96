import { ConvergeError, type ConvergeErrorOptions, statusError } from '@converge/runtime';

/**
 * Stable error codes of the store package (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === StoreErrorCodes.CORRUPT) restoreFromBackup();
 */
export const StoreErrorCodes = {
  /** A data directory holds a log or snapshot that cannot be read back (not a torn tail). */
  CORRUPT: 'CONVERGE_ERR_STORE_CORRUPT',
  /** `registerType` was given a type whose apiVersion + kind or id is served by another type. */
  TYPE_CONFLICT: 'CONVERGE_ERR_STORE_TYPE_CONFLICT',
  /** Writing to the data directory failed; carried as the `cause` of an InternalError. */
  PERSIST_FAILED: 'CONVERGE_ERR_STORE_PERSIST_FAILED',
} as const;

/**
 * A file in the store's data directory is corrupt: a record in the middle of the log fails its
 * checksum, a record is not a valid write, or the snapshot is unreadable. A torn *last* record is
 * not corruption (it is dropped on open). Restore the data directory from a backup.
 *
 * @example
 * try { new Store({ dataDir }); } catch (e) { if (e instanceof StoreCorruptError) console.error(e.file, e.offset); }
 */
export class StoreCorruptError extends ConvergeError {
  /** The file that is corrupt. */
  readonly file: string;
  /** Byte offset of the first bad record. */
  readonly offset: number;

  constructor(file: string, offset: number, reason: string, options?: ConvergeErrorOptions) {
    super(StoreErrorCodes.CORRUPT, `${file}: corrupt at byte ${offset}: ${reason}`, options);
    this.file = file;
    this.offset = offset;
  }
}

/**
 * Two resource types clash in one store: the same id (`group/version/plural`) with another kind,
 * or the same apiVersion + kind under another plural.
 *
 * @example
 * store.registerType({ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true });
 */
export class TypeConflictError extends ConvergeError {
  constructor(message: string) {
    super(StoreErrorCodes.TYPE_CONFLICT, message);
  }
}

/**
 * Appending a write to the data directory failed (disk full, I/O error). The write was not applied;
 * the store reports it as the `cause` of an `InternalError`.
 *
 * @example
 * if (error instanceof InternalError && error.cause instanceof StorePersistError) alertOps(error.cause);
 */
export class StorePersistError extends ConvergeError {
  constructor(message: string, options?: ConvergeErrorOptions) {
    super(StoreErrorCodes.PERSIST_FAILED, message, options);
  }
}

/** The errors of one object, worded as kube-apiserver words them: the runtime's `statusError`. */
export const { notFound, alreadyExists, conflict, forbidden, invalid } = statusError;

/** Field error constructors: the runtime's (apimachinery's `field.Required`, `field.Invalid`, …). */
export { fieldError } from '@converge/runtime';
