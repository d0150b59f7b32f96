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
}

export interface Waiter<K> {
  settled: boolean;
  resolve(key: K | undefined): void;
  cleanup(): void;
}
