import { AsyncLocalStorage } from 'node:async_hooks';
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

const storage = new AsyncLocalStorage<WriterScope>();

/**
 * Runs `fn` (and everything it starts) as `scope`: objects a client writes meanwhile are recorded
 * in the scope's ledger as written by its writer. A controller runs each reconcile so.
 */
export function runAsWriter<T>(scope: WriterScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** Records `object`, just written, in the ledger of the reconcile running now, if any. @internal */
export function recordWrite(object: unknown): void {
  const scope = storage.getStore();
  if (scope !== undefined) scope.ledger.record(object, scope.writer());
}
