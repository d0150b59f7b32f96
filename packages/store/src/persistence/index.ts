/**
 * Persistence of the store to a data directory: an append-only log with one framed, checksummed
 * record per revision, and an atomically replaced snapshot. Internal to the store package.
 *
 * @module
 */
export { encodeRecord, type LogContents, type LogRecord, readLog } from './log-reader.ts';
export { LOG_FILE, type LoadedState, Persistence, type PersistenceOptions } from './persistence.ts';
export { frame, LOG_MAGIC } from './record-codec.ts';
export { SNAPSHOT_FILE, type SnapshotData } from './snapshot.ts';
