import { accessSync, constants, globSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { TEST_GLOBS } from './scripts/test-globs.ts';
import { type TestKind, testKind } from './scripts/test-kinds.ts';
import DurationSequencer from './scripts/test-sequencer.ts';

const src = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

function writableDirectory(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
const root = src('./');

// Workspace packages resolve to their TypeScript sources, never to a stale dist/.
const workspace = [
  {
    find: /^@converge\/runtime\/testing\/backend-suite$/,
    replacement: src('./packages/runtime/src/testing/backend-suite/index.ts'),
  },
  {
    find: /^@converge\/runtime\/testing\/leader-lock-suite$/,
    replacement: src('./packages/runtime/src/leader-election/lock-suite.ts'),
  },
  {
    find: /^@converge\/runtime\/testing\/membership-suite$/,
    replacement: src('./packages/runtime/src/sharding/membership-suite.ts'),
  },
  { find: /^@converge\/runtime\/testing$/, replacement: src('./packages/runtime/src/testing/index.ts') },
  { find: /^@converge\/runtime$/, replacement: src('./packages/runtime/src/index.ts') },
  { find: /^@converge\/store$/, replacement: src('./packages/store/src/index.ts') },
  { find: /^@converge\/apiserver$/, replacement: src('./packages/apiserver/src/index.ts') },
  { find: /^@converge\/kube$/, replacement: src('./packages/kube/src/index.ts') },
  { find: /^@converge\/nats\/lease-key$/, replacement: src('./packages/nats/src/lease-key/index.ts') },
  { find: /^@converge\/nats$/, replacement: src('./packages/nats/src/index.ts') },
  {
    find: /^@converge\/metrics\/bind-address$/,
    replacement: src('./packages/metrics/src/bind-address/index.ts'),
  },
  { find: /^@converge\/metrics$/, replacement: src('./packages/metrics/src/index.ts') },
  { find: /^@converge\/tracing$/, replacement: src('./packages/tracing/src/index.ts') },
  { find: /^@converge\/simulation$/, replacement: src('./packages/simulation/src/index.ts') },
];

/** Every test file by what it needs (scripts/test-kinds.ts reads it from the code). */
const files: Record<TestKind, string[]> = { unit: [], server: [], process: [] };
for (const file of globSync(TEST_GLOBS, { cwd: root, exclude: (name) => name === 'node_modules' }))
  files[testKind(`${root}${file}`)].push(file);

// Every node process the tests start (converge, npm, tsc, the benchmarks, vitest's own workers)
// compiles much the same modules: one V8 compile cache for all of them (kept per Node version),
// so only the first start of each pays for compiling (and type-stripping) what it loads.
process.env.NODE_COMPILE_CACHE ??= src('./node_modules/.cache/node-compile-cache');

// Scratch files in memory where the machine has a tmpfs: the tests' data directories (an fsync per
// acknowledged write), npm installs of the packed tarballs and their projects are scratch, and on
// a virtual disk they cost ~10 s of a ~390 s run (kernel time, fsync waits). Nothing a test checks
// depends on the disk: a crash in a test is a SIGKILL, which the page cache survives either way.
// A TMPDIR of your own is kept.
if (process.env.TMPDIR === undefined && writableDirectory('/dev/shm')) process.env.TMPDIR = '/dev/shm';

export default defineConfig({
  resolve: {
    alias: workspace,
    conditions: ['@converge/source'],
  },
  test: {
    // Hang detectors, not bounds: the heaviest in-process tests (a type check of the typed client
    // against client-node, ~14 s quiet) took 20.5 s with a second suite beside this one.
    testTimeout: 60_000,
    // `CONVERGE_TEST_CPU=FILE`: each test file's CPU appended to FILE (`npm run test:cpu`).
    setupFiles: process.env.CONVERGE_TEST_CPU ? ['./test/cpu-usage.ts'] : [],
    hookTimeout: 60_000,
    // vitest's default on 2 cores is one worker, so every file waited for the one before it, and
    // most of the suite's wall time was child processes and sockets waited on with a core idle.
    maxWorkers: 3,
    // Longest first, with the durations of test/durations.json where vitest has none cached (a
    // fresh clone): see scripts/test-sequencer.ts.
    sequence: { sequencer: DurationSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: files.unit,
          // One module graph per worker instead of one per file: these files share no state but
          // what they build themselves (a store, a clock), and import the same packages.
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'server', include: files.server, isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: files.process,
          isolate: false,
          // A timeout here detects a hang, not slowness: real processes on a loaded 2-core machine
          // (a second suite beside this one) take several times their quiet figure. Files in this
          // project set no shorter timeout of their own, and their waits for a process or a
          // condition are hang detectors of 30 s or more (kubectl's --timeout 60 s).
          testTimeout: 180_000,
          hookTimeout: 180_000,
          globalSetup: ['./test/global-setup.ts'],
        },
      },
    ],
  },
});
