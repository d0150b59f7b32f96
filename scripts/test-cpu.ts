/**
 * `npm run test:cpu`: where the suite's CPU goes, file by file. The suite on a 2-core machine is
 * short of CPU, not of workers, so this is the table to cut from (wall times hide it: a file
 * waiting for a core looks as slow as a file using one).
 *
 * - `npm run test:cpu` runs the whole suite (`vitest run`, with `CONVERGE_TEST_CPU` set so that
 *   test/cpu-usage.ts records every file) and prints the table; vitest's exit status is kept.
 * - `npm run test:cpu -- FILE` prints the table of an earlier run's records
 *   (`CONVERGE_TEST_CPU=FILE npx vitest run …`).
 * - `--top N`: the N costliest files (default 25).
 */
import { ChildProcess, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Linux's USER_HZ: what `/proc/<pid>/stat` counts CPU time in, on every architecture. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of this process's children that have exited and been reaped (and of their own
 * reaped children): `cutime` + `cstime` of `/proc/self/stat`. 0 where there is no /proc.
 */
export function childrenSeconds(): number {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return 0;
  }
  // After the command name (in parentheses, which may hold spaces): field 3 onwards; cutime and
  // cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/**
 * A child process's name for the table: the command's file name, and for node the script it ran
 * (`converge.js`, `vitest.mjs`; `node -e` when it ran none).
 */
export function processName(file: string, args: readonly string[]): string {
  const command = basename(file);
  if (!/^node\d*$/.test(command)) return command;
  // args[0] is argv0 (the command itself) when it comes from ChildProcess.spawn's options.
  for (const arg of args.slice(1)) {
    if (arg === '-e' || arg === '--eval' || arg === '-p' || arg === '--print') return 'node -e';
    if (!arg.startsWith('-')) return basename(arg);
  }
  return 'node';
}

const COUNTS = Symbol.for('converge.test-cpu.spawns');

/**
 * The child processes this process starts from now on, by {@link processName}, counted where
 * every asynchronous spawn goes (`ChildProcess.prototype.spawn`: spawn, execFile, exec, fork;
 * not `spawnSync`). Made once per process: a vitest worker runs many files and evaluates the
 * setup file once for each, and every call returns the same map (clear it to count afresh).
 */
export function countSpawns(): Map<string, number> {
  const holder = globalThis as { [COUNTS]?: Map<string, number> };
  const existing = holder[COUNTS];
  if (existing !== undefined) return existing;
  const counts = new Map<string, number>();
  holder[COUNTS] = counts;
  // Node's own (undocumented, untyped) method that spawn, execFile, exec and fork all call.
  const proto = ChildProcess.prototype as unknown as {
    spawn(this: ChildProcess, options: { file: string; args?: string[] }): unknown;
  };
  const spawn = proto.spawn;
  proto.spawn = function (options) {
    const name = processName(options.file, options.args ?? []);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return spawn.call(this, options);
  };
  return counts;
}

/** One test file's record (test/cpu-usage.ts). */
export interface CpuRecord {
  readonly file: string;
  readonly selfSeconds: number;
  readonly childrenSeconds: number;
  readonly wallSeconds: number;
  /** The child processes the file started, by {@link processName}; absent in older records. */
  readonly processes?: Readonly<Record<string, number>>;
}

/** A record that is not what test/cpu-usage.ts writes, with its line number. */
export class CpuRecordError extends Error {
  constructor(line: number, problem: string) {
    super(`line ${line}: ${problem}`);
    this.name = 'CpuRecordError';
  }
}

/** The records of a file test/cpu-usage.ts appended to; throws a CpuRecordError naming a bad line. */
export function parseRecords(text: string): CpuRecord[] {
  const records: CpuRecord[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new CpuRecordError(i + 1, 'not JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new CpuRecordError(i + 1, 'not an object');
    const record = value as Record<string, unknown>;
    if (typeof record.file !== 'string' || record.file === '')
      throw new CpuRecordError(i + 1, 'file is not a path');
    for (const key of ['selfSeconds', 'childrenSeconds', 'wallSeconds'] as const) {
      const n = record[key];
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
        throw new CpuRecordError(i + 1, `${key} is not a number of seconds`);
    }
    const processes = record.processes;
    if (processes !== undefined) {
      if (typeof processes !== 'object' || processes === null || Array.isArray(processes))
        throw new CpuRecordError(i + 1, 'processes is not an object of counts');
      for (const n of Object.values(processes))
        if (!Number.isInteger(n) || (n as number) < 0)
          throw new CpuRecordError(i + 1, 'processes is not an object of counts');
    }
    records.push(record as unknown as CpuRecord);
  }
  return records;
}

const seconds = (n: number): string => n.toFixed(1);

/** `41: kubectl 30, converge.js 8, npm 3`: the total, then the `most` commonest names. */
function spawned(counts: Readonly<Record<string, number>>, most: number): string {
  const entries = Object.entries(counts).toSorted((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return '0';
  const named = entries.slice(0, most).map(([name, n]) => `${name} ${n}`);
  return `${total}: ${named.join(', ')}${entries.length > most ? ', …' : ''}`;
}

/**
 * The table: the totals, then the `top` files by CPU (own + children), each with its share of the
 * suite's CPU. `root` is taken off the paths.
 */
export function cpuTable(records: readonly CpuRecord[], top: number, root = ''): string {
  const cpu = (r: CpuRecord): number => r.selfSeconds + r.childrenSeconds;
  let self = 0;
  let children = 0;
  let wall = 0;
  for (const r of records) {
    self += r.selfSeconds;
    children += r.childrenSeconds;
    wall += r.wallSeconds;
  }
  const total = self + children;
  const rows = records
    .toSorted((a, b) => cpu(b) - cpu(a) || a.file.localeCompare(b.file))
    .slice(0, top)
    .map((r) => {
      const share = total === 0 ? 0 : (cpu(r) / total) * 100;
      const path = root !== '' && r.file.startsWith(root) ? relative(root, r.file) : r.file;
      return `| ${path} | ${seconds(cpu(r))} | ${share.toFixed(1)} % | ${seconds(r.selfSeconds)} | ${seconds(r.childrenSeconds)} | ${spawned(r.processes ?? {}, 3)} | ${seconds(r.wallSeconds)} |`;
    });
  const all: Record<string, number> = {};
  for (const r of records)
    for (const [name, n] of Object.entries(r.processes ?? {})) all[name] = (all[name] ?? 0) + n;
  return [
    `${records.length} files: ${seconds(total)} s of CPU (${seconds(self)} s in the workers, ${seconds(children)} s in the processes they started), ${seconds(wall)} s of wall time summed over the files`,
    `child processes started: ${spawned(all, 12)}`,
    '',
    '| file | CPU, s | of the suite | worker, s | child processes, s | processes started | wall, s |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

function main(argv: readonly string[]): number {
  const root = fileURLToPath(new URL('..', import.meta.url));
  let top = 25;
  let from: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--top') {
      top = Number(argv[++i]);
      if (!Number.isInteger(top) || top < 1) {
        process.stderr.write('test:cpu: --top takes a whole number of files, 1 or more\n');
        return 2;
      }
    } else if (arg.startsWith('-')) {
      process.stderr.write(`test:cpu: unknown flag ${arg} (known: --top N)\n`);
      return 2;
    } else if (from === undefined) from = arg;
    else {
      process.stderr.write('Usage: npm run test:cpu -- [--top N] [RECORDS.jsonl]\n');
      return 2;
    }
  }
  let status = 0;
  if (from === undefined) {
    from = join(mkdtempSync(join(tmpdir(), 'converge-test-cpu-')), 'records.jsonl');
    const run = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, CONVERGE_TEST_CPU: from },
    });
    status = run.status ?? 1;
    process.stdout.write(`\nrecords: ${from}\n`);
  }
  let text: string;
  try {
    text = readFileSync(from, 'utf8');
  } catch (error) {
    process.stderr.write(`test:cpu: cannot read ${from}: ${(error as Error).message}\n`);
    return 2;
  }
  try {
    process.stdout.write(`${cpuTable(parseRecords(text), top, root)}\n`);
  } catch (error) {
    if (!(error instanceof CpuRecordError)) throw error;
    process.stderr.write(`test:cpu: ${from}, ${error.message}\n`);
    return 2;
  }
  return status;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
