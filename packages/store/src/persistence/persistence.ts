import {
  closeSync,
  existsSync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '@converge/runtime';
import { StorePersistError } from '../errors.ts';
import { encodeRecord, type LogRecord, readLog } from './log-reader.ts';
import { frame, LOG_MAGIC } from './record-codec.ts';
import { fsyncDir, readSnapshot, SNAPSHOT_FILE, type SnapshotData, writeSnapshot } from './snapshot.ts';

/** Name of the write-ahead log in the data directory. */
export const LOG_FILE = 'log';

/** The state found in a data directory: the revision counter and every object per type and key. */
export interface LoadedState {
  readonly revision: number;
  readonly types: ReadonlyMap<string, ReadonlyMap<string, KubeObject>>;
}

/** How a {@link Persistence} writes. */
export interface PersistenceOptions {
  readonly fsync: 'always' | 'batch';
  readonly snapshotEveryRecords: number;
  /** Computes the key of an object (namespace, name) when loading a snapshot. */
  readonly keyOf: (object: KubeObject) => string;
}

/**
 * A data directory: an append-only log of writes (one framed, checksummed record per revision)
 * and a snapshot. Opening loads the snapshot, replays the newer log records, and truncates a torn
 * last record. `append` makes a record durable (fsync) before returning (`always`), or schedules one
 * fsync shared by the writes of the same tick that `flushed()` waits for (`batch`).
 */
export class Persistence {
  readonly #dir: string;
  readonly #options: PersistenceOptions;
  readonly #fd: number;
  #size: number;
  #sinceSnapshot = 0;
  #broken: Error | undefined;
  #dirty = false;
  #flush: Promise<void> | undefined;
  #closed = false;

  private constructor(dir: string, options: PersistenceOptions, fd: number, size: number) {
    this.#dir = dir;
    this.#options = options;
    this.#fd = fd;
    this.#size = size;
  }

  /** Opens (creating if needed) the data directory and loads its state. */
  static open(dir: string, options: PersistenceOptions): { persistence: Persistence; state: LoadedState } {
    mkdirSync(dir, { recursive: true });
    rmSync(join(dir, `${SNAPSHOT_FILE}.tmp`), { force: true });
    const snapshot = readSnapshot(dir);
    const logPath = join(dir, LOG_FILE);
    const created = !existsSync(logPath);
    const data = created ? Buffer.alloc(0) : readFileSync(logPath);
    const contents = readLog(data, logPath);
    const fd = openSync(logPath, 'a');
    let size = contents.validLength;
    try {
      if (size < LOG_MAGIC.length) {
        ftruncateSync(fd, 0);
        writeSync(fd, LOG_MAGIC);
        size = LOG_MAGIC.length;
        fdatasyncSync(fd);
        if (created) fsyncDir(dir);
      } else if (contents.torn) {
        ftruncateSync(fd, size);
        fdatasyncSync(fd);
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    const state = load(snapshot, contents.records, options.keyOf);
    return { persistence: new Persistence(dir, options, fd, size), state };
  }

  /** Whether enough records were logged since the last snapshot to take a new one. */
  get needsSnapshot(): boolean {
    return this.#sinceSnapshot >= this.#options.snapshotEveryRecords;
  }

  /** Appends one record; with `fsync: 'always'` it is durable when this returns. */
  append(record: LogRecord): void {
    if (this.#broken !== undefined)
      throw new StorePersistError('the data directory is unusable', { cause: this.#broken });
    if (this.#closed) throw new StorePersistError('the data directory is closed');
    const bytes = frame(encodeRecord(record));
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written);
      if (this.#options.fsync === 'always') fdatasyncSync(this.#fd);
    } catch (cause) {
      this.#rollback(cause);
      throw new StorePersistError(`appending revision ${record.revision} failed`, { cause });
    }
    this.#size += bytes.length;
    this.#sinceSnapshot++;
    if (this.#options.fsync === 'batch') this.#dirty = true;
  }

  /** Resolves when every appended record is durable (at once with `fsync: 'always'`). */
  flushed(): Promise<void> {
    if (!this.#dirty) return this.#flush ?? Promise.resolve();
    this.#flush ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#dirty = false;
        this.#flush = undefined;
        try {
          if (!this.#closed) fdatasyncSync(this.#fd);
          resolve();
        } catch (cause) {
          this.#broken = cause as Error;
          reject(new StorePersistError('fsync of the log failed', { cause }));
        }
      });
    });
    return this.#flush;
  }

  /** Writes a snapshot of `data` and restarts the log after it. */
  snapshot(data: SnapshotData): void {
    if (this.#broken !== undefined || this.#closed) return;
    if (this.#dirty) fdatasyncSync(this.#fd);
    writeSnapshot(this.#dir, data);
    try {
      ftruncateSync(this.#fd, LOG_MAGIC.length);
      fdatasyncSync(this.#fd);
      this.#size = LOG_MAGIC.length;
      this.#sinceSnapshot = 0;
    } catch (cause) {
      this.#broken = cause as Error;
    }
  }

  /** Makes everything durable and closes the log. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (this.#dirty && this.#broken === undefined) fdatasyncSync(this.#fd);
    } finally {
      closeSync(this.#fd);
    }
  }

  #rollback(cause: unknown): void {
    try {
      ftruncateSync(this.#fd, this.#size);
    } catch {
      this.#broken = cause as Error;
    }
  }
}

function load(
  snapshot: SnapshotData | undefined,
  records: readonly LogRecord[],
  keyOf: (object: KubeObject) => string,
): LoadedState {
  const types = new Map<string, Map<string, KubeObject>>();
  const typeMap = (id: string): Map<string, KubeObject> => {
    let map = types.get(id);
    if (map === undefined) {
      map = new Map();
      types.set(id, map);
    }
    return map;
  };
  let revision = snapshot?.revision ?? 0;
  for (const [id, objects] of snapshot?.types ?? []) {
    const map = typeMap(id);
    for (const object of objects) map.set(keyOf(object), object);
  }
  for (const record of records) {
    if (record.revision <= (snapshot?.revision ?? 0)) continue;
    if (record.object === undefined) typeMap(record.typeId).delete(record.key);
    else typeMap(record.typeId).set(record.key, record.object);
    revision = record.revision;
  }
  return { revision, types };
}
