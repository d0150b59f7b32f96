import { dirname } from 'node:path';
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
  /** A data directory's log or snapshot is missing or empty although its manifest says it must exist. */
  DATA_MISSING: 'CONVERGE_ERR_STORE_DATA_MISSING',
} as const;

/** The commands that inspect and repair a data directory, for error messages. */
export function recoveryHint(dir: string): string {
  return `check it with 'converge store check --data-dir ${dir}'; 'converge store repair --data-dir ${dir}' keeps everything before the damage and backs up the damaged files`;
}

/**
 * A file in the store's data directory is corrupt: a record fails its checksum (in the middle of the
 * log, or a complete last record), a record is not a valid write, revisions have a gap, or the
 * snapshot is unreadable. A torn *last* record (cut short by a crash mid-append, never acknowledged)
 * is not corruption: it is dropped on open with a warning. The message names the file, the offset
 * and the recovery commands (`converge store check|repair --data-dir DIR`).
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
    super(
      StoreErrorCodes.CORRUPT,
      `${file}: corrupt at byte ${offset}: ${reason}; ${recoveryHint(dirname(file))}`,
      options,
    );
    this.file = file;
    this.offset = offset;
  }
}

/**
 * A data directory lost data it must hold: its manifest (written when it was created) says a log
 * exists but the log is missing or empty, or the log continues a snapshot that is missing, empty or
 * older than it. The store refuses to start empty over it (namespaces would get new uids and
 * resourceVersions would go backwards). Restore the files, run `converge store repair`, or pass
 * `persistence: { allowReinitialize: true }` to start empty (the leftovers are moved aside).
 *
 * @example
 * try { new Store({ dataDir }); } catch (e) { if (e instanceof StoreDataMissingError) console.error(e.file); }
 */
export class StoreDataMissingError extends ConvergeError {
  /** The file that is missing or empty. */
  readonly file: string;

  constructor(file: string, reason: string, options?: ConvergeErrorOptions) {
    super(
      StoreErrorCodes.DATA_MISSING,
      `${file}: ${reason}; the store will not start empty over lost data: restore the file, or ${recoveryHint(dirname(file))}, or start empty on purpose (allowReinitialize)`,
      options,
    );
    this.file = file;
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
