/**
 * Anything long-running: it does nothing until `start(signal)`, runs until `signal` aborts, then
 * stops and resolves. A rejection means the runnable failed.
 */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** True if it may only run while this process holds leadership. Default true for controllers. */
  readonly needLeaderElection?: boolean;
}

/**
 * How a manager wins leadership. Implemented by the leader-election module (Lease and KV locks);
 * any object with `acquire` works.
 */
export interface LeaderElection {
  /** Resolves once leading; the returned signal aborts when leadership is lost. */
  acquire(signal: AbortSignal): Promise<AbortSignal>;
  /** Resolves when the election ended after its signal aborted (its lease released, if it does that). */
  stopped?(): Promise<void>;
}

/**
 * Resolves once `signal` aborts, at once if it already has: how a runnable waits for its stop.
 *
 * @example
 * async start(signal) { server.listen(); await whenAborted(signal); await server.close(); }
 */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
