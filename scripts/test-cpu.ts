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
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
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

/** One test file's record (test/cpu-usage.ts). */
export interface CpuRecord {
  readonly file: string;
  readonly selfSeconds: number;
  readonly childrenSeconds: number;
  readonly wallSeconds: number;
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
    records.push(record as unknown as CpuRecord);
  }
  return records;
}

const seconds = (n: number): string => n.toFixed(1);

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
      return `| ${path} | ${seconds(cpu(r))} | ${share.toFixed(1)} % | ${seconds(r.selfSeconds)} | ${seconds(r.childrenSeconds)} | ${seconds(r.wallSeconds)} |`;
    });
  return [
    `${records.length} files: ${seconds(total)} s of CPU (${seconds(self)} s in the workers, ${seconds(children)} s in the processes they started), ${seconds(wall)} s of wall time summed over the files`,
    '',
    '| file | CPU, s | of the suite | worker, s | child processes, s | wall, s |',
    '| --- | --- | --- | --- | --- | --- |',
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
