/**
 * Persistence of the store to a data directory: a manifest, an append-only log with one framed,
 * checksummed record per revision, and an atomically replaced snapshot that the log continues.
 * Internal to the store package, except the options, the status and the check/repair functions.
 *
 * @module
 */

export { LOG_FILE, MANIFEST_FILE } from './data-dir.ts';
export { DataDirLock, type DataDirLockState, LOCK_FILE, readDataDirLock } from './data-dir-lock.ts';
export { nodeFileSystem, type StoreFileSystem } from './file-system.ts';
export { checkDataDir, type DataDirReport, type RepairReport, repairDataDir } from './inspect.ts';
export { encodeRecord, type LogContents, type LogRecord, logHeader, readLog, scanLog } from './log-reader.ts';
export {
  type PersistenceStatus,
  type ResolvedPersistenceOptions,
  resolvePersistenceOptions,
  type StorePersistenceOptions,
} from './options.ts';
export { type LoadedState, Persistence, type PersistenceOptions } from './persistence.ts';
export { bufferSource, frame, LOG_MAGIC } from './record-codec.ts';
export { SNAPSHOT_FILE, type SnapshotData } from './snapshot.ts';
