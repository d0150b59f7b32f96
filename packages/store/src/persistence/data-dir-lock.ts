import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@converge/runtime';
import { StoreLockedError, type StoreLockHolder } from '../errors.ts';
import { type StoreFileSystem, writeAll } from './file-system.ts';

/** Name of the lock file in a data directory: JSON naming the process that has it open. */
export const LOCK_FILE = 'LOCK';
/** A lock file larger than this is not one Converge wrote. */
const MAX_LOCK_BYTES = 4_096;
/** The largest pid `process.kill` accepts. */
const MAX_PID = 2 ** 31 - 1;
/** Rounds of "create, else judge, else take over" before giving up on a contended stale lock. */
const ATTEMPTS = 8;
/** Stale takeover mutexes (each left by a crash in the middle of a takeover) broken in a row at most. */
const MAX_DEPTH = 3;
/** Link errors that mean "this file system has no hard links": create and write in place instead. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
/**
 * When this process started (ms since the epoch): the same, within clock jitter, in every thread
 * and in every copy of this module loaded into the process (`process.uptime()` is process-wide).
 */
const PROCESS_STARTED_MS = Math.round(Date.now() - process.uptime() * 1_000);
/** Two readings of this process's start differ by far less than this. */
const SAME_PROCESS_MS = 1_000;
/**
 * This boot of the machine (Linux; undefined elsewhere): a lock written in an earlier boot is stale
 * whatever its pid, which after a reboot may well belong to another, running process.
 */
const BOOT_ID = bootId();

/** A lock file's content: its holder, its boot, and a random id that makes every lock's bytes unique. */
interface LockRecord extends StoreLockHolder {
  readonly id: string;
  readonly bootId?: string;
}

/**
 * What a lock file says: `held` by a live process (`self`: this one), held from another host, left
 * by a dead process (`stale`, safe to take over), or `unreadable` (not a lock Converge wrote).
 */
export type LockVerdict =
  | { readonly state: 'held'; readonly holder: StoreLockHolder; readonly self: boolean }
  | { readonly state: 'other-host' | 'stale'; readonly holder: StoreLockHolder }
  | { readonly state: 'unreadable'; readonly reason: string };

/** A data directory's lock as `converge store check` finds it (`free`: no lock file). */
export type DataDirLockState = LockVerdict | { readonly state: 'free' };

/** Locks held by this copy of the module, by id: released at process exit. */
const held = new Map<string, DataDirLock>();
/** Ids of locks this process released but could not remove: stale, though they name this pid. */
const retired = new Set<string>();
let exitHook = false;

/**
 * The exclusive writer lock of a data directory: a `LOCK` file holding the pid, hostname and start
 * time of the process that has the directory open (Node has no `flock`). It appears whole, never
 * half-written: the content is staged in a file of its own and hard-linked to `LOCK`, which fails
 * if `LOCK` exists.
 *
 * Released by {@link DataDirLock.release} (on `Store.close()`) and on process exit (`exit` event:
 * a normal exit or `process.exit()`; a signal without a handler or SIGKILL skips it, and the lock
 * left behind is stale by the rule below).
 *
 * A lock found in place is judged: held by a running process on this host, or from another host,
 * or unreadable — refused with a {@link StoreLockedError}; left by a process that died on this host
 * (`process.kill(pid, 0)` fails with ESRCH, the lock is from an earlier boot, or the pid is this
 * process's but the start time an earlier one's, as in a restarted container) — taken over. (Two
 * PID namespaces under one hostname — containers given the same hostname and one volume — cannot
 * be told apart from a restart: such locks are judged by pid alone.)
 *
 * A takeover is exclusive per stale content: it creates `LOCK.takeover-<hash of the stale bytes>`
 * exclusively (hard link, or `wx`), reads `LOCK` again, and only if it still holds those exact
 * bytes renames its own record over it (atomically, so `LOCK` never disappears), then removes the
 * mutex. Nothing else ever replaces an existing `LOCK`: creation needs it absent, and its holder
 * (alive, so never judged stale) only removes it. Of two processes taking over one stale lock, one
 * gets the mutex; the other, then or later, finds `LOCK` changed (every record has a random id, so
 * stale bytes never come back) and judges the winner's live lock. A mutex whose own holder died (a
 * crash mid-takeover) is taken over the same way, one level down.
 */
export class DataDirLock {
  readonly #fsys: StoreFileSystem;
  readonly #path: string;
  readonly #bytes: Buffer;
  readonly #id: string;
  readonly #logger: Logger;
  #released = false;
  /** The process that held the lock before, gone when it was taken over; undefined: it was free. */
  readonly previous: StoreLockHolder | undefined;

  private constructor(
    fsys: StoreFileSystem,
    path: string,
    record: LockRecord,
    bytes: Buffer,
    logger: Logger,
    previous?: StoreLockHolder,
  ) {
    this.previous = previous;
    this.#fsys = fsys;
    this.#path = path;
    this.#bytes = bytes;
    this.#id = record.id;
    this.#logger = logger;
    held.set(record.id, this);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => {
        for (const lock of held.values()) lock.release();
      });
    }
  }

  /**
   * Takes the lock of `dir` (which must exist), taking over a dead process's; throws a
   * {@link StoreLockedError} when a live process, another host or an unreadable file holds it.
   */
  static acquire(dir: string, fsys: StoreFileSystem, logger: Logger): DataDirLock {
    const record: LockRecord = {
      pid: process.pid,
      hostname: hostname(),
      startedAt: new Date(PROCESS_STARTED_MS).toISOString(),
      id: randomBytes(16).toString('hex'),
      ...(BOOT_ID === undefined ? {} : { bootId: BOOT_ID }),
    };
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    const path = join(dir, LOCK_FILE);
    let stale: StoreLockHolder | undefined;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (createExclusive(fsys, dir, path, bytes)) return new DataDirLock(fsys, path, record, bytes, logger);
      const found = readIfExists(fsys, path);
      if (found === undefined) continue; // released in between: try again
      const verdict = judge(found);
      if (verdict.state !== 'stale') throw lockedError(dir, verdict, 'held');
      stale = verdict.holder;
      if (takeOver(fsys, dir, path, found, bytes, 0)) {
        logger.warn(
          { dataDir: dir, pid: stale.pid, hostname: stale.hostname, startedAt: stale.startedAt },
          'took over the store data directory lock of a process that is gone',
        );
        return new DataDirLock(fsys, path, record, bytes, logger, stale);
      }
    }
    throw new StoreLockedError(dir, 'contended', stale);
  }

  /** Removes the lock file if it is still this lock's. Never throws; idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    held.delete(this.#id);
    try {
      const found = readIfExists(this.#fsys, this.#path);
      if (found?.equals(this.#bytes) === true) this.#fsys.rmSync(this.#path, { force: true });
      else
        this.#logger.warn(
          { file: this.#path },
          'the store data directory lock was no longer this process’s at release; left it',
        );
    } catch (error) {
      retired.add(this.#id);
      this.#logger.warn(
        { file: this.#path, error: (error as Error).message },
        'could not remove the store data directory lock; the next start takes it over as stale',
      );
    }
  }
}

/** What the lock file of `dir` says now, for `converge store check` (`free`: there is none). */
export function readDataDirLock(dir: string, fsys: StoreFileSystem): DataDirLockState {
  const found = readIfExists(fsys, join(dir, LOCK_FILE));
  return found === undefined ? { state: 'free' } : judge(found);
}

/** Judges a lock file's bytes; see {@link DataDirLock}. */
export function judge(bytes: Buffer): LockVerdict {
  const record = parseLock(bytes);
  if (typeof record === 'string') return { state: 'unreadable', reason: record };
  const holder: StoreLockHolder = { pid: record.pid, hostname: record.hostname, startedAt: record.startedAt };
  if (record.hostname !== hostname()) return { state: 'other-host', holder };
  if (record.bootId !== undefined && BOOT_ID !== undefined && record.bootId !== BOOT_ID)
    return { state: 'stale', holder };
  if (record.pid === process.pid) {
    if (held.has(record.id)) return { state: 'held', holder, self: true };
    // Another thread, or another copy of this module, started with this process; else a process
    // before this one had this pid (a restarted container's pid 1) and is gone.
    const self =
      !retired.has(record.id) &&
      Math.abs(Date.parse(record.startedAt) - PROCESS_STARTED_MS) < SAME_PROCESS_MS;
    return self ? { state: 'held', holder, self: true } : { state: 'stale', holder };
  }
  return alive(record.pid) ? { state: 'held', holder, self: false } : { state: 'stale', holder };
}

/** The record in a lock file's bytes, or why they are not one. */
function parseLock(bytes: Buffer): LockRecord | string {
  if (bytes.length === 0) return 'it is empty';
  if (bytes.length > MAX_LOCK_BYTES) return `it is larger than ${MAX_LOCK_BYTES} bytes`;
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'it is not JSON';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'it is not a JSON object';
  const { pid, hostname, startedAt, id } = body as Record<string, unknown>;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || pid > MAX_PID)
    return 'its pid is not a process id';
  if (
    typeof hostname !== 'string' ||
    hostname === '' ||
    hostname.length > 255 ||
    [...hostname].some((c) => c < ' ' || c === '\u007f')
  )
    return 'its hostname is not a host name';
  if (typeof startedAt !== 'string' || startedAt.length > 64 || Number.isNaN(Date.parse(startedAt)))
    return 'its startedAt is not a time';
  if (typeof id !== 'string' || !/^[0-9a-f]{16,64}$/.test(id)) return 'its id is missing';
  const { bootId } = body as Record<string, unknown>;
  if (bootId === undefined) return { pid, hostname, startedAt, id };
  if (typeof bootId !== 'string' || bootId.length > 64) return 'its bootId is not a boot id';
  return { pid, hostname, startedAt, id, bootId };
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with `pid` runs on this host (EPERM: it does, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function lockedError(dir: string, verdict: LockVerdict, held: 'held' | 'taking-over'): StoreLockedError {
  switch (verdict.state) {
    case 'unreadable':
      return held === 'held'
        ? new StoreLockedError(dir, 'unreadable', undefined, verdict.reason)
        : new StoreLockedError(dir, 'taking-over', undefined);
    case 'other-host':
      return new StoreLockedError(dir, held === 'held' ? 'other-host' : 'taking-over', verdict.holder);
    case 'held':
    case 'stale':
      return new StoreLockedError(dir, held, verdict.holder);
  }
}

/**
 * Replaces `file`, found holding `stale` (a dead process's record), with `bytes`; false when it
 * changed in between (look again). Exclusive per stale content, see {@link DataDirLock}.
 */
function takeOver(
  fsys: StoreFileSystem,
  dir: string,
  file: string,
  stale: Buffer,
  bytes: Buffer,
  depth: number,
): boolean {
  const mutex = join(dir, takeoverMutex(stale));
  if (!createExclusive(fsys, dir, mutex, bytes)) {
    const other = readIfExists(fsys, mutex);
    if (other === undefined) return false; // that takeover finished in between: look again
    const verdict = judge(other);
    if (verdict.state !== 'stale') throw lockedError(dir, verdict, 'taking-over');
    // Its holder died mid-takeover: take the mutex over the same way.
    if (depth + 1 >= MAX_DEPTH || !takeOver(fsys, dir, mutex, other, bytes, depth + 1)) return false;
  }
  try {
    // Holding the mutex, nobody else replaces `file` while it holds `stale`: compare, then replace.
    if (readIfExists(fsys, file)?.equals(stale) !== true) return false;
    const tmp = stage(fsys, dir, bytes);
    try {
      fsys.renameSync(tmp, file);
    } catch (error) {
      fsys.rmSync(tmp, { force: true });
      throw error;
    }
    return true;
  } finally {
    fsys.rmSync(mutex, { force: true });
  }
}

/** The name of the mutex a takeover of a file holding `stale` creates: one per stale content. */
export function takeoverMutex(stale: Buffer): string {
  return `${LOCK_FILE}.takeover-${createHash('sha256').update(stale).digest('hex').slice(0, 32)}`;
}

/** Creates `target` holding `bytes`, whole, unless it exists (false). */
function createExclusive(fsys: StoreFileSystem, dir: string, target: string, bytes: Buffer): boolean {
  if (fsys.linkSync !== undefined) {
    const tmp = stage(fsys, dir, bytes);
    try {
      fsys.linkSync(tmp, target);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST') return false;
      if (!NO_HARD_LINKS.has(code)) throw error;
    } finally {
      fsys.rmSync(tmp, { force: true });
    }
  }
  // No hard links: a reader may see the file for a moment before it is written (unreadable:
  // refused, never taken over).
  let fd: number;
  try {
    fd = fsys.openSync(target, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeAll(fsys, fd, bytes);
    fsys.fsyncSync(fd);
  } catch (error) {
    fsys.closeSync(fd);
    fsys.rmSync(target, { force: true });
    throw error;
  }
  fsys.closeSync(fd);
  return true;
}

/** Writes `bytes` to a new file of this process's beside the lock; returns its path. */
function stage(fsys: StoreFileSystem, dir: string, bytes: Buffer): string {
  const path = join(dir, `${LOCK_FILE}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const fd = fsys.openSync(path, 'wx', 0o600);
  try {
    writeAll(fsys, fd, bytes);
    fsys.fsyncSync(fd);
  } catch (error) {
    fsys.closeSync(fd);
    fsys.rmSync(path, { force: true });
    throw error;
  }
  fsys.closeSync(fd);
  return path;
}

/** The bytes of `path` (at most one more than {@link MAX_LOCK_BYTES}), or undefined if it does not exist. */
function readIfExists(fsys: StoreFileSystem, path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fsys.openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(Math.min(fsys.fstatSync(fd).size, MAX_LOCK_BYTES + 1));
    let n = 0;
    while (n < buffer.length) {
      const read = fsys.readSync(fd, buffer, n, buffer.length - n, n);
      if (read === 0) break;
      n += read;
    }
    return buffer.subarray(0, n);
  } finally {
    fsys.closeSync(fd);
  }
}
