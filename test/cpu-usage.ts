/**
 * A setup file that records the CPU each test file costs, for `npm run test:cpu` (see
 * scripts/test-cpu.ts). vitest.config.ts adds it only when `CONVERGE_TEST_CPU` names the file to
 * append to; a normal run never loads it.
 *
 * Wall time says little on a 2-core machine running three workers: a file waiting for a core
 * looks as slow as a file using one. What the suite is short of is CPU, so each file gets a line
 * `{ file, selfSeconds, childrenSeconds, wallSeconds, processes }`:
 *
 * - self: the worker process's own CPU (`process.cpuUsage`) from the file's first hook to its
 *   last; every worker is a process of its own (the `forks` pool), and runs one file at a time;
 * - children: the CPU of the processes the file started and that have exited (converge, npm,
 *   tsc, kubectl, their own children as they were reaped): the `cutime` and `cstime` of
 *   `/proc/self/stat`, in the kernel's USER_HZ (100 a second). A process still running after the
 *   file's own `afterAll` is not counted, nor is what a shared server (NATS, PostgreSQL) spends;
 * - processes: how many child processes the file started, by name (`kubectl`, `npm`, and for
 *   node the script it ran: `converge.js`, `vitest.mjs`, …), counted where every asynchronous
 *   spawn goes (`ChildProcess.prototype.spawn`; `spawnSync` and `execSync` are not counted).
 *
 * Import time is outside the window (it is before the first hook); the main vitest process
 * (transforms, reporting) is in neither column. Off Linux the children column is 0.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { childrenSeconds, countSpawns } from '../scripts/test-cpu.ts';

const out = process.env.CONVERGE_TEST_CPU;

const spawns = countSpawns();
let file = '';
let self = process.cpuUsage();
let children = 0;
let started = 0;

// The second argument is the file's suite. vitest reads the first one's pattern for the fixtures
// it asks for, and refuses anything but a destructuring: this hook asks for none.
// biome-ignore lint/correctness/noEmptyPattern: see above.
beforeAll(({}, suite) => {
  file = suite.file.filepath;
  self = process.cpuUsage();
  children = childrenSeconds();
  spawns.clear();
  started = performance.now();
});

afterAll(() => {
  if (out === undefined || out === '') return;
  const used = process.cpuUsage(self);
  const line = {
    file,
    selfSeconds: (used.user + used.system) / 1e6,
    childrenSeconds: childrenSeconds() - children,
    wallSeconds: (performance.now() - started) / 1000,
    processes: Object.fromEntries(spawns),
  };
  appendFileSync(out, `${JSON.stringify(line)}\n`);
});
