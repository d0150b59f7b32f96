import type { CauseSlot } from './cause.ts';
import type { Lane, ReadyEntry } from './ready-set.ts';

/** The queue's state of one key. @internal */
export interface Entry<K> extends ReadyEntry {
  key: K;
  id: string;
  /** Neighbours in the list of processing entries. */
  prevProcessing: Entry<K> | undefined;
  nextProcessing: Entry<K> | undefined;
  partition: string;
  lane: Lane<ReadyEntry> | undefined;
  slot: number;
  priority: number;
  readyAt: number;
  processing: boolean;
  startedAt: number;
  dirty: boolean;
  dirtyPriority: number;
  waiting: boolean;
  waitAt: number;
  waitTicket: number;
  waitHold: boolean;
  waitPriority: number;
  /** The delayed add is a rate-limited retry and nothing else (see `WorkQueue.cancelRetry`). */
  waitRetry: boolean;
  /** Causes of the next run (the key is queued, or dirty while processing); allocated on first use. */
  causes: CauseSlot;
  /** Causes of the run in progress, taken at hand-out. */
  runCauses: CauseSlot;
  /** Causes of the delayed add the key waits on; they join `causes` when it comes due. */
  waitCauses: CauseSlot;
  /**
   * When the first object event of its next run was added (clock ms), or NO_EVENT. Set only while
   * the queue has an `onEventLatency` hook.
   */
  eventAt: number;
}

export interface Waiter<K> {
  settled: boolean;
  resolve(key: K | undefined): void;
  /** The signal that ends this wait when it aborts (the queue listens once per signal). */
  readonly signal: AbortSignal | undefined;
}

/** `Entry.eventAt` when no object event is pending. @internal */
export const NO_EVENT = Number.NEGATIVE_INFINITY;
