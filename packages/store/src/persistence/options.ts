import { OptionsError } from '@converge/runtime';
import { nodeFileSystem, type StoreFileSystem } from './file-system.ts';

/**
 * How a persistent store (`dataDir`) compacts, retries and treats lost data. Every field is
 * optional.
 *
 * @example
 * new Store({ dataDir, persistence: { minLogBytes: 64 * 1024 * 1024, allowReinitialize: false } });
 */
export interface StorePersistenceOptions {
  /**
   * Snapshot and start a new log once the log holds more than `max(minLogBytes,
   * logToSnapshotRatio × the last snapshot's bytes)`. Evaluated after every write and at start, so
   * it holds across restarts. Default 262 144 (256 KiB).
   */
  readonly minLogBytes?: number;
  /**
   * See `minLogBytes`. Default 1.5: the log plus the snapshot (whose records carry a little framing
   * beyond the objects' JSON) stay within 3× the live data once it is past `minLogBytes`.
   */
  readonly logToSnapshotRatio?: number;
  /** First wait before retrying a failed snapshot; doubles per failure. Default 1 000. */
  readonly retryInitialMs?: number;
  /** Longest wait between snapshot retries. Default 300 000 (5 min). */
  readonly retryMaxMs?: number;
  /**
   * Start empty when the data directory's log or snapshot went missing (the leftovers are moved
   * to `reinitialized-<time>/` inside it), instead of refusing with StoreDataMissingError. Default false.
   */
  readonly allowReinitialize?: boolean;
  /** The file operations (default `node:fs`); tests pass one that fails chosen calls. */
  readonly fileSystem?: StoreFileSystem;
}

/** {@link StorePersistenceOptions} with defaults applied. */
export interface ResolvedPersistenceOptions {
  readonly minLogBytes: number;
  readonly logToSnapshotRatio: number;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly allowReinitialize: boolean;
  readonly fileSystem: StoreFileSystem;
}

/**
 * The health of a store's data directory (`Store.health().persistence`): whether writes can be
 * made durable, and how compaction goes. `healthy` is false while writes are refused or while
 * the last snapshot attempt failed (writes still succeed then: the log keeps growing).
 */
export interface PersistenceStatus {
  readonly dataDir: string;
  /** False once the log cannot be written (an I/O error or failed fsync): writes are refused, before commit. */
  readonly writable: boolean;
  /** `writable` and no failed snapshot waiting for its retry. */
  readonly healthy: boolean;
  /** Bytes of the log (since the last snapshot). */
  readonly logBytes: number;
  /** Bytes of the last snapshot (0: none yet). */
  readonly snapshotBytes: number;
  /** Revision of the last snapshot (0: none yet). */
  readonly snapshotRevision: number;
  /** Records in the log (since the last snapshot, across restarts). */
  readonly recordsSinceSnapshot: number;
  /** Snapshots taken since this store started. */
  readonly snapshots: number;
  /** Snapshots that failed since this store started. */
  readonly snapshotFailures: number;
  /** Failed snapshot attempts since the last one that succeeded. */
  readonly consecutiveSnapshotFailures: number;
  /** When (clock milliseconds) the next snapshot may be tried after a failure; undefined: at once. */
  readonly nextSnapshotAttemptAt: number | undefined;
  /** The last failure of any step, with its error code (`ENOSPC`, `EIO`…) when it had one. */
  readonly lastError:
    | {
        readonly step: 'append' | 'fsync' | 'snapshot' | 'fences';
        readonly message: string;
        readonly code: string | undefined;
        readonly at: number;
      }
    | undefined;
}

/** Validates {@link StorePersistenceOptions} (an OptionsError naming the field) and applies defaults. */
export function resolvePersistenceOptions(
  options: StorePersistenceOptions | undefined,
): ResolvedPersistenceOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new OptionsError('persistence', options, 'an object');
  const o = options ?? {};
  if (o.allowReinitialize !== undefined && typeof o.allowReinitialize !== 'boolean')
    throw new OptionsError('persistence.allowReinitialize', o.allowReinitialize, 'a boolean');
  if (o.fileSystem !== undefined && (typeof o.fileSystem !== 'object' || o.fileSystem === null))
    throw new OptionsError('persistence.fileSystem', o.fileSystem, 'a StoreFileSystem');
  return {
    minLogBytes: number('minLogBytes', o.minLogBytes, 262_144, 0),
    logToSnapshotRatio: number('logToSnapshotRatio', o.logToSnapshotRatio, 1.5, 0.5),
    retryInitialMs: number('retryInitialMs', o.retryInitialMs, 1_000, 1),
    retryMaxMs: number('retryMaxMs', o.retryMaxMs, 300_000, 1),
    allowReinitialize: o.allowReinitialize ?? false,
    fileSystem: o.fileSystem === undefined ? nodeFileSystem : { ...nodeFileSystem, ...o.fileSystem },
  };
}

function number(field: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
    throw new OptionsError(`persistence.${field}`, value, `a finite number >= ${min}`);
  return value;
}
