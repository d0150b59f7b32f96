import { randomUUID } from 'node:crypto';
import {
  type Clock,
  type Logger,
  noopLogger,
  OptionsError,
  type ResourceType,
  realClock,
} from '@converge/runtime';
import {
  type ResolvedPersistenceOptions,
  resolvePersistenceOptions,
  type StorePersistenceOptions,
} from './persistence/index.ts';

/**
 * Default {@link StoreOptions.maxHistoryBytes}: 64 MiB of superseded versions. Enough for at least
 * 42 versions of the largest object kube-apiserver accepts (1.5 MiB), and for 100 000 (the event
 * bound) versions of objects up to ~670 bytes; so for ordinary objects the 5-minute window and the
 * event bound still decide, while a write storm on large objects can no longer hold gigabytes.
 * In the heap a retained version costs about its JSON size when its strings are its own (as when
 * each write comes from a decoded request body) and less when versions share strings.
 */
export const DEFAULT_MAX_HISTORY_BYTES = 64 * 1024 * 1024;

/**
 * Default {@link StoreOptions.maxWatcherBufferBytes}: 64 MiB of unread events, the history's figure.
 * A watcher holds a cursor into the shared history, not a buffer, so this bounds how far behind it
 * may be (what it would still have to be sent), not memory of its own.
 */
export const DEFAULT_MAX_WATCHER_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Options of a {@link Store}. Every duration is in milliseconds on the injected clock.
 *
 * @example
 * const store = new Store({ clock, dataDir: '/var/lib/converge', fsync: 'batch', historyWindowMs: 600_000 });
 */
export interface StoreOptions {
  /** Backend name for logs. Default `store`. */
  readonly name?: string;
  /** Time, timers and randomness (generateName suffixes). Default `realClock`. */
  readonly clock?: Clock;
  /**
   * Makes the `metadata.uid` of each created object. Default `crypto.randomUUID`. A deterministic
   * run (the simulator's) passes one drawn from its seeded generator; uids must stay unique.
   */
  readonly newUid?: () => string;
  readonly logger?: Logger;
  /** Types served from the start (more can be registered later with `registerType`). */
  readonly types?: readonly ResourceType[];
  /** How long events stay replayable for watches and consistent pages. Default 300 000 (5 min). */
  readonly historyWindowMs?: number;
  /** At most this many events are kept across all types, whatever their age. Default 100 000. */
  readonly maxHistoryEvents?: number;
  /**
   * At most this many bytes of old versions are kept for watches and consistent pages, whatever
   * their age: the approximate JSON size of every version that a retained event superseded or
   * deleted (current objects are not counted; they are live data). The oldest events go first;
   * a watch or list that still needed them gets 410 Expired. One event larger than the bound is
   * still kept until the next write. Default {@link DEFAULT_MAX_HISTORY_BYTES} (64 MiB).
   */
  readonly maxHistoryBytes?: number;
  /** Interval of BOOKMARK events for watches with `allowBookmarks`. Default 60 000. */
  readonly bookmarkIntervalMs?: number;
  /** A watcher this many events behind is ended with an ExpiredError (relist). Default 10 000. */
  readonly maxWatcherBuffer?: number;
  /**
   * A watcher whose unread events add up to more than this many bytes (approximate JSON size of
   * the objects it would be sent) is ended with an ExpiredError (relist), unless only one event is
   * unread. Default {@link DEFAULT_MAX_WATCHER_BUFFER_BYTES} (64 MiB).
   */
  readonly maxWatcherBufferBytes?: number;
  /** How long a list or watch waits for a resourceVersion ahead of the store. Default 3 000. */
  readonly tooLargeResourceVersionWaitMs?: number;
  /** Persist every write to this directory (created if missing); absent: memory only. */
  readonly dataDir?: string;
  /**
   * `always` (default): each write is fsynced before its promise resolves. `batch`: writes issued
   * in the same tick share one fsync; each promise still resolves only after it; other readers may
   * see a write a moment before it is durable.
   */
  readonly fsync?: 'always' | 'batch';
  /**
   * Also snapshot after this many logged writes. Default: no count; the log's size decides
   * (`persistence.minLogBytes`, `persistence.logToSnapshotRatio`).
   */
  readonly snapshotEveryRecords?: number;
  /** Compaction, snapshot retries, lost-data policy and the file operations of `dataDir`. */
  readonly persistence?: StorePersistenceOptions;
}

/** {@link StoreOptions} with every default applied. */
export interface ResolvedStoreOptions {
  readonly name: string;
  readonly clock: Clock;
  readonly newUid: () => string;
  readonly logger: Logger;
  readonly types: readonly ResourceType[];
  readonly historyWindowMs: number;
  readonly maxHistoryEvents: number;
  readonly maxHistoryBytes: number;
  readonly bookmarkIntervalMs: number;
  readonly maxWatcherBuffer: number;
  readonly maxWatcherBufferBytes: number;
  readonly tooLargeResourceVersionWaitMs: number;
  readonly dataDir: string | undefined;
  readonly fsync: 'always' | 'batch';
  readonly snapshotEveryRecords: number;
  readonly persistence: ResolvedPersistenceOptions;
}

/** Validates store options (throws {@link OptionsError} naming the field) and applies defaults. */
export function resolveStoreOptions(options: StoreOptions = {}): ResolvedStoreOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const { name, clock, logger, types, dataDir, fsync } = options;
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw new OptionsError('name', name, 'a non-empty string');
  }
  if (
    clock !== undefined &&
    (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')
  ) {
    throw new OptionsError('clock', clock, 'a Clock');
  }
  if (options.newUid !== undefined && typeof options.newUid !== 'function') {
    throw new OptionsError('newUid', options.newUid, 'a function returning a uid');
  }
  if (
    logger !== undefined &&
    (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function')
  ) {
    throw new OptionsError('logger', logger, 'a Logger');
  }
  if (types !== undefined && !Array.isArray(types))
    throw new OptionsError('types', types, 'an array of ResourceType');
  if (dataDir !== undefined && (typeof dataDir !== 'string' || dataDir === '')) {
    throw new OptionsError('dataDir', dataDir, 'a directory path');
  }
  if (fsync !== undefined && fsync !== 'always' && fsync !== 'batch') {
    throw new OptionsError('fsync', fsync, "'always' or 'batch'");
  }
  return {
    name: name ?? 'store',
    clock: clock ?? realClock,
    newUid: options.newUid ?? randomUUID,
    logger: logger ?? noopLogger,
    types: types ?? [],
    historyWindowMs: positiveDurationMs('historyWindowMs', options.historyWindowMs, 300_000),
    maxHistoryEvents: integer('maxHistoryEvents', options.maxHistoryEvents, 100_000, 1),
    maxHistoryBytes: integer('maxHistoryBytes', options.maxHistoryBytes, DEFAULT_MAX_HISTORY_BYTES, 1),
    bookmarkIntervalMs: positiveDurationMs('bookmarkIntervalMs', options.bookmarkIntervalMs, 60_000),
    maxWatcherBuffer: integer('maxWatcherBuffer', options.maxWatcherBuffer, 10_000, 1),
    maxWatcherBufferBytes: integer(
      'maxWatcherBufferBytes',
      options.maxWatcherBufferBytes,
      DEFAULT_MAX_WATCHER_BUFFER_BYTES,
      1,
    ),
    tooLargeResourceVersionWaitMs: positiveDurationMs(
      'tooLargeResourceVersionWaitMs',
      options.tooLargeResourceVersionWaitMs,
      3_000,
    ),
    dataDir,
    fsync: fsync ?? 'always',
    snapshotEveryRecords: integer(
      'snapshotEveryRecords',
      options.snapshotEveryRecords,
      Number.MAX_SAFE_INTEGER,
      1,
    ),
    persistence: resolvePersistenceOptions(options.persistence),
  };
}

function positiveDurationMs(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a finite number of milliseconds > 0');
  }
  return value;
}

function integer(field: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new OptionsError(field, value, `an integer >= ${min}`);
  }
  return value;
}
