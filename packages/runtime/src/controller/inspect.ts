import type { CauseSet, WorkQueueKeyInfo } from '../workqueue/index.ts';
import type { HotLoopInfo } from './hot-loop.ts';

/**
 * One request of a controller as `inspect` sees it: what its queue knows (see
 * `WorkQueueKeyInfo`), the reconcile running it, and the last error of the run that put it into
 * backoff.
 *
 * `state` sums it up: `running` (a reconcile runs it now), `backoff` (it waits to be retried after
 * a failure or a `requeue()`), `waiting` (it waits on a `requeueAfter` or another delayed add),
 * `queued` (ready, waiting for a worker).
 */
export interface ControllerKeyInfo<R> extends WorkQueueKeyInfo<R> {
  readonly state: 'running' | 'backoff' | 'waiting' | 'queued';
  /** The running reconcile's id (as in its log lines), while running. */
  readonly reconcileId?: string;
  /** The error of its last failed run, while it has not succeeded since. */
  readonly lastError?: Error;
  /** When that run finished (clock milliseconds). */
  readonly lastErrorAt?: number;
  /** Set while the key is flagged as a hot loop (see `HotLoopOptions` for the rule). */
  readonly hotLoop?: HotLoopInfo;
  /** With sharding: whether this replica's shard member may run the key now. */
  readonly owned?: boolean;
}

/** The last failure of a request that is being retried. @internal */
export interface LastError {
  readonly error: Error;
  readonly at: number;
}

/** A queue key's info, with what the controller knows. @internal */
export function keyInfo<R>(
  info: WorkQueueKeyInfo<R>,
  reconcileId: string | undefined,
  last: LastError | undefined,
  hotLoop?: HotLoopInfo,
  owned?: boolean,
): ControllerKeyInfo<R> {
  const state = info.processing
    ? 'running'
    : info.waitingUntil !== undefined
      ? isBackoff(info.causes) || last !== undefined
        ? 'backoff'
        : 'waiting'
      : 'queued';
  return {
    ...info,
    state,
    ...(reconcileId === undefined ? {} : { reconcileId }),
    ...(last === undefined ? {} : { lastError: last.error, lastErrorAt: last.at }),
    ...(hotLoop === undefined ? {} : { hotLoop }),
    ...(owned === undefined ? {} : { owned }),
  };
}

function isBackoff(set: CauseSet): boolean {
  return set.causes.some((c) => c.type === 'retry' || c.type === 'requeue');
}
