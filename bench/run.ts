/**
 * `npm run bench`: runs every part of the benchmark suite (bench/parts.ts), each in its own
 * process, one after the other, and writes the report and its charts.
 *
 * - Full run (`npm run bench`): the report replaces the generated section of BENCHMARKS.md (between
 *   its `bench:report` markers; the hand-written sections below stay) and the charts go to
 *   bench/charts/*.svg. The goals of issue 17 are read from this run only.
 * - Small run (`npm run bench -- --small`, or BENCH_SMALL=1): tiny sizes, two parts at a time; the
 *   report and charts go to `--out` (default: a new temporary directory), BENCHMARKS.md is not
 *   touched. It checks that every part runs and that every correctness check holds; it never
 *   fails on a missed goal (test/bench/bench-small.test.ts runs it in CI).
 * - Logs and per-part results go to `--out DIR` (full run default: node_modules/.cache/converge-bench,
 *   out of git's way).
 * - `--only a,b` runs those parts (names in bench/parts.ts); `--out DIR` puts logs, results, the
 *   report and the charts there; `--write-report` writes BENCHMARKS.md and bench/charts even with
 *   `--only` (the report lists the parts that ran); `--merge` (with `--only`) writes them with every
 *   part: those that ran now, and the others as their last run in `--out` recorded them (each part's
 *   date and commit are in the report), to re-run the parts a noisy machine spoiled.
 *
 * Exit status 1 when a part exits non-zero (a correctness check failed), times out or cannot run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { PARTS, type PartSpec } from './parts.ts';
import { type PartRun, renderReport, spliceReport } from './report.ts';
import { renderChart } from './svg-chart.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Options {
  readonly small: boolean;
  readonly only: readonly string[] | undefined;
  readonly out: string;
  readonly parallel: number;
  /** Write BENCHMARKS.md and bench/charts even with --only (a partial full run). */
  readonly writeReport: boolean;
  /** With --only: keep the other parts' figures from their last run in `out` (their records in runs/). */
  readonly merge: boolean;
}

/** What `out/runs/<part>.json` records of a part's last run, for `--merge`. */
interface RunRecord {
  readonly ok: boolean;
  readonly status: string;
  readonly ms: number;
  readonly loadBefore: string;
  readonly loadAfter: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly commit: string;
}

function parseArgs(argv: readonly string[]): Options {
  let small = process.env.BENCH_SMALL === '1';
  let only: string[] | undefined;
  let out: string | undefined;
  let parallel: number | undefined;
  let writeReport = false;
  let merge = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--small') small = true;
    else if (flag === '--only') only = value().split(',');
    else if (flag === '--out') out = value();
    else if (flag === '--parallel') parallel = Number(value());
    else if (flag === '--write-report') writeReport = true;
    else if (flag === '--merge') merge = true;
    else
      throw new Error(
        `unknown argument ${arg} (known: --small, --only a,b, --out DIR, --parallel N, --write-report, --merge)`,
      );
  }
  if (only !== undefined) {
    const unknown = only.filter((name) => !PARTS.some((p) => p.name === name));
    if (unknown.length > 0)
      throw new Error(`unknown parts: ${unknown.join(', ')} (known: ${PARTS.map((p) => p.name).join(', ')})`);
  }
  if (merge && (only === undefined || small))
    throw new Error('--merge keeps the other parts of an earlier full run: use it with --only, not --small');
  if (parallel !== undefined && (!Number.isSafeInteger(parallel) || parallel < 1))
    throw new Error('--parallel must be a positive integer');
  return {
    small,
    only,
    out:
      out ??
      (small
        ? mkdtempSync(join(os.tmpdir(), 'converge-bench-'))
        : join(ROOT, 'node_modules', '.cache', 'converge-bench')),
    parallel: parallel ?? (small ? 3 : 1),
    writeReport: (writeReport || merge) && !small,
    merge,
  };
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

/** Ends a part and everything it started (its process group). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

async function runPart(part: PartSpec, options: Options): Promise<PartRun> {
  const resultFile = join(options.out, 'results', `${part.name}.json`);
  const logFile = join(options.out, 'logs', `${part.name}.log`);
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...(options.small ? part.smallEnv : part.fullEnv),
    BENCH_RESULT_FILE: resultFile,
    BENCH_SMALL: options.small ? '1' : '0',
  };
  const loadBefore = loadAverage();
  const startedAt = new Date().toISOString();
  const commit = gitCommit();
  const started = performance.now();
  const timeoutMs = options.small ? part.smallTimeoutMs : part.fullTimeoutMs;
  const child = spawn(process.execPath, [...part.nodeFlags, join(ROOT, 'bench', part.script)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // The log is written as the part runs (`tail -f` it to follow a long part), and kept whole here
  // for the report.
  writeFileSync(logFile, '');
  let output = '';
  const collect = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output += text;
    appendFileSync(logFile, text);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutMs);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve) => {
      child.once('error', (error) => {
        collect(Buffer.from(`\n${String(error)}`));
        resolve({ code: null, signal: null });
      });
      child.once('close', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
    },
  );
  clearTimeout(timer);
  // A part's server processes are its children: none may outlive it.
  if (child.pid !== undefined) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
  }
  const ms = performance.now() - started;
  let result: PartRun['result'];
  if (part.structured && existsSync(resultFile)) {
    try {
      result = JSON.parse(readFileSync(resultFile, 'utf8')) as PartRun['result'];
    } catch (error) {
      output += `\nunreadable result file: ${String(error)}`;
      appendFileSync(logFile, `\nunreadable result file: ${String(error)}`);
    }
  }
  const status = timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : code === 0
      ? 'ok'
      : `exit ${code ?? signal}`;
  const record: RunRecord = {
    ok: !timedOut && code === 0 && (!part.structured || result !== undefined),
    status,
    ms,
    loadBefore,
    loadAfter: loadAverage(),
    startedAt,
    finishedAt: new Date().toISOString(),
    commit,
  };
  writeFileSync(join(options.out, 'runs', `${part.name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  console.log(
    `${part.name.padEnd(16)} ${status.padEnd(24)} ${(ms / 1000).toFixed(1).padStart(7)} s   load ${loadBefore} → ${record.loadAfter}`,
  );
  return { part, ...record, output, result };
}

/** A part's last run as recorded in `out` (for --merge), or undefined if it has none. */
function keptRun(part: PartSpec, out: string): PartRun | undefined {
  const recordFile = join(out, 'runs', `${part.name}.json`);
  const logFile = join(out, 'logs', `${part.name}.log`);
  if (!existsSync(recordFile) || !existsSync(logFile)) return undefined;
  const record = JSON.parse(readFileSync(recordFile, 'utf8')) as RunRecord;
  const resultFile = join(out, 'results', `${part.name}.json`);
  const result =
    part.structured && existsSync(resultFile)
      ? (JSON.parse(readFileSync(resultFile, 'utf8')) as PartRun['result'])
      : undefined;
  return { part, ...record, output: readFileSync(logFile, 'utf8'), result, kept: true };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  for (const dir of ['results', 'logs', 'runs']) mkdirSync(join(options.out, dir), { recursive: true });
  const selected = PARTS.filter((p) => options.only === undefined || options.only.includes(p.name));
  // Small runs go several at a time: the longest first, so the run ends soon after it.
  if (options.small) selected.sort((a, b) => b.smallSeconds - a.smallSeconds);
  const startedAt = new Date();
  const loadAtStart = loadAverage();
  console.log(
    `npm run bench${options.small ? ' (small)' : ''}: ${selected.length} parts, ${options.parallel} at a time; logs and results in ${options.out}`,
  );

  const runs: PartRun[] = new Array(selected.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < selected.length) {
      const index = next++;
      runs[index] = await runPart(selected[index] as PartSpec, options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.parallel, selected.length) }, worker));
  if (options.merge) {
    // The report lists every part in the suite's order: this run's, and the others as last run.
    const fresh = new Map(runs.map((run) => [run.part.name, run]));
    const merged: PartRun[] = [];
    for (const part of PARTS) {
      const run = fresh.get(part.name) ?? keptRun(part, options.out);
      if (run !== undefined) merged.push(run);
      else console.log(`${part.name}: no earlier run in ${options.out} to keep; left out of the report`);
    }
    runs.splice(0, runs.length, ...merged);
  }

  const intoRepo = !options.small && (options.only === undefined || options.writeReport);
  const reportPath = intoRepo ? join(ROOT, 'BENCHMARKS.md') : join(options.out, 'BENCHMARKS.md');
  const chartsDir = intoRepo ? join(ROOT, 'bench', 'charts') : join(options.out, 'charts');
  mkdirSync(chartsDir, { recursive: true });
  const charts: { id: string; title: string; path: string }[] = [];
  for (const run of runs) {
    for (const chart of run.result?.charts ?? []) {
      const file = join(chartsDir, `${chart.id}.svg`);
      writeFileSync(file, renderChart(chart));
      charts.push({ id: chart.id, title: chart.title, path: relative(dirname(reportPath), file) });
    }
  }
  const cpus = os.cpus();
  const report = renderReport({
    small: options.small,
    date: startedAt.toISOString(),
    finished: new Date().toISOString(),
    machine: `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} logical cores (${os.availableParallelism()} available), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()} ${os.arch()}`,
    node: `${process.version}, V8 ${process.versions.v8}`,
    loadAtStart,
    loadAtEnd: loadAverage(),
    commit: gitCommit(),
    runs,
    charts,
  });
  if (reportPath === join(ROOT, 'BENCHMARKS.md')) {
    writeFileSync(reportPath, spliceReport(readFileSync(reportPath, 'utf8'), report));
  } else {
    writeFileSync(reportPath, `# Benchmarks\n\n${report}\n`);
  }
  const failed = runs.filter((r) => !r.ok);
  writeFileSync(
    join(options.out, 'summary.json'),
    `${JSON.stringify(
      {
        small: options.small,
        report: reportPath,
        charts: charts.map((c) => join(dirname(reportPath), c.path)),
        parts: runs.map((r) => ({
          name: r.part.name,
          ok: r.ok,
          status: r.status,
          ms: Math.round(r.ms),
          failedChecks: (r.result?.correctness ?? []).filter((c) => !c.ok).map((c) => c.check),
          checks: r.result?.correctness.length ?? 0,
          goals: (r.result?.goals ?? []).map((g) => ({ goal: g.goal, met: g.met })),
        })),
      },
      null,
      2,
    )}\n`,
  );
  console.log(`report: ${reportPath}; ${charts.length} charts in ${chartsDir}`);
  if (failed.length > 0) {
    console.log(
      `FAILED: ${failed.map((r) => `${r.part.name} (${r.status})`).join(', ')}; see ${join(options.out, 'logs')}`,
    );
    process.exitCode = 1;
  }
}

function gitCommit(): string {
  try {
    const head = readFileSync(join(ROOT, '.git', 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head.slice(0, 12);
    const ref = head.slice(5);
    const file = join(ROOT, '.git', ref);
    if (existsSync(file)) return readFileSync(file, 'utf8').trim().slice(0, 12);
    const packed = readFileSync(join(ROOT, '.git', 'packed-refs'), 'utf8');
    return (
      packed
        .split('\n')
        .find((line) => line.endsWith(` ${ref}`))
        ?.slice(0, 12) ?? 'unknown'
    );
  } catch {
    return 'unknown';
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
