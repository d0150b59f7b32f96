import type { IncomingMessage } from 'node:http';
import type { PathMatcher } from './fault-rules.ts';
import { parseRequestUrl } from './request-url.ts';

/** One stall rule. */
export interface StallRule {
  readonly id: string;
  readonly path: PathMatcher;
  /** How many times a watch was held by this rule. */
  injected: number;
}

interface Waiter {
  readonly path: string;
  /** Lets the watch go: `true` when released, `false` when it ended meanwhile. */
  readonly release: (released: boolean) => void;
}

/**
 * Holds the events of stalled watches: a watch asks before each event whether it may send it;
 * while a stall rule matches its path it waits — the connection stays open, nothing is written, the
 * store queues the events (or ends a watcher that falls too far behind, as it would for a slow
 * client). Removing the last matching rule lets every held watch go on with the events in order;
 * the watch ending (client gone, watches dropped) lets it go at once.
 */
export class WatchStaller {
  readonly #rules = new Map<string, StallRule>();
  readonly #waiters = new Set<Waiter>();
  readonly #onHold: (rule: StallRule) => void;

  /** `onHold` is told each time a watch starts waiting (for counters). */
  constructor(onHold: (rule: StallRule) => void) {
    this.#onHold = onHold;
  }

  /** How many watches are held right now. */
  get held(): number {
    return this.#waiters.size;
  }

  /** The active stall rules. */
  get rules(): readonly StallRule[] {
    return [...this.#rules.values()];
  }

  add(rule: StallRule): void {
    this.#rules.set(rule.id, rule);
  }

  /** Removes a rule and lets go the watches no other rule holds; false if it was not active. */
  remove(id: string): boolean {
    if (!this.#rules.delete(id)) return false;
    for (const waiter of [...this.#waiters]) {
      if (this.#matching(waiter.path) === undefined) waiter.release(true);
    }
    return true;
  }

  /**
   * Undefined when a watch on `path` may send now (the common case: no promise, no tick); else a
   * promise that resolves with `true` when no rule holds it any more, `false` when `signal` aborts.
   */
  hold(path: string, signal: AbortSignal): Promise<boolean> | undefined {
    if (this.#rules.size === 0 || signal.aborted) return undefined;
    const rule = this.#matching(path);
    if (rule === undefined) return undefined;
    rule.injected++;
    this.#onHold(rule);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => waiter.release(false);
      const waiter: Waiter = {
        path,
        release: (released) => {
          signal.removeEventListener('abort', onAbort);
          this.#waiters.delete(waiter);
          resolve(released);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  #matching(path: string): StallRule | undefined {
    for (const rule of this.#rules.values()) if (rule.path.test(path)) return rule;
    return undefined;
  }
}

/** Asks before each event whether a watch may send it: undefined (send now) or a wait for `true` (go on) / `false` (the watch ended). */
export type StallHook = () => Promise<boolean> | undefined;

/**
 * The stall hook of one watch, when its server injects faults. `ServerContext` (context.ts) has no
 * `faults` member; the request handler's context, which is the object that reaches the watch
 * handler, carries it — so this is a capability probe, and a server without it never stalls.
 */
export function stallHook(server: object, req: IncomingMessage, signal: AbortSignal): StallHook | undefined {
  const faults = (
    server as { faults?: { holdWatch(path: string, signal: AbortSignal): Promise<boolean> | undefined } }
  ).faults;
  if (faults === undefined) return undefined;
  const path = parseRequestUrl(req.url).pathname;
  return () => faults.holdWatch(path, signal);
}
