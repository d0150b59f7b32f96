import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, Logger } from '@converge/runtime';
import { RequestFaults } from './fault-requests.ts';
import {
  checkInteger,
  type DelayFault,
  delaySpec,
  type FailRatioFault,
  type FaultRuleInfo,
  type FaultStatus,
  failRatioSpec,
  MAX_DELAY_MS,
  type StallWatchesFault,
  stallSpec,
} from './fault-rules.ts';
import { WatchStaller } from './fault-stall.ts';
import type { RequestTarget } from './request-info.ts';
import type { RequestUrl } from './request-url.ts';
import type { WatchTracker } from './watch-tracker.ts';

/** An active rule; `remove()` ends it (false if it had ended already). */
export interface FaultHandle {
  readonly id: string;
  remove(): boolean;
}

/** A stall rule; `release()` (same as `remove()`) lets its held watches go on. */
export interface StallHandle extends FaultHandle {
  release(): boolean;
}

/** Options of `faults.restart()`. */
export interface RestartOptions {
  /** How long the port stays closed (connections refused) before listening again, on the server clock. Default 0. */
  readonly downMs?: number;
}

/** How many faults were injected since the server was created. */
export interface FaultCounters {
  /** Requests held back by delay rules. */
  readonly delayed: number;
  /** Requests answered with an injected error, by HTTP status. */
  readonly failed: Readonly<Record<FaultStatus, number>>;
  /** Of those, writes applied before their error was answered (`phase: 'after'`). */
  readonly failedAfterApply: number;
  /** Times a watch was held by a stall rule. */
  readonly stalledWatches: number;
  /** Watches ended by `dropWatches()`. */
  readonly droppedWatches: number;
  /** Completed `restart()`s. */
  readonly restarts: number;
}

/**
 * Fault injection for tests and chaos runs, as `server.faults` and over `/converge/faults`. Rules
 * apply to every request from then on and stay until removed (or until `times` injections); the
 * admin endpoint itself is never faulted. Randomness comes from the server clock's `random()` and
 * delays from its timers, so a `VirtualClock` makes every run repeatable.
 *
 * @example
 * const flaky = server.faults.failRatio({
 *   pathPattern: '/api/v1/namespaces/default/configmaps/**',
 *   methods: ['PUT'],
 *   ratio: 0.2,
 *   status: 409,
 * });
 * const stall = server.faults.stallWatches({ pathPattern: /configmaps/ });
 * // … the controller under test runs …
 * stall.release();
 * flaky.remove();
 * await server.faults.restart(); // state kept, connections lost
 */
export interface FaultInjector {
  /** Ends every open watch now with a clean EOF (clients re-watch from their last resourceVersion); returns how many. */
  dropWatches(): number;
  /** Holds matching requests for `ms` before serving them. */
  delay(options: DelayFault): FaultHandle;
  /** Answers a `ratio` of matching requests with a `status` error instead of (or after) serving them. */
  failRatio(options: FailRatioFault): FaultHandle;
  /** Open and new matching watches stop sending events, without closing, until `release()`. */
  stallWatches(options?: StallWatchesFault): StallHandle;
  /**
   * Keeps the store, cuts every connection and watch (like a crash: nothing is drained), keeps the
   * port closed for `downMs`, and listens again on the same port; clients reconnect. Calls made
   * during a restart share it. Rejects with `CONVERGE_ERR_APISERVER_FAULT_RESTART_FAILED` when the
   * server is not listening, is closed meanwhile, or cannot bind again.
   */
  restart(options?: RestartOptions): Promise<void>;
  /** Removes the rule with this id; false if there is none. */
  remove(id: string): boolean;
  /** Removes every rule (releasing stalled watches); returns how many there were. */
  clear(): number;
  /** The active rules, oldest first. */
  list(): FaultRuleInfo[];
  /** A snapshot of the counters. */
  readonly counters: FaultCounters;
  /** How many watches a stall rule holds right now. */
  readonly heldWatches: number;
}

/** What the injector needs from its server. */
export interface FaultHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly watches: WatchTracker;
  /** Cuts connections and watches, waits `downMs`, listens again on the same port. */
  restart(downMs: number): Promise<void>;
}

/** The sequence number in a rule id (`fail-3` → 3), for listing rules oldest first. */
function seqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf('-') + 1));
}

/** The server's {@link FaultInjector}, with the hooks the request handler and watches call. */
export class ServerFaultInjector implements FaultInjector {
  readonly #host: FaultHost;
  readonly #requests: RequestFaults;
  readonly #staller: WatchStaller;
  readonly #counters = {
    delayed: 0,
    failed: { 409: 0, 410: 0, 429: 0, 500: 0, 503: 0 } as Record<FaultStatus, number>,
    failedAfterApply: 0,
    stalledWatches: 0,
    droppedWatches: 0,
    restarts: 0,
  };
  #seq = 0;
  #restarting: Promise<void> | undefined;

  constructor(host: FaultHost) {
    this.#host = host;
    this.#requests = new RequestFaults(host.clock, host.logger, this.#counters);
    this.#staller = new WatchStaller(() => this.#counters.stalledWatches++);
  }

  dropWatches(): number {
    const dropped = this.#host.watches.dropAll();
    this.#counters.droppedWatches += dropped;
    if (dropped > 0) this.#host.logger.info({ watches: dropped }, 'Fault injection dropped every watch');
    return dropped;
  }

  delay(options: DelayFault): FaultHandle {
    const spec = delaySpec(options);
    const id = `delay-${++this.#seq}`;
    this.#requests.addDelay(id, spec);
    return this.#added(id, 'delay');
  }

  failRatio(options: FailRatioFault): FaultHandle {
    const spec = failRatioSpec(options);
    const id = `fail-${++this.#seq}`;
    this.#requests.addFailure(id, spec);
    return this.#added(id, 'failRatio');
  }

  stallWatches(options: StallWatchesFault = {}): StallHandle {
    const { path } = stallSpec(options);
    const id = `stall-${++this.#seq}`;
    this.#staller.add({ id, path, injected: 0 });
    const handle = this.#added(id, 'stallWatches');
    return { ...handle, release: handle.remove };
  }

  restart(options: RestartOptions = {}): Promise<void> {
    let downMs: number;
    try {
      downMs = checkInteger('downMs', options.downMs ?? 0, 0, MAX_DELAY_MS);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    // Calls during a restart share it (and its downMs).
    if (this.#restarting === undefined) {
      this.#host.logger.info({ downMs }, 'Fault injection restarts the API server');
      this.#restarting = this.#host
        .restart(downMs)
        .then(() => {
          this.#counters.restarts++;
        })
        .finally(() => {
          this.#restarting = undefined;
        });
    }
    return this.#restarting;
  }

  remove(id: string): boolean {
    const removed = this.#requests.remove(id) || this.#staller.remove(id);
    if (removed) this.#host.logger.info({ id }, 'Fault rule removed');
    return removed;
  }

  clear(): number {
    const ids = this.list().map((rule) => rule.id);
    for (const id of ids) this.remove(id);
    return ids.length;
  }

  list(): FaultRuleInfo[] {
    const stalls: FaultRuleInfo[] = this.#staller.rules.map(({ id, path, injected }) => ({
      id,
      type: 'stallWatches',
      ...path.info,
      injected,
    }));
    return [...this.#requests.infos(), ...stalls].sort((a, b) => seqOf(a.id) - seqOf(b.id));
  }

  get counters(): FaultCounters {
    return { ...this.#counters, failed: { ...this.#counters.failed } };
  }

  get heldWatches(): number {
    return this.#staller.held;
  }

  /**
   * Hook of the request handler: serves the request through `next` (which writes to the response
   * it is given) with the active delay and failRatio rules applied.
   */
  around(
    req: IncomingMessage,
    res: ServerResponse,
    url: RequestUrl,
    target: RequestTarget,
    next: (res: ServerResponse) => Promise<void>,
  ): Promise<void> {
    return this.#requests.around(req, res, url, target, next);
  }

  /**
   * Hook of the watch handler, before each event: undefined when it may be sent now, else a
   * promise that resolves with `true` once no stall rule holds the watch, `false` if `signal` aborts.
   */
  holdWatch(path: string, signal: AbortSignal): Promise<boolean> | undefined {
    return this.#staller.hold(path, signal);
  }

  #added(id: string, type: FaultRuleInfo['type']): FaultHandle {
    this.#host.logger.info({ id, type }, 'Fault rule added');
    return { id, remove: () => this.remove(id) };
  }
}
