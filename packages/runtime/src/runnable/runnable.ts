import type { Fence } from '../backend/index.ts';
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
  /**
   * The fence of the term acquired last — the lock's name, this replica's identity and the term's
   * epoch — kept after the term ended, so that writes a stale leader still makes carry its old
   * epoch and a fencing backend refuses them. Undefined before the first acquisition.
   */
  fence?(): Fence | undefined;
  /**
   * While leading: rewrites the lock so that the term's epoch is at least `min`, and resolves with
   * the new fence. The manager calls it when a backend's fence mark for the lock is already at or
   * past the term's epoch because the lock's history restarted (a Lease deleted by hand).
   */
  raiseFencingToken?(min: number, signal?: AbortSignal): Promise<Fence>;
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
