/**
 * Where `converge why` finds the operator without `--address`: `converge dev` and `converge run`
 * write `.converge/operations.json` in their working directory once the metrics address listens,
 * and remove it when they stop (only if it is still theirs: a second operator started in the same
 * directory took it over). A process killed outright leaves it behind; the reader tells by the pid.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunIo } from './process-io.ts';

/** The record's path, relative to the working directory. */
export const OPERATIONS_RECORD = join('.converge', 'operations.json');

/** What `.converge/operations.json` holds. */
export interface OperationsRecord {
  /** Where `/metrics` and `/debug/keys` are served (`http://127.0.0.1:41234`). */
  readonly url: string;
  readonly pid: number;
  readonly command: 'dev' | 'run';
  /** When it started serving (ISO 8601). */
  readonly since: string;
}

/**
 * The URL a client on this machine connects to for a server bound to `url`: an unspecified address
 * (`0.0.0.0`, `::`, as `:8080` binds) becomes loopback.
 */
export function connectableUrl(url: string): string {
  return url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, (_, host: string) =>
    host === '0.0.0.0' ? 'http://127.0.0.1' : 'http://[::1]',
  );
}

/**
 * Writes the record for a server listening at `url` (0600, through a rename, so a reader never
 * sees half of it). Returns its removal, or throws the file system's error (the caller says it and
 * goes on: `converge why --address` still works).
 */
export function writeOperationsRecord(
  url: string,
  command: 'dev' | 'run',
  cwd: string = process.cwd(),
): () => void {
  const path = resolve(cwd, OPERATIONS_RECORD);
  const record: OperationsRecord = {
    url: connectableUrl(url),
    pid: process.pid,
    command,
    since: new Date().toISOString(),
  };
  mkdirSync(resolve(cwd, '.converge'), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
  return () => {
    if (readOperationsRecord(cwd)?.pid === process.pid) rmSync(path, { force: true });
  };
}

/** The record in `cwd`, or undefined when there is none or it is not one (a stray file). */
export function readOperationsRecord(cwd: string = process.cwd()): OperationsRecord | undefined {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, OPERATIONS_RECORD), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const r = JSON.parse(text) as Partial<OperationsRecord> | null;
    if (
      typeof r !== 'object' ||
      r === null ||
      typeof r.url !== 'string' ||
      !/^https?:\/\//.test(r.url) ||
      !Number.isSafeInteger(r.pid) ||
      (r.pid as number) <= 0 ||
      (r.command !== 'dev' && r.command !== 'run')
    )
      return undefined;
    return { url: r.url, pid: r.pid as number, command: r.command, since: String(r.since ?? '') };
  } catch {
    return undefined;
  }
}

/** Whether a process `pid` exists (one of another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Records the metrics address `url` of `converge dev` or `run` once it listens (nothing when
 * metrics are off); returns the removal, to call when the command stops. Neither ever throws: a
 * record that cannot be written is said on stderr (`dev`), or skipped quietly where the working
 * directory is read-only or not ours (`run` in a container).
 */
export function recordOperations(
  url: string | undefined,
  command: 'dev' | 'run',
  io: Pick<RunIo, 'err'>,
  cwd: string = process.cwd(),
): () => void {
  if (url === undefined) return () => {};
  let remove: () => void;
  try {
    remove = writeOperationsRecord(url, command, cwd);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (command === 'dev' || (code !== 'EROFS' && code !== 'EACCES' && code !== 'EPERM'))
      io.err(
        `converge: the metrics address is not recorded in ${OPERATIONS_RECORD} (${(error as Error).message}); converge why needs --address ${connectableUrl(url)}`,
      );
    return () => {};
  }
  return () => {
    try {
      remove();
    } catch {
      // Gone already, or the directory became unwritable: the reader checks the pid.
    }
  };
}
