/**
 * Helpers of the persistence tests: temporary data directories, a logger that keeps what it was
 * told, and a file system whose chosen calls fail.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogFields, Logger } from '@converge/runtime';
import { nodeFileSystem, type StoreFileSystem } from './file-system.ts';

const dirs: string[] = [];

/** A new temporary directory, removed by {@link removeTempDirs}. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-persist-'));
  dirs.push(dir);
  return join(dir, 'data');
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: LogFields;
  readonly message: string;
}

/** A logger that keeps every line. */
export function recordingLogger(): Logger & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = {
    lines,
    debug: (fields: LogFields, message: string) => lines.push({ level: 'debug', fields, message }),
    info: (fields: LogFields, message: string) => lines.push({ level: 'info', fields, message }),
    warn: (fields: LogFields, message: string) => lines.push({ level: 'warn', fields, message }),
    error: (fields: LogFields, message: string) => lines.push({ level: 'error', fields, message }),
    child: () => logger,
  };
  return logger as unknown as Logger & { readonly lines: LogLine[] };
}

/** An errno error as `node:fs` throws it. */
export function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault`), { code });
}

/**
 * `node:fs` with a switch per operation: while `failing.has(name)` (and `when(args)` holds, if
 * given) the call throws `errno(code)`. `calls` counts calls per operation; `maxRead` is the largest
 * read asked for.
 */
export function faultyFs(code = 'ENOSPC'): {
  fs: StoreFileSystem;
  failing: Map<keyof StoreFileSystem, (args: unknown[]) => boolean>;
  calls: Map<string, number>;
  maxRead: () => number;
  /** The path of the last file or directory opened. */
  lastOpened: () => string;
} {
  const failing = new Map<keyof StoreFileSystem, (args: unknown[]) => boolean>();
  const calls = new Map<string, number>();
  let maxRead = 0;
  let lastOpened = '';
  const fs = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(nodeFileSystem)) {
    fs[name] = (...args: unknown[]) => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      if (name === 'readSync') maxRead = Math.max(maxRead, args[3] as number);
      if (name === 'openSync') lastOpened = args[0] as string;
      const when = failing.get(name as keyof StoreFileSystem);
      if (when?.(args) === true) throw errno(code);
      return (fn as (...a: unknown[]) => unknown)(...args);
    };
  }
  return {
    fs: fs as unknown as StoreFileSystem,
    failing,
    calls,
    maxRead: () => maxRead,
    lastOpened: () => lastOpened,
  };
}

/** The permission bits of a path. */
export function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}
