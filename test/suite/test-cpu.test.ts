/**
 * `npm run test:cpu` (scripts/test-cpu.ts) and the setup file that records each test file's CPU
 * (test/cpu-usage.ts): the records of a real vitest run, the table, and bad records refused by
 * line.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CpuRecordError,
  childrenSeconds,
  countSpawns,
  cpuTable,
  parseRecords,
  processName,
} from '../../scripts/test-cpu.ts';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'converge-test-cpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run test:cpu', () => {
  it('records one line per test file of a vitest run when CONVERGE_TEST_CPU names a file', async () => {
    const records = join(dir, 'records.jsonl');
    // Two small files: one line each, with their own paths and the CPU their workers spent.
    const files = ['test/suite/test-kinds.test.ts', 'packages/runtime/src/selector/label-parser.test.ts'];
    await exec(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...files], {
      cwd: root,
      env: { ...process.env, CONVERGE_TEST_CPU: records },
    });
    const parsed = parseRecords(readFileSync(records, 'utf8'));
    expect(parsed.map((r) => r.file).sort()).toEqual(files.map((f) => join(root, f)).sort());
    for (const record of parsed) {
      expect(record.selfSeconds, record.file).toBeGreaterThan(0);
      expect(record.wallSeconds, record.file).toBeGreaterThan(0);
    }
  });

  it('names a child process by its command, and a node process by the script it runs', () => {
    expect(processName('/usr/bin/kubectl', ['kubectl', 'get', 'pods'])).toBe('kubectl');
    expect(processName('/x/node', ['/x/node', '--conditions=a', '/r/bin/converge.js', 'dev'])).toBe(
      'converge.js',
    );
    expect(processName(process.execPath, [process.execPath, '-e', '1'])).toBe('node -e');
    expect(processName('node', ['node'])).toBe('node');
  });

  it('counts the child processes started, by name, in one map per process', async () => {
    const counts = countSpawns();
    expect(countSpawns()).toBe(counts);
    const before = counts.get('node -e') ?? 0;
    await exec(process.execPath, ['-e', '0']);
    expect(counts.get('node -e')).toBe(before + 1);
  });

  it('counts the CPU of the child processes that exited', () => {
    const before = childrenSeconds();
    // A child that burns 0.3 s of CPU (its own clock, not the wall's), then exits and is reaped.
    const burn =
      'const t = process.cpuUsage(); while ((process.cpuUsage(t).user + process.cpuUsage(t).system) < 3e5);';
    const child = spawnSync(process.execPath, ['-e', burn]);
    expect(child.status).toBe(0);
    if (process.platform === 'linux') expect(childrenSeconds() - before).toBeGreaterThanOrEqual(0.25);
    else expect(childrenSeconds()).toBe(0);
  });

  it('prints the totals and the costliest files first, paths from the repository root', () => {
    const table = cpuTable(
      [
        { file: `${root}a.test.ts`, selfSeconds: 1, childrenSeconds: 0, wallSeconds: 2 },
        {
          file: `${root}b.test.ts`,
          selfSeconds: 0.5,
          childrenSeconds: 2.5,
          wallSeconds: 4,
          processes: { kubectl: 5, 'converge.js': 2, npm: 1, tsc: 1 },
        },
        { file: `${root}c.test.ts`, selfSeconds: 0, childrenSeconds: 0, wallSeconds: 0.1 },
      ],
      2,
      root,
    );
    const lines = table.split('\n');
    expect(lines[0]).toBe(
      '3 files: 4.0 s of CPU (1.5 s in the workers, 2.5 s in the processes they started), 6.1 s of wall time summed over the files',
    );
    expect(lines[1]).toBe('child processes started: 9: kubectl 5, converge.js 2, npm 1, tsc 1');
    expect(lines.slice(5)).toEqual([
      '| b.test.ts | 3.0 | 75.0 % | 0.5 | 2.5 | 9: kubectl 5, converge.js 2, npm 1, … | 4.0 |',
      '| a.test.ts | 1.0 | 25.0 % | 1.0 | 0.0 | 0 | 2.0 |',
    ]);
  });

  it('refuses a bad record with its line number, and nothing else escapes', () => {
    const good = JSON.stringify({ file: '/x.test.ts', selfSeconds: 1, childrenSeconds: 0, wallSeconds: 1 });
    expect(() => parseRecords(`${good}\n{"file":"/y.test.ts"}\n`)).toThrow(
      new CpuRecordError(2, 'selfSeconds is not a number of seconds'),
    );
    expect(() => parseRecords(`${good}\n\n[1]`)).toThrow(new CpuRecordError(3, 'not an object'));
    expect(() => parseRecords('{"file":')).toThrow(new CpuRecordError(1, 'not JSON'));
    expect(() => parseRecords(good.replace('}', ',"processes":{"npm":-1}}'))).toThrow(
      new CpuRecordError(1, 'processes is not an object of counts'),
    );
    expect(parseRecords(`\n${good}\n\n`)).toHaveLength(1);
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.json(), fc.constant(good))), (lines) => {
        try {
          const records = parseRecords(lines.join('\n'));
          for (const r of records) expect(r.selfSeconds + r.childrenSeconds).toBeGreaterThanOrEqual(0);
        } catch (error) {
          expect(error).toBeInstanceOf(CpuRecordError);
        }
      }),
    );
  });
});
