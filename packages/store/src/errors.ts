import { dirname, join } from 'node:path';
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
  /** A data directory is locked: another process, or another Store in this one, has it open. */
  LOCKED: 'CONVERGE_ERR_STORE_LOCKED',
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

/** The process that holds a data directory's lock, as its `LOCK` file names it. */
export interface StoreLockHolder {
  readonly pid: number;
  readonly hostname: string;
  /** When that process started (ISO 8601). */
  readonly startedAt: string;
}

/**
 * Why a data directory's lock was not taken: `held` by a live process (on this host; possibly this
 * process), held from an `other-host` (never taken over automatically: its process cannot be checked
 * from here), `unreadable` (not a lock Converge wrote, never taken over), `taking-over` (another
 * process is taking over a dead holder's lock right now), `contended` (the holder is dead, but other
 * processes kept taking the lock over at the same moment; trying again settles it).
 */
export type StoreLockedReason = 'held' | 'other-host' | 'unreadable' | 'taking-over' | 'contended';

/**
 * A data directory is locked: one Store writes it at a time, and another process (or another Store
 * in this one) has it open. Two writers on one log would interleave their revisions and leave a
 * directory that no longer opens. The message names the directory, the process holding it (pid,
 * host, start time) and how to fix it. A lock left by a process that died on this host is not this
 * error: it is taken over at start, with a warning.
 *
 * @example
 * try { new Store({ dataDir }); } catch (e) { if (e instanceof StoreLockedError) console.error(e.holder?.pid); }
 */
export class StoreLockedError extends ConvergeError {
  /** The data directory. */
  readonly dataDir: string;
  readonly reason: StoreLockedReason;
  /** Who holds the lock; undefined when its file cannot be read. */
  readonly holder: StoreLockHolder | undefined;

  constructor(
    dataDir: string,
    reason: StoreLockedReason,
    holder: StoreLockHolder | undefined,
    detail = '',
    options?: ConvergeErrorOptions,
  ) {
    super(StoreErrorCodes.LOCKED, lockedMessage(dataDir, reason, holder, detail), options);
    this.dataDir = dataDir;
    this.reason = reason;
    this.holder = holder;
  }
}

function lockedMessage(
  dir: string,
  reason: StoreLockedReason,
  holder: StoreLockHolder | undefined,
  detail: string,
): string {
  const lock = join(dir, 'LOCK');
  const who =
    holder === undefined
      ? 'another process'
      : `process ${holder.pid} on host ${holder.hostname} (started ${holder.startedAt})`;
  const otherwise = 'or start this one with another --data-dir';
  switch (reason) {
    case 'held':
      return holder?.pid === process.pid
        ? `the data directory ${dir} is locked: it is already open in this process (pid ${holder.pid} on host ${holder.hostname}); close that Store before opening the directory again, or use another data directory`
        : `the data directory ${dir} is locked by ${who}, which is running: two stores writing one data directory would corrupt it. Stop that process (another 'converge serve' or 'converge dev'?), ${otherwise}`;
    case 'other-host':
      return `the data directory ${dir} is locked by ${who}, another host: a lock held from another host is never taken over automatically, since whether its process still runs cannot be checked from here. If nothing on ${holder?.hostname ?? 'that host'} uses the directory any more, delete ${lock}`;
    case 'unreadable':
      return `the data directory ${dir} is locked by a lock file that cannot be read (${lock}: ${detail}), so whether a process holds it is unknown; such a lock is never taken over automatically. If no Converge process uses the directory, delete ${lock}`;
    case 'taking-over':
      return `the data directory ${dir} is locked: ${who} is taking over the lock its previous holder left when it died. Stop that process, ${otherwise}`;
    case 'contended':
      return `the data directory ${dir} is locked: its holder, ${who}, is gone, but other processes kept taking the lock over at the same moment. Try again; if this persists while no Converge process uses the directory, delete ${lock} and any ${lock}.takeover-* files`;
  }
}

/** The errors of one object, worded as kube-apiserver words them: the runtime's `statusError`. */
export const { notFound, alreadyExists, conflict, forbidden, invalid } = statusError;

/** Field error constructors: the runtime's (apimachinery's `field.Required`, `field.Invalid`, …). */
export { fieldError } from '@converge/runtime';
