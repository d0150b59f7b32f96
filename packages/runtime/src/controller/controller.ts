import { runAsWriter, runInWriterCell, WriteLedger, WriterCell, type WriterScope } from '../client/index.ts';
import { type Clock, realClock, settlesWithin, type Timer } from '../clock/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { RequestQueue } from '../handler/index.ts';
import { type LogFields, type Logger, noopLogger } from '../log/index.ts';
import { keyToString, rememberLastKey } from '../object/index.ts';
import { durationMs, integer, nonEmptyString, syncProgress, syncTimeoutMs } from '../options.ts';
import { classify, type Outcome, type Reconciler, toError } from '../reconcile/index.ts';
import { type Runnable, whenAborted } from '../runnable/index.ts';
import type { Source } from '../source/index.ts';
import {
  type Cause,
  type CauseSet,
  causeChain,
  defaultControllerRateLimiter,
  formatCause,
  joinHooks,
  type RetryPolicy,
  unlimitedRetries,
  WorkQueue,
  type WorkQueueMetrics,
} from '../workqueue/index.ts';
import { ShutdownTimeoutError, SourceFailedError, SourceSyncError } from './errors.ts';
import { HotLoopDetector, type HotLoopInfo, type HotLoopVerdict, hotLoopSettings } from './hot-loop.ts';
import { type ControllerKeyInfo, keyInfo, type LastError } from './inspect.ts';
import {
  type Finished,
  intercept,
  joinInterceptors,
  type ReconcileInterceptor,
  reconcileInfo,
} from './intercept.ts';
import { type Invocation, type InvokeOutcome, invoke, StopWatch } from './invoke.ts';
import type { ControllerMetrics, ControllerOptions, ReconcileResultLabel } from './options.ts';
import { ReconcileWriter } from './reconcile-writer.ts';
import { ShardedRequests } from './sharding.ts';

/** Reconciles a worker runs back to back before it lets the event loop run. */
const YIELD_EVERY = 64;

/** The cause of a `requeue()` or `requeueNow()` result. */
const REQUEUE_CAUSE: Cause = Object.freeze({ type: 'requeue' });

/** A macrotask boundary (not a timer: it takes no time on any clock). */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The states of a controller, in order. */
export type ControllerState = 'new' | 'syncing' | 'running' | 'stopping' | 'stopped';

/**
 * A run under way: what the controller needs of it from its start to its end, and its links in
 * the controller's {@link RunningList}.
 */
class Running<R> {
  readonly request: R;
  readonly id: string;
  readonly invocation: Invocation;
  /** With sharding: aborts this reconcile's signal when its key moves to another member. */
  readonly abort: AbortController | undefined;
  readonly logger: Logger;
  readonly started: number;
  readonly causes: CauseSet;
  /** The worker's writer cell, when this run named itself in it. */
  readonly cell: WriterCell | undefined;
  prev: Running<R> | undefined;
  next: Running<R> | undefined;
  listed = false;

  constructor(
    request: R,
    id: string,
    invocation: Invocation,
    abort: AbortController | undefined,
    logger: Logger,
    started: number,
    causes: CauseSet,
    cell: WriterCell | undefined,
  ) {
    this.request = request;
    this.id = id;
    this.invocation = invocation;
    this.abort = abort;
    this.logger = logger;
    this.started = started;
    this.causes = causes;
    this.cell = cell;
  }

  get settled(): Promise<unknown> {
    return this.invocation.settled;
  }
}

/** The runs under way, linked through themselves: no Set table rebuilt as runs come and go. */
class RunningList<R> implements Iterable<Running<R>> {
  #head: Running<R> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(run: Running<R>): void {
    run.listed = true;
    run.next = this.#head;
    if (this.#head !== undefined) this.#head.prev = run;
    this.#head = run;
    this.#size++;
  }

  delete(run: Running<R>): void {
    if (!run.listed) return;
    run.listed = false;
    if (run.prev === undefined) this.#head = run.next;
    else run.prev.next = run.next;
    if (run.next !== undefined) run.next.prev = run.prev;
    run.prev = undefined;
    run.next = undefined;
    this.#size--;
  }

  *[Symbol.iterator](): Iterator<Running<R>> {
    for (let run = this.#head; run !== undefined; ) {
      const next = run.next;
      yield run;
      run = next;
    }
  }
}

/** The queue of a {@link Controller}: its add side and what it holds. */
export interface ControllerQueue<R> extends RequestQueue<R> {
  /** True while the request is queued, processing or waiting (a delayed add or a retry). */
  has(request: R): boolean;
  /** Requests queued and not yet handed to a worker (processing and waiting ones not counted). */
  readonly length: number;
  /** Requests a worker is reconciling now. */
  readonly processingCount: number;
  /** Requests waiting for a delayed add or a retry to come due. */
  readonly waitingCount: number;
}

/**
 * Sources → handlers → predicates → queue → workers → reconciler.
 *
 * `start(signal)` starts the sources (their events are queued at once), waits until every source
 * has synced, then starts `maxConcurrentReconciles` workers. A request is never reconciled twice at
 * once. When `signal` aborts: intake, timers and sources stop; queued requests are not started;
 * in-flight reconciles see their signal abort at once; `start` resolves when they finish, or rejects
 * with a {@link ShutdownTimeoutError} naming them after `shutdownTimeoutMs`.
 *
 * Every reconcile gets the causes of its request (`context.causes`: what its sources and requeues
 * said when they enqueued it since its previous start). A run that failed or asked for
 * `requeue()` hands its causes on to the next run, after which come `retry` or `requeue`; a
 * `requeueAfter` run starts afresh with `requeue-after`. The reconcile's logger carries them as
 * short texts (`causes`, and `droppedCauses` when some were let go), a debug line 'Reconcile
 * finished' gives result and duration (and `requeueAfterMs`), and the metric hook `onReconcile`
 * receives them. A failed run logs 'Reconciler error' at error level with the error as `err`; a
 * request the retry policy gives up on logs 'Dropping request after retries' at error level too.
 * Reconcile lines carry `controller`, `reconcileId`, `namespace` and `name` (or `request`), and
 * `kind` in a controller with `kindOf`.
 *
 * @example
 * const controller = new Controller({
 *   name: 'websites',
 *   reconciler: async (key, { signal }) => { await converge(key, signal); return done(); },
 *   sources: [channel],
 * });
 * await controller.start(AbortSignal.timeout(60_000));
 */
export class Controller<R> implements Runnable {
  readonly name: string;
  readonly needLeaderElection: boolean;
  /** Whether it reconciles only what its shard member may run (the `sharding` option). */
  readonly sharded: boolean;
  readonly #reconciler: Reconciler<R>;
  readonly #sources: Source<R>[] = [];
  readonly #workers: number;
  readonly #keyOf: (request: R) => string;
  readonly #retryPolicy: RetryPolicy;
  readonly #reconcileTimeoutMs: number;
  readonly #abandonGraceMs: number;
  readonly #shutdownTimeoutMs: number;
  readonly #syncTimeoutMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #metrics: ControllerMetrics | undefined;
  #interceptor: ReconcileInterceptor | undefined;
  readonly #onError: ((error: Error, request: R) => void) | undefined;
  readonly #kindOf: ((request: R) => string) | undefined;
  readonly #queue: WorkQueue<R>;
  readonly #running = new RunningList<R>();
  /** The last error of each request being retried, by key; emptied as they succeed or are let go. */
  readonly #lastErrors = new Map<string, LastError>();
  readonly #stop = new AbortController();
  /** The stop and the timeout of every run under way, watched with one listener and one timer. */
  readonly #stops: StopWatch;
  #state: ControllerState = 'new';
  #failure: Error | undefined;
  #sourceRuns: Promise<void>[] = [];
  /** While syncing: the labels of the sources not synced yet. */
  #unsynced: ReadonlySet<string> | undefined;
  #workerRuns: Promise<void>[] = [];
  #seq = 0;
  /** With cause chains: where writes are recorded and echoes looked up. */
  readonly #ledger: WriteLedger | undefined;
  readonly #hotLoops: HotLoopDetector | undefined;
  readonly #sharding: ShardedRequests<R> | undefined;

  constructor(options: ControllerOptions<R>) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    this.name = nonEmptyString('name', options.name, '');
    if (this.name === '') throw new OptionsError('name', options.name, 'a non-empty string');
    const r = options.reconciler as unknown;
    if (typeof r === 'function')
      this.#reconciler = { reconcile: options.reconciler as Reconciler<R>['reconcile'] };
    else if (typeof r === 'object' && r !== null && typeof (r as Reconciler<R>).reconcile === 'function') {
      this.#reconciler = r as Reconciler<R>;
    } else throw new OptionsError('reconciler', r, 'a function or an object with a reconcile method');
    this.#workers = integer('maxConcurrentReconciles', options.maxConcurrentReconciles, 1, 1);
    this.#reconcileTimeoutMs = durationMs('reconcileTimeoutMs', options.reconcileTimeoutMs, 600_000);
    this.#abandonGraceMs = durationMs('abandonGraceMs', options.abandonGraceMs, 5_000);
    this.#shutdownTimeoutMs = durationMs('shutdownTimeoutMs', options.shutdownTimeoutMs, 30_000);
    this.#syncTimeoutMs = syncTimeoutMs('syncTimeoutMs', options.syncTimeoutMs, 120_000);
    this.#retryPolicy = options.retryPolicy ?? unlimitedRetries;
    if (typeof this.#retryPolicy.decide !== 'function') {
      throw new OptionsError('retryPolicy', options.retryPolicy, 'a RetryPolicy');
    }
    // A sharded controller runs on every replica: its shard member decides what it reconciles.
    this.needLeaderElection = options.needLeaderElection ?? options.sharding === undefined;
    this.sharded = options.sharding !== undefined;
    this.#clock = options.clock ?? realClock;
    this.#stops = new StopWatch(this.#stop.signal, {
      clock: this.#clock,
      timeoutMs: this.#reconcileTimeoutMs,
    });
    this.#logger = (options.logger ?? noopLogger).child({ controller: this.name });
    this.#metrics = options.metrics;
    this.#onError = options.onError;
    this.#kindOf = options.kindOf;
    this.#keyOf = rememberLastKey(options.keyOf ?? defaultRequestKey);
    this.#queue = new WorkQueue<R>({
      name: this.name,
      keyOf: this.#keyOf,
      clock: this.#clock,
      ...(options.partitionOf === undefined ? {} : { partitionOf: options.partitionOf }),
      ...(options.partitionLimits === undefined ? {} : { partitionLimits: options.partitionLimits }),
      // controller-runtime's default: per-request exponential backoff, max-of an overall bucket.
      rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter(this.#clock),
      ...(options.hold === undefined ? {} : { hold: options.hold }),
      ...(options.coalesceWhileProcessing === undefined
        ? {}
        : { coalesceWhileProcessing: options.coalesceWhileProcessing }),
      ...(options.queueMetrics === undefined ? {} : { metrics: options.queueMetrics }),
      ...(options.maxCausesPerKey === undefined ? {} : { maxCausesPerKey: options.maxCausesPerKey }),
    });
    if (options.causeChains !== undefined && typeof options.causeChains !== 'boolean')
      throw new OptionsError('causeChains', options.causeChains, 'a boolean');
    const ledger = options.writeLedger;
    if (ledger !== undefined && !(ledger instanceof WriteLedger))
      throw new OptionsError('writeLedger', ledger, 'a WriteLedger');
    if (options.causeChains !== false) {
      this.#ledger = ledger ?? new WriteLedger({ clock: this.#clock });
      const settings = hotLoopSettings(options.hotLoop);
      if (settings !== undefined) this.#hotLoops = new HotLoopDetector(this.name, settings);
    }
    if (options.sharding !== undefined) {
      if (typeof options.sharding?.member?.mayRun !== 'function') {
        throw new OptionsError('sharding.member', options.sharding?.member, 'a ShardMember');
      }
      this.#sharding = new ShardedRequests(options.sharding, this.#keyOf);
    }
    for (const source of options.sources ?? []) this.#sources.push(source);
    if (options.interceptor !== undefined) this.observe({ interceptor: options.interceptor });
  }

  get state(): ControllerState {
    return this.#state;
  }

  /**
   * The controller's queue as the rest of a program sees it: enqueue requests from anywhere, and
   * ask what it holds (openclarity's `Has`, `Len` and `ProcessingCount`). Taking requests out
   * stays with the controller's workers.
   */
  get queue(): ControllerQueue<R> {
    return this.#queue;
  }

  /**
   * Drops every queued or waiting request for which `predicate` is true and forgets their
   * failures; a matching request that is processing is not run again after it finishes (however
   * often it was added meanwhile). Returns how many were dropped from the queue.
   */
  removeWhere(predicate: (request: R) => boolean): number {
    const queue = this.#queue;
    return queue.removeWhere((request) => {
      if (!predicate(request)) return false;
      queue.forget(request);
      if (this.#lastErrors.size !== 0) this.#lastErrors.delete(this.#keyOf(request));
      return true;
    });
  }

  /**
   * Gives the requests of one fairness partition (see `partitionOf`) at most `limit` of the
   * workers at once; `undefined` lifts the limit.
   */
  setPartitionLimit(partition: string, limit: number | undefined): void {
    this.#queue.setPartitionLimit(partition, limit);
  }

  /** Reconciles run at once at most (the workers started). */
  get maxConcurrentReconciles(): number {
    return this.#workers;
  }

  /**
   * Adds metric hooks or a reconcile interceptor after construction (an adapter instrumenting a
   * built controller); they run after those given in the options and earlier `observe` calls (an
   * interceptor added later runs inside the earlier ones). Once there is an interceptor, the
   * queue stamps each cause with the time it arrived.
   */
  observe(hooks: {
    readonly metrics?: ControllerMetrics;
    readonly queueMetrics?: WorkQueueMetrics;
    readonly interceptor?: ReconcileInterceptor;
  }): void {
    if (typeof hooks !== 'object' || hooks === null) throw new OptionsError('hooks', hooks, 'an object');
    const interceptor = hooks.interceptor;
    if (interceptor !== undefined) {
      if (typeof interceptor?.aroundReconcile !== 'function')
        throw new OptionsError('interceptor', interceptor, 'an object with an aroundReconcile method');
      this.#interceptor = joinInterceptors(this.#interceptor, interceptor);
      this.#queue.timeCauses();
    }
    if (hooks.metrics !== undefined) this.#metrics = joinHooks(this.#metrics, hooks.metrics);
    if (hooks.queueMetrics !== undefined) this.#queue.observe(hooks.queueMetrics);
  }

  /**
   * The queue's gauges read on demand: processing time not yet done, the longest-running
   * reconcile, queued requests by priority.
   */
  queueGauges(): {
    readonly unfinishedWorkMs: number;
    readonly longestRunningMs: number;
    readonly depthByPriority: readonly { readonly priority: number; readonly size: number }[];
  } {
    const queue = this.#queue;
    return {
      unfinishedWorkMs: queue.unfinishedWorkMs(),
      longestRunningMs: queue.longestRunningMs(),
      depthByPriority: queue.depthByPriority(),
    };
  }

  /**
   * Every request the controller holds (running, in backoff, waiting or queued), at most `limit`:
   * its causes, attempts (`requeues`), last error and next retry time (`waitingUntil`). A snapshot
   * for a debug view (`/debug/keys`); costs nothing until called.
   */
  inspect(limit?: number): ControllerKeyInfo<R>[] {
    const ids = new Map<string, string>();
    for (const running of this.#running) ids.set(this.#keyOf(running.request), running.id);
    const ledger = this.#ledger;
    const now = this.#clock.now();
    return this.#queue.inspect(limit).map((queued) => {
      const info =
        ledger === undefined
          ? queued
          : {
              ...queued,
              causes: ledger.attributeSet(queued.causes),
              ...(queued.runCauses === undefined ? {} : { runCauses: ledger.attributeSet(queued.runCauses) }),
            };
      return keyInfo(
        info,
        info.processing ? ids.get(info.id) : undefined,
        this.#lastErrors.get(info.id),
        this.#hotLoopOf(info.id, now),
        this.#sharding?.mayRun(info.key),
      );
    });
  }

  /**
   * Keys flagged as hot loops now (0 without hot-loop detection). See `HotLoopOptions` for the
   * rule; `inspect()` marks them with `hotLoop`, and {@link Controller.hotLoops} lists them all.
   */
  hotLoopKeys(): number {
    return this.#hotLoops?.flaggedCount(this.#clock.now()) ?? 0;
  }

  /** Every key flagged as a hot loop now, queued or not, by key id. */
  hotLoops(): Map<string, HotLoopInfo> {
    const all = new Map<string, HotLoopInfo>();
    const now = this.#clock.now();
    for (const [key, flag] of this.#hotLoops?.flagged(now) ?? []) {
      all.set(key, { since: flag.since, selfCausedRuns: flag.runs, chain: causeChain(flag.cause) });
    }
    return all;
  }

  #hotLoopOf(key: string, now: number): HotLoopInfo | undefined {
    const flag = this.#hotLoops?.flagOf(key, now);
    return flag === undefined
      ? undefined
      : { since: flag.since, selfCausedRuns: flag.runs, chain: causeChain(flag.cause) };
  }

  /** Queue counters (depth, processing, waiting, adds, retries, dropped after shutdown). */
  stats(): ReturnType<WorkQueue<R>['stats']> & { readonly running: number } {
    return { ...this.#queue.stats(), running: this.#running.size };
  }

  /**
   * Adds a source. Before `start` it is started with the others; while running it is started at
   * once and the returned promise resolves when it has synced (kinds added at runtime).
   */
  async watch(source: Source<R>): Promise<void> {
    if (this.#state === 'stopping' || this.#state === 'stopped')
      throw new AlreadyStartedError(`controller ${this.name}`);
    this.#sources.push(source);
    if (this.#state === 'new') return;
    this.#startSource(source);
    await this.#waitForSync([source]);
  }

  /** Runs the controller until `signal` aborts. Starts once. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new AlreadyStartedError(`controller ${this.name}`);
    this.#state = 'syncing';
    const stopSignal = this.#stop.signal;
    const onAbort = (): void => this.#stop.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const unfollow = this.#sharding?.follow({
      removeWhere: (predicate) => this.removeWhere(predicate),
      running: () => this.#running,
      queue: this.#queue,
      active: () => !stopSignal.aborted,
    });
    try {
      this.#logger.info({ sources: this.#sources.length }, 'Starting controller');
      for (const source of this.#sources) this.#startSource(source);
      try {
        await this.#waitForSync(this.#sources);
      } catch (error) {
        this.#fail(error);
      }
      if (!stopSignal.aborted) {
        this.#state = 'running';
        this.#logger.info({ workers: this.#workers }, 'Starting workers');
        for (let i = 0; i < this.#workers; i++) this.#workerRuns.push(this.#startWorker(stopSignal));
        await whenAborted(stopSignal);
      }
      await this.#shutdown();
    } finally {
      unfollow?.();
      signal.removeEventListener('abort', onAbort);
      this.#state = 'stopped';
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Stops the controller as if its start signal aborted; `start` settles once shutdown is complete. */
  stop(): void {
    this.#stop.abort(new Error(`controller ${this.name} stopped`));
  }

  #startSource(source: Source<R>): void {
    const label = source.name ?? 'unnamed';
    const run = (async () => {
      try {
        await source.start(this.#stop.signal, this.#queue);
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        this.#fail(new SourceFailedError(`controller ${this.name}`, label, { cause: error }));
      }
    })();
    this.#sourceRuns.push(run);
  }

  /**
   * Whether its sources synced; while it waits for them (state `syncing`), which ones it still
   * waits for, by name. A manager's readiness check reports it.
   */
  syncStatus(): { readonly synced: boolean; readonly waitingFor: readonly string[] } {
    const unsynced = this.#unsynced;
    if (this.#state === 'syncing' && unsynced !== undefined)
      return { synced: false, waitingFor: [...unsynced] };
    return { synced: this.#state === 'running' || this.#state === 'stopping', waitingFor: [] };
  }

  async #waitForSync(sources: readonly Source<R>[]): Promise<void> {
    const signal = this.#stop.signal;
    const timeoutMs = this.#syncTimeoutMs;
    const labels = sources.map((source, i) => {
      const name = source.name ?? 'unnamed';
      return sources.findIndex((other) => (other.name ?? 'unnamed') === name) === i ? name : `${name}#${i}`;
    });
    const unsynced = new Set(labels);
    this.#unsynced = unsynced;
    let timer: Timer | undefined;
    const deadline = new Promise<never>((_, reject) => {
      // Infinity waits for as long as it takes (logging progress below), as the seeds do.
      if (timeoutMs === Number.POSITIVE_INFINITY) return;
      timer = this.#clock.setTimer(
        () =>
          reject(
            new SourceSyncError(
              `controller ${this.name}`,
              [...unsynced].join(', ') || 'all',
              `did not sync within ${timeoutMs}ms`,
            ),
          ),
        timeoutMs,
      );
    });
    const progress = syncProgress(this.#clock, timeoutMs, (waitedMs) =>
      this.#logger.warn(
        {
          waitingFor: [...unsynced],
          waitedMs,
          ...(timeoutMs === Number.POSITIVE_INFINITY ? {} : { syncTimeoutMs: timeoutMs }),
        },
        'Sources not synced yet; still waiting',
      ),
    );
    const stopped = whenAborted(signal);
    const syncs = sources.map(async (source, i) => {
      try {
        await source.waitForSync?.(signal);
        unsynced.delete(labels[i] as string);
      } catch (error) {
        if (signal.aborted) return;
        throw new SourceSyncError(`controller ${this.name}`, source.name ?? 'unnamed', 'failed to sync', {
          cause: error,
        });
      }
    });
    try {
      await Promise.race([Promise.all(syncs), deadline, stopped]);
    } finally {
      timer?.cancel();
      progress.cancel();
      this.#unsynced = undefined;
    }
  }

  /**
   * A worker, in a writer cell of its own when cause chains are on: each run sets the cell's scope
   * rather than entering an AsyncLocalStorage frame of its own (see {@link WriterCell}).
   */
  #startWorker(stopSignal: AbortSignal): Promise<void> {
    if (this.#ledger === undefined) return this.#work(stopSignal, undefined);
    const cell = new WriterCell();
    return runInWriterCell(cell, () => this.#work(stopSignal, cell));
  }

  async #work(stopSignal: AbortSignal, cell: WriterCell | undefined): Promise<void> {
    let sinceYield = 0;
    for (;;) {
      // About to wait for work with no run under way: the runs' deadline timer can go.
      if (this.#queue.length === 0) this.#stops.idle();
      const request = await this.#queue.get(stopSignal);
      if (request === undefined) return;
      if (this.#sharding !== undefined && !this.#sharding.mayRun(request)) {
        // Another shard member runs it: drop it here (ownership changes re-enqueue what is gained).
        this.#queue.forget(request);
        this.#queue.done(request);
        continue;
      }
      const run = this.#reconcile(request, stopSignal, cell);
      // Without an interceptor no async frame of its own per run: the worker waits for the outcome.
      if (run instanceof Running) this.#end(run, await run.invocation.outcome);
      else if (run !== undefined) await run;
      // Reconciles that do no I/O (a cache read, nothing to change) settle in microtasks, and a
      // ready queue hands out the next key at once: without a macrotask now and then, a backlog
      // would hold off timers, watches and sockets until it drained.
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
  }

  /**
   * Starts a run of `request`: its {@link Running} (the worker ends it with `#end`), a promise of
   * the whole run when an interceptor wraps it, or undefined when the hot-loop brake held it back.
   */
  #reconcile(
    request: R,
    stopSignal: AbortSignal,
    cell: WriterCell | undefined,
  ): Running<R> | Promise<unknown> | undefined {
    const ledger = this.#ledger;
    let causes: CauseSet;
    let key: string | undefined;
    let now: number | undefined;
    let streakStart: number | undefined;
    if (ledger === undefined) causes = this.#queue.causesOf(request);
    else {
      // One clock read for the ledger, the detector and the run's start, one key for the queue
      // and the detector; the queue keeps what is attributed.
      now = this.#clock.now();
      key = this.#keyOf(request);
      causes = this.#queue.attributedCausesOf(request, ledger, now, key);
      if (this.#hotLoops !== undefined) {
        const verdict = this.#watchLoop(request, key, causes, now);
        if (verdict === undefined) return undefined;
        if (verdict.first) streakStart = now;
      }
    }
    const id = `${this.name}-${(++this.#seq).toString(36)}`;
    const scope =
      ledger === undefined
        ? undefined
        : new ReconcileWriter(ledger, this.name, id, key as string, causes, streakStart);
    const failures = this.#queue.numRequeues(request);
    const interceptor = this.#interceptor;
    if (interceptor === undefined)
      return this.#begin(request, stopSignal, id, failures, causes, scope, cell, now);
    const info = reconcileInfo(
      this.name,
      id,
      this.#keyOf(request),
      request,
      this.#kindOf?.(request),
      failures,
      causes,
    );
    return intercept(interceptor, info, () =>
      this.#run(request, stopSignal, id, failures, causes, scope, cell),
    );
  }

  /**
   * Counts a run for hot-loop detection: the detector's verdict, or undefined when the brake holds
   * it back (it is then requeued after the brake's wait, its causes kept).
   */
  #watchLoop(request: R, key: string, causes: CauseSet, now: number): HotLoopVerdict | undefined {
    const verdict = (this.#hotLoops as HotLoopDetector).observe(key, causes.causes, now);
    if (!verdict.selfCaused) return verdict;
    if (verdict.deferMs > 0) {
      const last = causes.causes[causes.causes.length - 1] as Cause;
      this.#queue.requeueAfter(request, verdict.deferMs, { keepCauses: true, cause: last });
      return undefined;
    }
    if (this.#metrics?.onSelfCausedReconcile !== undefined)
      this.#hook(() => this.#metrics?.onSelfCausedReconcile?.(this.name));
    if (verdict.flagged) {
      const flag = this.#hotLoops?.flagOf(key, this.#clock.now());
      this.#logger.warn(
        {
          ...requestFields(request, this.#keyOf),
          selfCausedRuns: flag?.runs,
          chain: flag === undefined ? [] : causeChain(flag.cause),
        },
        'Hot loop detected',
      );
    }
    return verdict;
  }

  /** A whole run, for an interceptor to wrap. */
  async #run(
    request: R,
    stopSignal: AbortSignal,
    id: string,
    failures: number,
    causes: CauseSet,
    scope: WriterScope | undefined,
    cell: WriterCell | undefined,
  ): Promise<Finished> {
    const run = this.#begin(request, stopSignal, id, failures, causes, scope, cell);
    return this.#end(run, await run.invocation.outcome);
  }

  /** Calls the reconciler. */
  #begin(
    request: R,
    stopSignal: AbortSignal,
    id: string,
    failures: number,
    causes: CauseSet,
    scope: WriterScope | undefined,
    cell: WriterCell | undefined,
    /** The clock's now, read just before (else it is read here). */
    now?: number,
  ): Running<R> {
    const logger =
      this.#logger === noopLogger
        ? noopLogger
        : this.#logger.child({
            reconcileId: id,
            ...(this.#kindOf === undefined ? {} : { kind: this.#kindOf(request) }),
            ...requestFields(request, this.#keyOf),
            ...causeFields(causes),
          });
    const started = now ?? this.#clock.now();
    const abort = this.#sharding === undefined ? undefined : new AbortController();
    // The worker's cell names this run while it runs; a worker whose cell an abandoned run kept
    // (its writes, late as they are, are still its own) gives each later run a frame of its own.
    const inCell = scope !== undefined && cell !== undefined && !cell.retired;
    if (inCell) cell.scope = scope;
    const context = {
      logger,
      reconcileId: id,
      failures,
      causes: causes.causes,
      droppedCauses: causes.dropped,
    };
    const options = {
      clock: this.#clock,
      stopSignal: abort === undefined ? stopSignal : AbortSignal.any([stopSignal, abort.signal]),
      timeoutMs: this.#reconcileTimeoutMs,
      abandonGraceMs: this.#abandonGraceMs,
      stops: this.#stops,
      startedAt: started,
    };
    const invocation =
      scope === undefined || inCell
        ? invoke(this.#reconciler, request, context, options)
        : runAsWriter(scope, () => invoke(this.#reconciler, request, context, options));
    const running = new Running(
      request,
      id,
      invocation,
      abort,
      logger,
      started,
      causes,
      inCell ? cell : undefined,
    );
    this.#running.add(running);
    this.#activeWorkersChanged();
    return running;
  }

  /** The run's reconciler has settled: it no longer runs. */
  #unlist(running: Running<R>): void {
    this.#running.delete(running);
    this.#activeWorkersChanged();
  }

  /** Applies a run's outcome to the queue, logs it and tells the metrics. */
  #end(running: Running<R>, outcome: InvokeOutcome): Finished {
    const { request, invocation, abort, logger, started, causes, cell } = running;
    // A run that was not abandoned has settled by now (its outcome is its settling): it leaves
    // the list at once, with no reaction of its own per run; an abandoned one when it settles.
    if (outcome.abandoned) void invocation.settled.then(() => this.#unlist(running));
    else this.#unlist(running);
    if (cell !== undefined) {
      if (outcome.abandoned) cell.retired = true;
      else cell.scope = undefined;
    }
    if (outcome.abandoned) {
      logger.error({ err: outcome.ok ? undefined : outcome.error }, 'Reconcile abandoned');
      void invocation.settled.then(() =>
        logger.warn({}, 'Abandoned reconcile finished; its result is ignored'),
      );
    }
    let label: ReconcileResultLabel;
    try {
      if (abort?.signal.aborted === true) {
        // Its key moved to another shard member: that member runs it now.
        logger.debug({}, 'Reconcile stopped: its key moved to another shard member');
        this.#queue.forget(request);
        this.#queue.cancelRetry(request);
        this.#queue.done(request);
        label = 'dropped';
      } else label = this.#apply(request, outcome, logger, outcome.timedOut);
    } catch (error) {
      // Only a broken retry policy (for example a NaN delay) can get here; never lose the worker.
      logger.error({ err: error }, 'Could not requeue request; retrying with backoff');
      this.#queue.done(request);
      this.#queue.addRateLimited(request);
      label = 'error';
    }
    const duration = this.#clock.now() - started;
    const kindOf = this.#kindOf;
    if (logger !== noopLogger) logger.debug(finishedFields(label, duration, outcome), 'Reconcile finished');
    if (this.#metrics?.onReconcile !== undefined)
      this.#hook(() =>
        this.#metrics?.onReconcile?.(
          this.name,
          label,
          duration,
          kindOf === undefined ? undefined : kindOf(request),
          causes,
        ),
      );
    return { label, outcome, durationMs: duration };
  }

  #apply(request: R, outcome: Outcome, logger: Logger, timedOut: boolean): ReconcileResultLabel {
    const queue = this.#queue;
    const c = classify(outcome);
    if (this.#lastErrors.size !== 0 && c.kind !== 'error') this.#lastErrors.delete(this.#keyOf(request));
    switch (c.kind) {
      case 'success':
        // A retry an earlier failure scheduled is moot once a later run succeeded (an event ran
        // the key before its retry came due: say its object was deleted).
        queue.forget(request);
        queue.cancelRetry(request);
        queue.done(request);
        return 'success';
      case 'requeue':
        queue.requeueRateLimited(request, { cause: REQUEUE_CAUSE, keepCauses: true });
        return 'requeue';
      case 'requeueAfter':
        queue.forget(request);
        queue.cancelRetry(request);
        queue.requeueAfter(request, c.afterMs);
        return 'requeue_after';
      case 'requeueNow':
        queue.requeueAfter(request, 0, { cause: REQUEUE_CAUSE, keepCauses: true });
        return 'requeue';
      case 'terminal':
        this.#report(c.error, request, logger, 'Reconciler error (terminal, not retried)');
        this.#failed(request, c.error, 'terminal', timedOut);
        queue.forget(request);
        queue.cancelRetry(request);
        queue.done(request);
        return 'terminal';
      case 'error': {
        let decision: ReturnType<RetryPolicy['decide']> = { retry: true };
        try {
          decision = this.#retryPolicy.decide({ failures: queue.numRequeues(request), error: c.error });
        } catch (error) {
          logger.error({ err: error }, 'Retry policy threw; retrying with backoff');
        }
        if (!decision.retry && decision.succeeded === true) {
          // The policy reads this error as "nothing left to do" (kro's NotFound): a success.
          if (logger !== noopLogger) {
            logger.debug(
              { err: c.error, policy: this.#retryPolicy.name },
              'Reconcile error counted as success by the retry policy',
            );
          }
          if (this.#lastErrors.size !== 0) this.#lastErrors.delete(this.#keyOf(request));
          queue.forget(request);
          queue.cancelRetry(request);
          queue.done(request);
          return 'success';
        }
        this.#report(c.error, request, logger, 'Reconciler error');
        if (!decision.retry) {
          logger.error(
            { err: c.error, failures: queue.numRequeues(request) + 1, policy: this.#retryPolicy.name },
            'Dropping request after retries',
          );
          this.#failed(request, c.error, 'dropped', timedOut);
          if (this.#lastErrors.size !== 0) this.#lastErrors.delete(this.#keyOf(request));
          queue.forget(request);
          queue.cancelRetry(request);
          queue.done(request);
          return 'dropped';
        }
        this.#failed(request, c.error, 'error', timedOut);
        this.#lastErrors.set(this.#keyOf(request), { error: c.error, at: this.#clock.now() });
        queue.requeueRateLimited(
          request,
          decision.delayMs === undefined
            ? { keepCauses: true }
            : { keepCauses: true, delayMs: decision.delayMs },
        );
        return 'error';
      }
    }
  }

  #failed(request: R, error: Error, result: 'error' | 'dropped' | 'terminal', timedOut: boolean): void {
    if (this.#metrics?.onReconcileError === undefined) return;
    const kind = this.#kindOf?.(request);
    this.#hook(() =>
      this.#metrics?.onReconcileError?.(
        this.name,
        error,
        kind === undefined ? { result, timedOut } : { result, timedOut, kind },
      ),
    );
  }

  #report(error: Error, request: R, logger: Logger, message: string): void {
    if (this.#stop.signal.aborted && error === this.#stop.signal.reason) return;
    logger.error({ err: error }, message);
    if (this.#onError !== undefined) this.#hook(() => this.#onError?.(error, request));
  }

  #fail(error: unknown): void {
    if (this.#failure === undefined) this.#failure = toError(error);
    this.#logger.error({ err: error }, 'Controller failed; stopping');
    this.#stop.abort(error);
  }

  async #shutdown(): Promise<void> {
    this.#state = 'stopping';
    this.#queue.shutDown();
    this.#lastErrors.clear();
    this.#hotLoops?.clear();
    const pending = [...this.#running];
    const all = Promise.all([...pending.map((r) => r.settled), ...this.#workerRuns, ...this.#sourceRuns]);
    if (this.#shutdownTimeoutMs === 0) {
      this.#logger.info({ running: pending.length }, 'Stopped without waiting for in-flight reconciles');
      return;
    }
    const timedOut = !(await settlesWithin(this.#clock, all, this.#shutdownTimeoutMs));
    if (timedOut) {
      const still = [...this.#running].map((r) => this.#keyOf(r.request));
      const error = new ShutdownTimeoutError(`controller ${this.name}`, this.#shutdownTimeoutMs, still);
      this.#logger.error({ running: still }, 'Shutdown timed out');
      if (this.#failure === undefined) this.#failure = error;
      return;
    }
    this.#logger.info({}, 'All workers finished');
  }

  /** Tells the metrics how many runs are under way (no closure when nobody listens). */
  #activeWorkersChanged(): void {
    const metrics = this.#metrics;
    if (metrics?.onActiveWorkers === undefined) return;
    this.#hook(() => metrics.onActiveWorkers?.(this.name, this.#running.size));
  }

  #hook(call: () => void): void {
    try {
      call();
    } catch {
      // Observers must never break the controller.
    }
  }
}

function defaultRequestKey(request: unknown): string {
  if (typeof request === 'string') return request;
  if (
    typeof request === 'object' &&
    request !== null &&
    typeof (request as { name?: unknown }).name === 'string' &&
    typeof (request as { namespace?: unknown }).namespace === 'string' &&
    ownKeyCount(request) === 2
  ) {
    return keyToString(request as { namespace: string; name: string });
  }
  return JSON.stringify(request);
}

/** Own enumerable keys of `object`, counted without an array of them. */
function ownKeyCount(object: object): number {
  let count = 0;
  for (const key in object) if (Object.hasOwn(object, key)) count++;
  return count;
}

function requestFields<R>(request: R, keyOf: (request: R) => string): Record<string, unknown> {
  if (typeof request === 'object' && request !== null && 'name' in request) {
    const { namespace, name } = request as { namespace?: unknown; name?: unknown };
    return { namespace, name };
  }
  return { request: keyOf(request) };
}

/** The fields of the debug line 'Reconcile finished': a requeue after a delay says the delay. */
function finishedFields(result: ReconcileResultLabel, durationMs: number, outcome: Outcome): LogFields {
  if (result !== 'requeue_after') return { result, durationMs };
  const c = classify(outcome);
  return c.kind === 'requeueAfter'
    ? { result, durationMs, requeueAfterMs: c.afterMs }
    : { result, durationMs };
}

/** The causes of a run as log fields: short texts, and the count let go when there is one. */
function causeFields(set: CauseSet): LogFields {
  const causes = set.causes.map(formatCause);
  return set.dropped === 0 ? { causes } : { causes, droppedCauses: set.dropped };
}
