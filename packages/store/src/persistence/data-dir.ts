import { join } from 'node:path';
import type { Logger } from '@converge/runtime';
import { StoreCorruptError } from '../errors.ts';
import { replaceFile, type StoreFileSystem } from './file-system.ts';

/** Name of the write-ahead log in the data directory. */
export const LOG_FILE = 'log';
/**
 * Name of the manifest, written once when the data directory is created: its presence says a log
 * must exist (and a snapshot, once the log's header says it continues one).
 */
export const MANIFEST_FILE = 'manifest.json';
const MANIFEST = { format: 'converge-store', version: 2 } as const;
/** Files a data directory keeps (others, like backups, are left alone). */
export const STORE_FILES = [MANIFEST_FILE, LOG_FILE, 'snapshot'] as const;

/** Writes the manifest atomically (tmp, fsync, rename, fsync the directory). */
export function writeManifest(fsys: StoreFileSystem, dir: string): void {
  replaceFile(fsys, dir, MANIFEST_FILE, Buffer.from(`${JSON.stringify(MANIFEST)}\n`, 'utf8'));
}

/** Whether `dir` has a manifest; a manifest that is not ours is a {@link StoreCorruptError}. */
export function hasManifest(fsys: StoreFileSystem, dir: string): boolean {
  const file = join(dir, MANIFEST_FILE);
  if (!fsys.existsSync(file)) return false;
  const fd = fsys.openSync(file, 'r');
  let text: string;
  try {
    const buffer = Buffer.alloc(Math.min(4096, fsys.fstatSync(fd).size));
    const n = fsys.readSync(fd, buffer, 0, buffer.length, 0);
    text = buffer.subarray(0, n).toString('utf8');
  } finally {
    fsys.closeSync(fd);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if ((body as { format?: unknown } | undefined)?.format !== MANIFEST.format) {
    throw new StoreCorruptError(file, 0, 'not a store manifest');
  }
  return true;
}

/**
 * Creates `dir` (0700) if missing, and tightens the directory to 0700 and each of its files to 0600
 * when they are looser, with a warning: a log holds Secrets' values.
 */
export function makePrivate(fsys: StoreFileSystem, dir: string, logger: Logger): void {
  fsys.mkdirSync(dir, { recursive: true, mode: 0o700 });
  tighten(fsys, dir, 0o700, logger);
  for (const name of fsys.readdirSync(dir)) {
    const path = join(dir, name);
    try {
      tighten(fsys, path, undefined, logger);
    } catch (error) {
      // Gone since the listing: a lock file another process staged (LOCK.*.tmp) and removed.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

function tighten(fsys: StoreFileSystem, path: string, wanted: number | undefined, logger: Logger): void {
  const stat = fsys.statSync(path);
  const mode = wanted ?? (stat.isDirectory() ? 0o700 : 0o600);
  const actual = stat.mode & 0o777;
  if ((actual & ~mode) === 0) return;
  fsys.chmodSync(path, actual & mode);
  logger.warn(
    { path, mode: `0${actual.toString(8)}`, now: `0${(actual & mode).toString(8)}` },
    'store data was readable by other users; tightened its mode',
  );
}
