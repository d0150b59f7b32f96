/**
 * Anything long-running: it does nothing until `start(signal)`, runs until `signal` aborts, then
 * stops and resolves. A rejection means the runnable failed.
 */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** True if it may only run while this process holds leadership. Default true for controllers. */
  readonly needLeaderElection?: boolean;
}
