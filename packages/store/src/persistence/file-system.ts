import * as fs from 'node:fs';
import { join } from 'node:path';

/**
 * The synchronous file operations the persistence layer uses. The default is `node:fs`; a test
 * passes a wrapper that fails chosen calls (a full disk, an I/O error) to check that no committed
 * write is ever reported failed.
 *
 * @example
 * const failing: StoreFileSystem = { ...nodeFileSystem, renameSync: () => { throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }); } };
 * new Store({ dataDir, persistence: { fileSystem: failing } });
 */
export interface StoreFileSystem {
  readonly openSync: (path: string, flags: string, mode?: number) => number;
  readonly closeSync: (fd: number) => void;
  readonly readSync: (fd: number, buffer: Buffer, offset: number, length: number, position: number) => number;
  readonly writeSync: (fd: number, buffer: Buffer, offset: number, length: number) => number;
  readonly fsyncSync: (fd: number) => void;
  readonly fdatasyncSync: (fd: number) => void;
  readonly ftruncateSync: (fd: number, length: number) => void;
  readonly fstatSync: (fd: number) => { readonly size: number };
  readonly renameSync: (from: string, to: string) => void;
  readonly rmSync: (path: string, options: { force?: boolean; recursive?: boolean }) => void;
  readonly mkdirSync: (path: string, options: { recursive: true; mode: number }) => unknown;
  readonly statSync: (path: string) => {
    readonly mode: number;
    readonly size: number;
    isDirectory(): boolean;
  };
  readonly chmodSync: (path: string, mode: number) => void;
  readonly readdirSync: (path: string) => string[];
  readonly existsSync: (path: string) => boolean;
  /**
   * Hard-links `to` to `from`, failing with EEXIST when `to` exists: how the data directory's lock
   * appears with its whole content at once. Optional: without it (or on a file system without hard
   * links) the lock is created with `openSync(path, 'wx')` and then written.
   */
  readonly linkSync?: (from: string, to: string) => void;
}

/** {@link StoreFileSystem} over `node:fs`. */
export const nodeFileSystem: StoreFileSystem = Object.freeze({
  openSync: (path: string, flags: string, mode?: number) => fs.openSync(path, flags, mode),
  closeSync: (fd: number) => fs.closeSync(fd),
  readSync: (fd: number, buffer: Buffer, offset: number, length: number, position: number) =>
    fs.readSync(fd, buffer, offset, length, position),
  writeSync: (fd: number, buffer: Buffer, offset: number, length: number) =>
    fs.writeSync(fd, buffer, offset, length),
  fsyncSync: (fd: number) => fs.fsyncSync(fd),
  fdatasyncSync: (fd: number) => fs.fdatasyncSync(fd),
  ftruncateSync: (fd: number, length: number) => fs.ftruncateSync(fd, length),
  fstatSync: (fd: number) => fs.fstatSync(fd),
  renameSync: (from: string, to: string) => fs.renameSync(from, to),
  rmSync: (path: string, options: { force?: boolean; recursive?: boolean }) => fs.rmSync(path, options),
  mkdirSync: (path: string, options: { recursive: true; mode: number }) => fs.mkdirSync(path, options),
  statSync: (path: string) => fs.statSync(path),
  chmodSync: (path: string, mode: number) => fs.chmodSync(path, mode),
  readdirSync: (path: string) => fs.readdirSync(path),
  existsSync: (path: string) => fs.existsSync(path),
  linkSync: (from: string, to: string) => fs.linkSync(from, to),
});

/** Writes all of `buffer` at the file position of `fd`. */
export function writeAll(fsys: StoreFileSystem, fd: number, buffer: Buffer): void {
  let written = 0;
  while (written < buffer.length) written += fsys.writeSync(fd, buffer, written, buffer.length - written);
}

/** fsyncs a directory so a rename or a new file in it survives a crash. */
export function fsyncDir(fsys: StoreFileSystem, dir: string): void {
  const fd = fsys.openSync(dir, 'r');
  try {
    fsys.fsyncSync(fd);
  } finally {
    fsys.closeSync(fd);
  }
}

/**
 * Replaces `dir/name` with `bytes` so that a crash at any step leaves the old file or the new one
 * whole: `name.tmp` written and fsynced (0600), renamed over `name`, the directory fsynced. On a
 * failure the temporary file is removed and the error rethrown (the old file is then in place).
 */
export function replaceFile(fsys: StoreFileSystem, dir: string, name: string, bytes: Buffer): void {
  const tmp = join(dir, `${name}.tmp`);
  try {
    const fd = fsys.openSync(tmp, 'w', 0o600);
    try {
      writeAll(fsys, fd, bytes);
      fsys.fsyncSync(fd);
    } finally {
      fsys.closeSync(fd);
    }
    fsys.renameSync(tmp, join(dir, name));
  } catch (error) {
    try {
      fsys.rmSync(tmp, { force: true });
    } catch {}
    throw error;
  }
  fsyncDir(fsys, dir);
}
