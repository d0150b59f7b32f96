import type { Logger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { CacheClosedError, IndexFunctionError } from './errors.ts';
import type { IndexFunc } from './field-index.ts';
import { Store } from './store.ts';
import { SyncGate } from './sync-gate.ts';

/**
 * The state one writer and its readers share. Only the writer changes it; JavaScript runs one
 * thing at a time, so a reader always sees a write either whole or not at all.
 */
export class CacheCore<T extends KubeObject> {
  readonly name: string;
  readonly logger: Logger;
  readonly indexes = new Map<string, IndexFunc<T>>();
  readonly gate = new SyncGate();
  store: Store<T>;
  resourceVersion = '';
  closed = false;
  /** Counts the writes applied to {@link CacheCore.store} in place, so a stage can tell it is stale. */
  writes = 0;

  constructor(name: string, logger: Logger) {
    this.name = name;
    this.logger = logger;
    this.store = this.newStore();
  }

  /** Throws a {@link CacheClosedError} once the writer is closed. */
  assertOpen(what: string): void {
    if (this.closed) throw new CacheClosedError(this.name, `cannot ${what}`);
  }

  /** An empty store with the registered indexes. */
  newStore(): Store<T> {
    return new Store<T>(this.indexes, (index, key, reason, error) => {
      this.logger.error(
        {
          cache: this.name,
          index,
          key,
          err: new IndexFunctionError(this.name, index, reason, { cause: error }),
        },
        'Cache index function failed',
      );
    });
  }
}
