import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../clock/index.ts';
import type { CauseWriter } from '../workqueue/index.ts';
import type { WriteLedger } from './write-ledger.ts';

/**
 * Who writes, while a reconcile runs: the ledger its writes go to and the writer they name. The
 * writer is made on the first write (most reconciles write nothing).
 */
export interface WriterScope {
  readonly ledger: WriteLedger;
  writer(): CauseWriter;
}

/**
 * The scope of the run a controller's worker is in now: one cell per worker, entered once, its
 * `scope` set for each run and cleared after it (an AsyncLocalStorage frame per run cost ~0.8 µs,
 * a tenth of the cost of a reconcile that does no I/O, in `npm run bench:cause-chains`). What a run
 * leaves running after it returned (a timer, a chain it did not await) and that writes later is
 * recorded as the worker's run at that time, or as no run: a reconcile's work ends when it
 * returns. A run that is abandoned (its timeout and grace passed) keeps the cell: its late writes
 * stay its own. @internal
 */
export class WriterCell {
  scope: WriterScope | undefined = undefined;
  /**
   * Kept by a run that was abandoned (it may still write, as itself): the worker's later runs
   * enter frames of their own.
   */
  retired = false;
}

const storage = new AsyncLocalStorage<WriterCell>();

/**
 * Runs `fn` (and everything it starts) as `scope`: objects a client writes meanwhile are recorded
 * in the scope's ledger as written by its writer.
 */
export function runAsWriter<T>(scope: WriterScope, fn: () => T): T {
  const cell = new WriterCell();
  cell.scope = scope;
  return storage.run(cell, fn);
}

/**
 * Runs `fn` (a controller's worker loop, and everything it starts) in `cell`: writes made while
 * `cell.scope` is set are recorded as that scope's. @internal
 */
export function runInWriterCell<T>(cell: WriterCell, fn: () => T): T {
  return storage.run(cell, fn);
}

/**
 * The scope writes are made in now, if any. A client reads it when a write is issued (not when
 * its answer arrives): a write a reconcile starts and does not await is still its own. @internal
 */
export function currentWriter(): WriterScope | undefined {
  return storage.getStore()?.scope;
}

/**
 * Records `object`, just written, in the ledger of `scope` (a run's, from {@link currentWriter}).
 * `now`: `clock` read just before, used when it is the ledger's clock. @internal
 */
export function recordWrite(
  object: unknown,
  scope: WriterScope | undefined,
  clock?: Clock,
  now?: number,
): void {
  if (scope === undefined) return;
  const ledger = scope.ledger;
  if (now !== undefined && clock === ledger.clock) ledger.record(object, scope.writer(), now);
  else ledger.record(object, scope.writer());
}
