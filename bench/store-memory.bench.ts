/**
 * Store memory benchmark: a write storm of large objects against the store in process, with a
 * watcher that keeps up and one that never reads, reporting peak heap against the configured
 * history bound (`maxHistoryBytes`). Run with `npm run bench:store-memory`.
 *
 * The storm is issue 11's: one large ConfigMap and a long run of tiny changes to it. Each write
 * brings a freshly decoded object (as the embedded API server hands the store a body it parsed, or
 * a patch result it cloned), so no two versions share their strings: each retained version costs
 * its full size, the worst case for the history.
 *
 * Two runs:
 * 1. unbounded — `maxHistoryBytes` set out of reach, only the first BENCH_UNBOUNDED_WRITES writes
 *    (the whole storm would run the process out of memory, which is the bug this bound fixes);
 * 2. bounded — the default bound (or BENCH_BOUND_MIB), the whole storm.
 *
 * Environment knobs:
 * - BENCH_OBJECT_KB: size of the object's data in KiB (default 2 900, issue 11's ConfigMap);
 * - BENCH_WRITES: writes in the bounded storm (default 1 500);
 * - BENCH_UNBOUNDED_WRITES: writes in the unbounded run (default 150);
 * - BENCH_BOUND_MIB: maxHistoryBytes in MiB (default: the store's default, 64).
 *
 * Exit status: 1 when a correctness check fails (the keeping-up watcher missed or reordered an
 * event, the lagging watcher was not expired, the store's accounting went over its bound), or the
 * live heap growth in the bounded run exceeds twice the bound; else 0.
 */
import v8 from 'node:v8';
import { configMapType as CM, ExpiredError, type KubeObject, type WatchEvent } from '@converge/runtime';
import { DEFAULT_MAX_HISTORY_BYTES, Store } from '../packages/store/src/index.ts';
import { collectGarbage, fmt, positiveInt } from './harness.ts';

const OBJECT_KB = positiveInt('BENCH_OBJECT_KB', 2_900);
const WRITES = positiveInt('BENCH_WRITES', 1_500);
const UNBOUNDED_WRITES = positiveInt('BENCH_UNBOUNDED_WRITES', 150);
const BOUND = positiveInt('BENCH_BOUND_MIB', DEFAULT_MAX_HISTORY_BYTES / 2 ** 20) * 2 ** 20;
/** Heap samples after a forced GC, every this many writes. */
const GC_EVERY = 50;

const MiB = (bytes: number): string => `${fmt(bytes / 2 ** 20)} MiB`;
const failures: string[] = [];

/** The object's JSON with a `counter` placeholder: 64 values of OBJECT_KB / 64 KiB each. */
function template(): string {
  const data: Record<string, string> = { counter: '@COUNTER@' };
  const valueChars = Math.ceil((OBJECT_KB * 1024) / 64);
  for (let i = 0; i < 64; i++) data[`k${i}`] = String.fromCharCode(97 + (i % 26)).repeat(valueChars);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big', namespace: 'default' },
    data,
  });
}

function heapUsed(): number {
  return v8.getHeapStatistics().used_heap_size;
}

interface RunResult {
  readonly baseline: number;
  readonly peakHeap: number;
  readonly peakLiveHeap: number;
  readonly peakHistoryBytes: number;
  readonly peakHistoryEvents: number;
  readonly seen: number;
  readonly lagging: string;
  readonly ms: number;
}

async function run(label: string, writes: number, maxHistoryBytes: number): Promise<RunResult> {
  const body = template();
  const store = new Store({ types: [CM], maxHistoryBytes, maxWatcherBufferBytes: Number.MAX_SAFE_INTEGER });
  let current = await store.create<KubeObject>(CM, JSON.parse(body.replace('@COUNTER@', 'start')));
  const from = current.metadata.resourceVersion as string;
  const keeper = store.watch(CM, { resourceVersion: from })[Symbol.asyncIterator]();
  const lagging = store.watch(CM, { resourceVersion: from })[Symbol.asyncIterator]();
  collectGarbage(2);
  const baseline = heapUsed();
  let peakHeap = baseline;
  let peakLiveHeap = baseline;
  let peakHistoryBytes = 0;
  let peakHistoryEvents = 0;
  let seen = 0;
  const started = performance.now();
  for (let i = 0; i < writes; i++) {
    const next = JSON.parse(body.replace('@COUNTER@', String(i))) as KubeObject;
    const written: KubeObject = await store.update(CM, {
      ...next,
      metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion as string },
    });
    current = written;
    const result: IteratorResult<WatchEvent> = await keeper.next();
    const event = result.value as WatchEvent | undefined;
    if (
      result.done === true ||
      event?.type !== 'MODIFIED' ||
      event.object.metadata.resourceVersion !== written.metadata.resourceVersion
    ) {
      failures.push(`${label}: the watcher that keeps up missed write ${i}`);
      break;
    }
    seen++;
    const history = store.history();
    peakHistoryBytes = Math.max(peakHistoryBytes, history.bytes);
    peakHistoryEvents = Math.max(peakHistoryEvents, history.events);
    peakHeap = Math.max(peakHeap, heapUsed());
    if ((i + 1) % GC_EVERY === 0) {
      collectGarbage(1);
      peakLiveHeap = Math.max(peakLiveHeap, heapUsed());
    }
  }
  const ms = performance.now() - started;
  let lag = 'read every event';
  try {
    await lagging.next();
  } catch (error) {
    lag = error instanceof ExpiredError ? `410 (${error.message})` : `error ${(error as Error).message}`;
  }
  await keeper.return?.();
  await store.close();
  return { baseline, peakHeap, peakLiveHeap, peakHistoryBytes, peakHistoryEvents, seen, lagging: lag, ms };
}

function report(label: string, writes: number, bound: number | undefined, r: RunResult): void {
  console.log(
    `\n${label}: ${writes} writes of a ${fmt(OBJECT_KB / 1024, 2)} MiB ConfigMap in ${fmt(r.ms / 1000, 2)} s`,
  );
  console.log(`  history bound (maxHistoryBytes):   ${bound === undefined ? 'none' : MiB(bound)}`);
  console.log(`  heap after create (GC'd):          ${MiB(r.baseline)}`);
  console.log(
    `  peak live heap (GC every ${GC_EVERY}):      ${MiB(r.peakLiveHeap)} (+${MiB(r.peakLiveHeap - r.baseline)})`,
  );
  console.log(`  peak heap used (any write):        ${MiB(r.peakHeap)} (+${MiB(r.peakHeap - r.baseline)})`);
  console.log(
    `  peak retained history (accounted): ${MiB(r.peakHistoryBytes)} in at most ${r.peakHistoryEvents} events`,
  );
  console.log(`  watcher keeping up saw:            ${r.seen} of ${writes} events`);
  console.log(`  watcher never reading:             ${r.lagging}`);
}

async function main(): Promise<void> {
  console.log(`store memory benchmark — node ${process.version}`);
  const unbounded = await run('unbounded', UNBOUNDED_WRITES, Number.MAX_SAFE_INTEGER);
  report('unbounded (the old behaviour, cut short)', UNBOUNDED_WRITES, undefined, unbounded);
  const perWrite = (unbounded.peakLiveHeap - unbounded.baseline) / UNBOUNDED_WRITES;
  console.log(
    `  live heap per retained version:    ${MiB(perWrite)}; ${WRITES} writes would hold ~${MiB(perWrite * WRITES)}`,
  );
  collectGarbage(2);

  const bounded = await run('bounded', WRITES, BOUND);
  report('bounded', WRITES, BOUND, bounded);
  const growth = bounded.peakLiveHeap - bounded.baseline;
  console.log(`  live heap growth / bound:          ${fmt(growth / BOUND, 2)}`);

  if (bounded.seen !== WRITES)
    failures.push(`bounded: the watcher that keeps up saw ${bounded.seen} of ${WRITES}`);
  if (!bounded.lagging.startsWith('410'))
    failures.push(`bounded: the lagging watcher was not expired (${bounded.lagging})`);
  if (bounded.peakHistoryBytes > BOUND) failures.push('bounded: the accounted history went over its bound');
  if (growth > 2 * BOUND) failures.push(`bounded: live heap grew ${MiB(growth)}, more than twice the bound`);
  console.log(failures.length === 0 ? '\nPASS: every check holds' : `\nFAIL:\n  ${failures.join('\n  ')}`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

await main();
