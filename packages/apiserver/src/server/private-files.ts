/**
 * The server's own secrets on disk (token files, the CA and serving keys, the kubeconfig): files
 * 0600 in directories 0700, created so, and tightened with a warning when found looser.
 *
 * @module
 */
import { chmodSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import type { Logger } from '@converge/runtime';

/** Mode of a private file. */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode of a private directory. */
export const PRIVATE_DIR_MODE = 0o700;

function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
}

function tighten(path: string, mode: number, logger: Logger, what: string): void {
  const current = modeOf(path);
  if (current === undefined || (current & 0o077) === 0) return;
  chmodSync(path, mode);
  logger.warn(
    { path, mode: current.toString(8), now: mode.toString(8) },
    `Tightened the permissions of ${what}: it was readable or writable by other users`,
  );
}

/** Creates `dir` (and missing parents) 0700, or tightens it to 0700 with a warning if looser. */
export function ensurePrivateDir(dir: string, logger: Logger): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, PRIVATE_DIR_MODE, logger, 'a private directory');
}

/** Tightens an existing file to 0600 with a warning if looser (nothing if it does not exist). */
export function ensurePrivateFile(path: string, logger: Logger): void {
  tighten(path, PRIVATE_FILE_MODE, logger, 'a private file');
}

/** Writes `content` to `path` atomically (temporary file + rename), 0600 whatever was there. */
export function writePrivateFile(path: string, content: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: PRIVATE_FILE_MODE });
  // The mode above is masked by the umask only downwards; chmod makes it exact.
  chmodSync(temporary, PRIVATE_FILE_MODE);
  renameSync(temporary, path);
}
