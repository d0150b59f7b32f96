import { join } from 'node:path';
import { type Fence, type KubeObject, noopLogger } from '@converge/runtime';
import { StoreCorruptError, StoreDataMissingError, type StoreLockHolder } from '../errors.ts';
import { encodeKey } from '../keys.ts';
import { LOG_FILE, MANIFEST_FILE, STORE_FILES, writeManifest } from './data-dir.ts';
import { DataDirLock, type DataDirLockState, readDataDirLock } from './data-dir-lock.ts';
import { FENCES_FILE, readFences } from './fences-file.ts';
import { nodeFileSystem, type StoreFileSystem, writeAll } from './file-system.ts';
import { logHeader, scanLog, type TornTail } from './log-reader.ts';
import { fileSource } from './record-codec.ts';
import { readSnapshot, SNAPSHOT_FILE, writeSnapshot } from './snapshot.ts';

/** One damaged or missing file found by {@link checkDataDir}. */
export interface Damage {
  readonly file: string;
  /** Byte offset of the first bad record (undefined: the whole file is missing or empty). */
  readonly offset: number | undefined;
  readonly reason: string;
  /** Bytes from the offset to the end of the file that a repair drops. */
  readonly droppedBytes: number;
}

/** What `converge store check` reports about a data directory. */
export interface DataDirReport {
  readonly dataDir: string;
  /** No damage (a torn tail and loose modes are not damage: the store handles them at start). */
  readonly healthy: boolean;
  readonly manifest: boolean;
  readonly snapshot:
    | { readonly bytes: number; readonly revision: number; readonly objects: number }
    | undefined;
  readonly log:
    | {
        readonly bytes: number;
        readonly records: number;
        readonly base: number;
        readonly lastRevision: number | undefined;
      }
    | undefined;
  /** The revision of the last readable write. */
  readonly revision: number;
  readonly liveObjects: number;
  /** Bytes of the live objects as JSON. */
  readonly liveBytes: number;
  readonly torn: TornTail | undefined;
  /**
   * The fence marks kept (one per name: the highest epoch announced or written). Empty when the
   * fences file is missing or damaged (a damaged one is in `damage`).
   */
  readonly fences: readonly Fence[];
  readonly damage: readonly Damage[];
  /** Files or the directory readable by other users (tightened to 0700/0600 at the next start). */
  readonly looseModes: readonly string[];
  /**
   * The directory's lock: `held` means a store has it open now, so what was read may be a moment
   * old and a write being appended can look like a torn tail.
   */
  readonly lock: DataDirLockState;
}

/** What `converge store repair` did. */
export interface RepairReport {
  readonly before: DataDirReport;
  /** False when there was nothing to repair. */
  readonly repaired: boolean;
  /** Where the damaged files were moved. */
  readonly backupDir: string | undefined;
  /**
   * Whether the fence marks were lost: the fences file was damaged, so it was moved aside and the
   * repaired directory has none (fenced owners' next announcements raise them again; until then a
   * stale owner's write is not refused).
   */
  readonly fencesLost: boolean;
  readonly revision: number;
  readonly liveObjects: number;
  /** The process whose lock the repair took over (it had died); undefined: the lock was free. */
  readonly tookOverLockOf: StoreLockHolder | undefined;
}

interface State {
  readonly report: DataDirReport;
  readonly types: Map<string, Map<string, KubeObject>>;
}

function read(dir: string, fsys: StoreFileSystem): State {
  const damage: Damage[] = [];
  const types = new Map<string, Map<string, KubeObject>>();
  const typeMap = (id: string): Map<string, KubeObject> => {
    let map = types.get(id);
    if (map === undefined) {
      map = new Map();
      types.set(id, map);
    }
    return map;
  };
  const sizeOf = (file: string): number | undefined =>
    fsys.existsSync(file) ? fsys.statSync(file).size : undefined;
  const record = (error: unknown, size: number | undefined): void => {
    if (error instanceof StoreCorruptError) {
      damage.push({
        file: error.file,
        offset: error.offset,
        reason: reasonOf(error),
        droppedBytes: (size ?? 0) - error.offset,
      });
    } else if (error instanceof StoreDataMissingError) {
      damage.push({
        file: error.file,
        offset: undefined,
        reason: error.message.split('; ')[0] ?? '',
        droppedBytes: 0,
      });
    } else throw error;
  };
  const manifest = fsys.existsSync(join(dir, MANIFEST_FILE));
  const snapshotPath = join(dir, SNAPSHOT_FILE);
  const logPath = join(dir, LOG_FILE);
  const snapshotSize = sizeOf(snapshotPath);
  let snapshot: DataDirReport['snapshot'];
  let snapshotRevision = 0;
  let snapshotObjects = 0;
  if (snapshotSize === 0) record(new StoreDataMissingError(snapshotPath, 'the snapshot is empty'), 0);
  else {
    try {
      const scan = readSnapshot(fsys, dir, (id, object) => {
        typeMap(id).set(keyOf(object), object);
        snapshotObjects++;
        snapshotRevision = Math.max(snapshotRevision, Number(object.metadata.resourceVersion) || 0);
      });
      if (scan !== undefined) {
        snapshot = { bytes: scan.bytes, revision: scan.revision, objects: scan.objects };
        snapshotRevision = scan.revision;
      }
    } catch (error) {
      record(error, snapshotSize);
      snapshot = { bytes: snapshotSize ?? 0, revision: snapshotRevision, objects: snapshotObjects };
    }
  }
  let revision = Math.max(1, snapshotRevision);
  const logSize = sizeOf(logPath);
  let log: DataDirReport['log'];
  let torn: TornTail | undefined;
  if (logSize === undefined || logSize === 0) {
    if (manifest || snapshotSize !== undefined)
      record(
        new StoreDataMissingError(logPath, logSize === 0 ? 'the log is empty' : 'the log is missing'),
        0,
      );
  } else {
    const fd = fsys.openSync(logPath, 'r');
    let records = 0;
    let base = 0;
    try {
      const scan = scanLog(fileSource(fsys, fd, logSize), logPath, (r) => {
        if (r.revision <= snapshotRevision) return;
        if (r.revision !== revision + 1 && records === 0 && snapshot !== undefined)
          throw new StoreCorruptError(
            logPath,
            0,
            `the log skips from the snapshot's revision ${snapshotRevision} to ${r.revision}`,
          );
        if (r.object === undefined) typeMap(r.typeId).delete(r.key);
        else typeMap(r.typeId).set(r.key, r.object);
        revision = r.revision;
        records++;
      });
      base = scan.base;
      torn = scan.torn;
      if (scan.base > snapshotRevision)
        record(
          new StoreDataMissingError(
            snapshotPath,
            `the snapshot is ${snapshot === undefined ? 'missing' : `at revision ${snapshotRevision}`}; the log continues revision ${scan.base}`,
          ),
          0,
        );
    } catch (error) {
      record(error, logSize);
    } finally {
      fsys.closeSync(fd);
    }
    log = { bytes: logSize, records, base, lastRevision: records > 0 ? revision : undefined };
  }
  let liveObjects = 0;
  let liveBytes = 0;
  for (const map of types.values()) {
    for (const object of map.values()) {
      liveObjects++;
      liveBytes += Buffer.byteLength(JSON.stringify(object));
      revision = Math.max(revision, Number(object.metadata.resourceVersion) || 0);
    }
  }
  let fences: Fence[] = [];
  try {
    fences = readFences(fsys, dir);
  } catch (error) {
    record(error, sizeOf(join(dir, FENCES_FILE)));
  }
  const looseModes: string[] = [];
  if (fsys.existsSync(dir)) {
    if ((fsys.statSync(dir).mode & 0o077) !== 0) looseModes.push(dir);
    for (const name of [...STORE_FILES, FENCES_FILE]) {
      const path = join(dir, name);
      if (fsys.existsSync(path) && (fsys.statSync(path).mode & 0o077) !== 0) looseModes.push(path);
    }
  }
  const report: DataDirReport = {
    dataDir: dir,
    healthy: damage.length === 0,
    manifest,
    snapshot,
    log,
    revision,
    liveObjects,
    liveBytes,
    torn,
    fences,
    damage,
    looseModes,
    lock: readDataDirLock(dir, fsys),
  };
  return { report, types };
}

function keyOf(object: KubeObject): string {
  return encodeKey(object.metadata.namespace ?? '', object.metadata.name ?? '');
}

function reasonOf(error: StoreCorruptError): string {
  const match = /corrupt at byte \d+: (.*?); check it with/.exec(error.message);
  return match?.[1] ?? error.message;
}

/**
 * Reads a data directory without changing it: records, live objects, sizes, a torn tail, damage
 * (the first bad record of each file), loose file modes and who holds its lock. It does not take
 * the lock (it writes nothing, so it may look at a directory a server has open; `lock` says so).
 *
 * @example
 * const report = checkDataDir('.converge/data/store');
 * if (!report.healthy) console.error(report.damage);
 */
export function checkDataDir(dir: string, fsys: StoreFileSystem = nodeFileSystem): DataDirReport {
  if (!fsys.existsSync(dir)) throw new StoreDataMissingError(dir, 'the data directory does not exist');
  return read(dir, fsys).report;
}

/**
 * Repairs a damaged data directory: keeps every object and write before the first bad record of
 * each file, moves the damaged files to `damaged-<time>/` inside the directory, and writes a fresh
 * snapshot, an empty log that continues it, and the manifest. Does nothing to a healthy directory
 * (a torn tail alone is cut at the next start). Holds the directory's lock throughout, as a store
 * does: a StoreLockedError when a store has it open (a dead process's lock is taken over).
 */
export function repairDataDir(
  dir: string,
  now: Date = new Date(),
  fsys: StoreFileSystem = nodeFileSystem,
): RepairReport {
  if (!fsys.existsSync(dir)) throw new StoreDataMissingError(dir, 'the data directory does not exist');
  const lock = DataDirLock.acquire(dir, fsys, noopLogger);
  try {
    return repair(dir, now, fsys, lock.previous);
  } finally {
    lock.release();
  }
}

function repair(
  dir: string,
  now: Date,
  fsys: StoreFileSystem,
  tookOverLockOf: StoreLockHolder | undefined,
): RepairReport {
  const { report, types } = read(dir, fsys);
  const fencesDamaged = report.damage.some((d) => d.file === join(dir, FENCES_FILE));
  if (report.healthy) {
    return {
      before: report,
      repaired: false,
      backupDir: undefined,
      fencesLost: false,
      revision: report.revision,
      liveObjects: report.liveObjects,
      tookOverLockOf,
    };
  }
  const backupDir = join(dir, `damaged-${now.toISOString().replace(/[:.]/g, '-')}`);
  fsys.mkdirSync(backupDir, { recursive: true, mode: 0o700 });
  for (const name of STORE_FILES) {
    if (fsys.existsSync(join(dir, name))) fsys.renameSync(join(dir, name), join(backupDir, name));
  }
  // Readable marks stay where they are (they guard owners, not objects); a damaged file goes aside.
  if (fencesDamaged) fsys.renameSync(join(dir, FENCES_FILE), join(backupDir, FENCES_FILE));
  const byType = new Map<string, Iterable<KubeObject>>();
  for (const [id, map] of types) if (map.size > 0) byType.set(id, map.values());
  writeSnapshot(fsys, dir, { revision: report.revision, types: byType });
  const fd = fsys.openSync(join(dir, LOG_FILE), 'w', 0o600);
  try {
    writeAll(fsys, fd, logHeader(report.revision));
    fsys.fsyncSync(fd);
  } finally {
    fsys.closeSync(fd);
  }
  writeManifest(fsys, dir);
  return {
    before: report,
    repaired: true,
    backupDir,
    fencesLost: fencesDamaged,
    revision: report.revision,
    liveObjects: report.liveObjects,
    tookOverLockOf,
  };
}
