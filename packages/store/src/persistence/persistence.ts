import { join } from 'node:path';
import { type Clock, type Fence, isConvergeError, type KubeObject, type Logger } from '@converge/runtime';
import { StoreCorruptError, StoreDataMissingError, StorePersistError } from '../errors.ts';
import { hasManifest, LOG_FILE, MANIFEST_FILE, makePrivate, STORE_FILES, writeManifest } from './data-dir.ts';
import { DataDirLock } from './data-dir-lock.ts';
import { FENCES_FILE, readFences, writeFences } from './fences-file.ts';
import { fsyncDir, type StoreFileSystem, writeAll } from './file-system.ts';
import { encodeRecord, type LogRecord, logHeader, scanLog, type TornTail } from './log-reader.ts';
import type { PersistenceStatus, ResolvedPersistenceOptions } from './options.ts';
import { fileSource, frame, LOG_MAGIC } from './record-codec.ts';
import { readSnapshot, SNAPSHOT_FILE, type SnapshotData, writeSnapshot } from './snapshot.ts';

/**
 * The state found in a data directory: the revision counter, every object per type and key, and
 * the fence marks.
 */
export interface LoadedState {
  readonly revision: number;
  readonly types: ReadonlyMap<string, ReadonlyMap<string, KubeObject>>;
  readonly fences: readonly Fence[];
}

/** How a {@link Persistence} writes. */
export interface PersistenceOptions extends ResolvedPersistenceOptions {
  readonly fsync: 'always' | 'batch';
  readonly snapshotEveryRecords: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Computes the key of an object (namespace, name) when loading a snapshot. */
  readonly keyOf: (object: KubeObject) => string;
}

/**
 * A data directory: an append-only log of writes (one framed, checksummed record per revision)
 * and a snapshot. Opening streams the snapshot and the newer log records, and truncates a torn
 * last record (with a warning). `append` makes a record durable (fsync) before returning
 * (`always`), or schedules one fsync shared by the writes of the same tick that `flushed()` waits
 * for (`batch`). Snapshots follow a size policy that survives restarts (the log's bytes against
 * the last snapshot's); a failed snapshot is logged, counted, retried with backoff and never fails
 * a write.
 */
export class Persistence {
  readonly #dir: string;
  readonly #options: PersistenceOptions;
  readonly #fs: StoreFileSystem;
  readonly #lock: DataDirLock;
  #fd: number;
  #size: number;
  #sinceSnapshot: number;
  #snapshotBytes: number;
  #snapshotRevision: number;
  #broken: Error | undefined;
  #dirty = false;
  #flush: Promise<void> | undefined;
  #closed = false;
  #snapshots = 0;
  #failures = 0;
  #consecutiveFailures = 0;
  #retryAt: number | undefined;
  #lastError: PersistenceStatus['lastError'];

  private constructor(dir: string, options: PersistenceOptions, lock: DataDirLock, fd: number, init: Loaded) {
    this.#dir = dir;
    this.#options = options;
    this.#fs = options.fileSystem;
    this.#lock = lock;
    this.#fd = fd;
    this.#size = init.logBytes;
    this.#sinceSnapshot = init.records;
    this.#snapshotBytes = init.snapshotBytes;
    this.#snapshotRevision = init.snapshotRevision;
  }

  /**
   * Opens (creating if needed) the data directory and loads its state. Takes the directory's lock
   * first (see {@link DataDirLock}), before anything in it is read or written, and holds it until
   * {@link close}. Throws a {@link StoreLockedError} when another process or Store has it open, a
   * {@link StoreCorruptError} for damage and a {@link StoreDataMissingError} for a log or snapshot
   * that went missing (unless `allowReinitialize`).
   */
  static open(dir: string, options: PersistenceOptions): { persistence: Persistence; state: LoadedState } {
    try {
      return Persistence.#open(dir, options);
    } catch (error) {
      if (isConvergeError(error)) throw error;
      // A file system that refuses (EROFS, EACCES, ENOSPC, EIO): typed, naming the directory.
      const code = (error as NodeJS.ErrnoException).code;
      throw new StorePersistError(
        `cannot open the data directory ${dir}${code === undefined ? '' : ` (${code})`}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  static #open(dir: string, options: PersistenceOptions): { persistence: Persistence; state: LoadedState } {
    const fsys = options.fileSystem;
    fsys.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // One writer per directory: before any file in it is touched (a second writer's cleanup of
    // temporary files alone would break the first's snapshot).
    const lock = DataDirLock.acquire(dir, fsys, options.logger);
    try {
      return Persistence.#load(dir, options, lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  static #load(
    dir: string,
    options: PersistenceOptions,
    lock: DataDirLock,
  ): { persistence: Persistence; state: LoadedState } {
    const fsys = options.fileSystem;
    makePrivate(fsys, dir, options.logger);
    for (const tmp of [
      `${SNAPSHOT_FILE}.tmp`,
      `${LOG_FILE}.tmp`,
      `${MANIFEST_FILE}.tmp`,
      `${FENCES_FILE}.tmp`,
    ]) {
      fsys.rmSync(join(dir, tmp), { force: true });
    }
    let loaded: Loaded;
    try {
      loaded = load(dir, options);
    } catch (error) {
      if (!(error instanceof StoreDataMissingError) || !options.allowReinitialize) throw error;
      const aside = join(
        dir,
        `reinitialized-${new Date(options.clock.now()).toISOString().replace(/[:.]/g, '-')}`,
      );
      fsys.mkdirSync(aside, { recursive: true, mode: 0o700 });
      for (const name of STORE_FILES) {
        if (fsys.existsSync(join(dir, name))) fsys.renameSync(join(dir, name), join(aside, name));
      }
      options.logger.warn(
        { dataDir: dir, movedTo: aside, reason: error.message },
        'store data was missing; starting empty as allowReinitialize says (the leftovers were moved aside)',
      );
      loaded = load(dir, options);
    }
    const fd = fsys.openSync(join(dir, LOG_FILE), 'a', 0o600);
    return { persistence: new Persistence(dir, options, lock, fd, loaded), state: loaded.state };
  }

  /** Whether the log grew past the snapshot policy (and no failed snapshot is backing off). */
  get needsSnapshot(): boolean {
    if (this.#broken !== undefined || this.#closed) return false;
    if (this.#retryAt !== undefined && this.#options.clock.now() < this.#retryAt) return false;
    const logged = this.#size - LOG_MAGIC.length;
    return (
      this.#sinceSnapshot >= this.#options.snapshotEveryRecords ||
      (this.#sinceSnapshot > 0 &&
        logged > Math.max(this.#options.minLogBytes, this.#options.logToSnapshotRatio * this.#snapshotBytes))
    );
  }

  /** Appends one record; with `fsync: 'always'` it is durable when this returns. */
  append(record: LogRecord): void {
    if (this.#broken !== undefined)
      throw new StorePersistError('the data directory is unusable', { cause: this.#broken });
    if (this.#closed) throw new StorePersistError('the data directory is closed');
    const bytes = frame(encodeRecord(record));
    let step: 'append' | 'fsync' = 'append';
    try {
      writeAll(this.#fs, this.#fd, bytes);
      step = 'fsync';
      if (this.#options.fsync === 'always') this.#fs.fdatasyncSync(this.#fd);
    } catch (cause) {
      // The record is cut off again: the write was not committed. After a failed fsync the
      // kernel may have dropped earlier pages too, so the log is not trusted for more writes.
      this.#rollback(cause);
      if (step === 'fsync') this.#broken ??= cause as Error;
      this.#failed(step, cause);
      throw new StorePersistError(`appending revision ${record.revision} failed`, { cause });
    }
    this.#size += bytes.length;
    this.#sinceSnapshot++;
    if (this.#options.fsync === 'batch') this.#dirty = true;
  }

  /** Resolves when every appended record is durable (at once with `fsync: 'always'`). */
  flushed(): Promise<void> {
    if (this.#broken !== undefined && this.#flush === undefined)
      return Promise.reject(new StorePersistError('the data directory is unusable', { cause: this.#broken }));
    if (!this.#dirty) return this.#flush ?? Promise.resolve();
    this.#flush ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#dirty = false;
        this.#flush = undefined;
        try {
          if (!this.#closed && this.#broken === undefined) this.#fs.fdatasyncSync(this.#fd);
          if (this.#broken !== undefined) throw this.#broken;
          resolve();
        } catch (cause) {
          // After a failed fsync the kernel may have dropped the pages: nothing later is trusted.
          this.#broken ??= cause as Error;
          this.#failed('fsync', cause);
          reject(new StorePersistError('fsync of the log failed', { cause }));
        }
      });
    });
    return this.#flush;
  }

  /**
   * Takes a snapshot if the policy says so. Never throws: a failure is logged, counted, shown in
   * {@link status} and retried with exponential backoff (on the injected clock).
   */
  maybeSnapshot(collect: () => SnapshotData): void {
    if (!this.needsSnapshot) return;
    try {
      this.snapshot(collect());
    } catch (cause) {
      const { retryInitialMs, retryMaxMs } = this.#options;
      const delay = Math.min(retryMaxMs, retryInitialMs * 2 ** Math.min(30, this.#consecutiveFailures));
      this.#consecutiveFailures++;
      this.#retryAt = this.#options.clock.now() + delay;
      this.#failed('snapshot', cause, { retryInMs: delay });
    }
  }

  /**
   * Writes a snapshot of `data` and replaces the log with an empty one that continues it. Throws
   * a {@link StorePersistError} if it fails; the data directory stays consistent either way.
   */
  snapshot(data: SnapshotData): void {
    if (this.#broken !== undefined)
      throw new StorePersistError('the data directory is unusable', { cause: this.#broken });
    if (this.#closed) return;
    const fsys = this.#fs;
    let bytes: number;
    let fd: number | undefined;
    const tmp = join(this.#dir, `${LOG_FILE}.tmp`);
    try {
      bytes = writeSnapshot(fsys, this.#dir, data);
      // From here a crash leaves the new snapshot and the old log, whose records up to the
      // snapshot's revision are skipped on load: consistent either way.
      fd = fsys.openSync(tmp, 'w', 0o600);
      writeAll(fsys, fd, logHeader(data.revision));
      fsys.fdatasyncSync(fd);
      fsys.closeSync(fd);
      fd = fsys.openSync(tmp, 'a', 0o600);
      fsys.renameSync(tmp, join(this.#dir, LOG_FILE));
    } catch (cause) {
      if (fd !== undefined) {
        try {
          fsys.closeSync(fd);
        } catch {}
      }
      try {
        fsys.rmSync(tmp, { force: true });
      } catch {}
      throw new StorePersistError(`snapshot at revision ${data.revision} failed`, { cause });
    }
    // The new log is in place: appends must go to it, never to the old file.
    const old = this.#fd;
    this.#fd = fd;
    this.#size = logHeader(data.revision).length;
    this.#sinceSnapshot = 0;
    this.#snapshotBytes = bytes;
    this.#snapshotRevision = data.revision;
    this.#snapshots++;
    this.#consecutiveFailures = 0;
    this.#retryAt = undefined;
    try {
      fsys.closeSync(old);
    } catch {}
    try {
      fsyncDir(fsys, this.#dir);
    } catch (cause) {
      // Without the directory synced the rename may not survive a crash, and later appends with it.
      this.#broken = cause as Error;
      this.#failed('snapshot', cause);
      throw new StorePersistError('fsync of the data directory failed after a snapshot', { cause });
    }
  }

  /**
   * Replaces the fence marks kept in the directory (a file of their own, replaced whole: marks
   * change once per owner's term, not per write). Durable when this returns; a
   * {@link StorePersistError} if it fails, the marks on disk then as they were.
   */
  saveFences(marks: readonly Fence[]): void {
    if (this.#broken !== undefined)
      throw new StorePersistError('the data directory is unusable', { cause: this.#broken });
    if (this.#closed) throw new StorePersistError('the data directory is closed');
    try {
      writeFences(this.#fs, this.#dir, marks);
    } catch (cause) {
      this.#failed('fences', cause);
      throw new StorePersistError('keeping the fence marks failed', { cause });
    }
  }

  /** Counters and the last failure, for health checks and metrics. */
  status(): PersistenceStatus {
    return {
      dataDir: this.#dir,
      writable: this.#broken === undefined && !this.#closed,
      healthy: this.#broken === undefined && !this.#closed && this.#consecutiveFailures === 0,
      logBytes: this.#size,
      snapshotBytes: this.#snapshotBytes,
      snapshotRevision: this.#snapshotRevision,
      recordsSinceSnapshot: this.#sinceSnapshot,
      snapshots: this.#snapshots,
      snapshotFailures: this.#failures,
      consecutiveSnapshotFailures: this.#consecutiveFailures,
      nextSnapshotAttemptAt: this.#retryAt,
      lastError: this.#lastError,
    };
  }

  /** Makes everything durable, closes the log and releases the directory's lock. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (this.#dirty && this.#broken === undefined) this.#fs.fdatasyncSync(this.#fd);
    } finally {
      try {
        this.#fs.closeSync(this.#fd);
      } finally {
        this.#lock.release();
      }
    }
  }

  #failed(
    step: 'append' | 'fsync' | 'snapshot' | 'fences',
    cause: unknown,
    fields: Record<string, unknown> = {},
  ): void {
    if (step === 'snapshot') this.#failures++;
    const error = cause as Error & { code?: unknown };
    // The code of the innermost cause: the system's (ENOSPC, EIO), not a wrapper's.
    let inner: (Error & { code?: unknown }) | undefined = error;
    while (inner?.cause instanceof Error) inner = inner.cause as Error & { code?: unknown };
    this.#lastError = {
      step,
      message: error?.message ?? String(cause),
      code: typeof inner?.code === 'string' ? inner.code : undefined,
      at: this.#options.clock.now(),
    };
    this.#options.logger.error(
      { dataDir: this.#dir, step, error: this.#lastError.message, ...fields },
      step === 'snapshot'
        ? 'store snapshot failed; writes go on to the log and the snapshot is retried'
        : step === 'fences'
          ? 'store fence marks write failed'
          : 'store log write failed',
    );
  }

  #rollback(cause: unknown): void {
    try {
      this.#fs.ftruncateSync(this.#fd, this.#size);
    } catch {
      this.#broken = cause as Error;
    }
  }
}

interface Loaded {
  readonly state: LoadedState;
  readonly logBytes: number;
  readonly records: number;
  readonly snapshotBytes: number;
  readonly snapshotRevision: number;
}

function load(dir: string, options: PersistenceOptions): Loaded {
  const fsys = options.fileSystem;
  const logPath = join(dir, LOG_FILE);
  const snapshotPath = join(dir, SNAPSHOT_FILE);
  const manifest = hasManifest(fsys, dir);
  const logExists = fsys.existsSync(logPath);
  const snapshotExists = fsys.existsSync(snapshotPath);
  if (!logExists || fsys.statSync(logPath).size === 0) {
    if (manifest || snapshotExists) {
      throw new StoreDataMissingError(logPath, logExists ? 'the log is empty' : 'the log is missing');
    }
    // A new data directory: the log first, then the manifest that says it must exist.
    const fd = fsys.openSync(logPath, 'w', 0o600);
    try {
      writeAll(fsys, fd, logHeader(0));
      fsys.fdatasyncSync(fd);
    } finally {
      fsys.closeSync(fd);
    }
    writeManifest(fsys, dir);
    return {
      // Marks outlive the objects: a directory whose log was reinitialized keeps them.
      state: { revision: 0, types: new Map(), fences: readFences(fsys, dir) },
      logBytes: logHeader(0).length,
      records: 0,
      snapshotBytes: 0,
      snapshotRevision: 0,
    };
  }
  if (snapshotExists && fsys.statSync(snapshotPath).size === 0) {
    throw new StoreDataMissingError(snapshotPath, 'the snapshot is empty');
  }
  const types = new Map<string, Map<string, KubeObject>>();
  const typeMap = (id: string): Map<string, KubeObject> => {
    let map = types.get(id);
    if (map === undefined) {
      map = new Map();
      types.set(id, map);
    }
    return map;
  };
  const snapshot = readSnapshot(fsys, dir, (id, object) => typeMap(id).set(options.keyOf(object), object));
  const base = snapshot?.revision ?? 0;
  // An empty store is at revision 1, so a log without a snapshot starts at 2.
  let revision = Math.max(base, 1);
  let records = 0;
  const fd = fsys.openSync(logPath, 'r+');
  let scan: ReturnType<typeof scanLog>;
  try {
    scan = scanLog(
      fileSource(fsys, fd, fsys.fstatSync(fd).size),
      logPath,
      (record) => {
        if (record.revision <= base) return;
        if (record.revision !== revision + 1) {
          throw new StoreCorruptError(
            logPath,
            0,
            `the log skips from the snapshot's revision ${base} to ${record.revision}`,
          );
        }
        if (record.object === undefined) typeMap(record.typeId).delete(record.key);
        else typeMap(record.typeId).set(record.key, record.object);
        revision = record.revision;
        records++;
      },
      (logBase) => {
        if (logBase <= base) return;
        throw new StoreDataMissingError(
          snapshotPath,
          snapshot === undefined
            ? `the snapshot is missing (the log continues one at revision ${logBase})`
            : `the snapshot is at revision ${base}, older than the log, which continues revision ${logBase}`,
        );
      },
    );
    if (scan.torn !== undefined) {
      const preview = fileSource(fsys, fd, scan.validLength + scan.torn.bytes)
        .read(scan.torn.offset + 12, 300)
        .toString('utf8');
      fsys.ftruncateSync(fd, scan.validLength);
      fsys.fdatasyncSync(fd);
      warnTorn(options.logger, logPath, scan.torn, revision, preview);
    }
  } finally {
    fsys.closeSync(fd);
  }
  if (!manifest) writeManifest(fsys, dir);
  return {
    state: { revision, types, fences: readFences(fsys, dir) },
    logBytes: scan.validLength,
    records,
    snapshotBytes: snapshot?.bytes ?? 0,
    snapshotRevision: base,
  };
}

/** Logs what a torn tail held (what can be read of the record's start) and why dropping it is safe. */
function warnTorn(logger: Logger, file: string, torn: TornTail, lastRevision: number, preview: string): void {
  const type = /"t":"([^"]*)"/.exec(preview)?.[1];
  const key = /"k":"([^"]*)"/.exec(preview)?.[1]?.replace('\\u0000', '/');
  logger.warn(
    {
      file,
      offset: torn.offset,
      bytes: torn.bytes,
      reason: torn.reason,
      lastRevision,
      droppedRevision: lastRevision + 1,
      ...(type === undefined ? {} : { droppedType: type }),
      ...(key === undefined ? {} : { droppedKey: key }),
    },
    'store log ended in a torn record (a crash mid-append); dropped it: it was never acknowledged, because a write is acknowledged only after its whole record is written and fsynced',
  );
}
