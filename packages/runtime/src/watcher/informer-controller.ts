/**
 * Event-style handlers coordinated over informers: grafana app-sdk's `InformerController`.
 *
 * An {@link InformerController} subscribes to the informers (any `EventSource`) added for a kind
 * and calls every `ResourceWatcher` of that kind (`add` / `update` / `delete`) and then every
 * `EventReconciler` of that kind (`reconcile({ action, object, state })`), each in the order they
 * were added. Beside reconcile-by-key controllers it is the second way to write a controller: the
 * handlers see what happened, not just which object to look at.
 *
 * - **Events to actions.** create → `'create'` (`watcher.add`); update → `'update'`
 *   (`watcher.update(old, new)`); an update whose resourceVersion did not change (an informer
 *   resync) → `'resync'`, which a watcher also gets as `update(old, new)` and a reconciler as
 *   action `'resync'` (app-sdk v0.49); delete → `'delete'` (`watcher.delete`), tombstones of missed
 *   deletes included, with the last known state. Generic events are ignored, and the controller
 *   never calls `watcher.sync` itself (the opinionated watcher does).
 * - **Order and concurrency.** Every object (kind + namespace/name) has a lane: its events are
 *   handled in arrival order, one handler call at a time, never two at once, retries included.
 *   Different objects run in parallel on a pool of `workers` (default 10); an object with work
 *   waits its turn round-robin, so a slow object holds one worker and delays only itself. Several
 *   informers per kind each trigger all handlers of the kind (the same object seen by two informers
 *   is handled twice, in turn). A handler that fails does not stop the ones after it.
 * - **Retries.** A failed call (throw or rejection) is reported to `onError` and retried, by the
 *   `retryPolicy` (default app-sdk's `DefaultRetryPolicy`: 7 calls), on exact timers of the
 *   injected clock: the same method with the same object(s), `context.attempt` counting retries.
 *   Each handler and object can hold several pending retries (one per failed event still wanted),
 *   each with its own attempt count. A retry due while its object is busy waits its turn in the
 *   object's lane. When a new event for the object reaches a handler, that handler's pending
 *   retries for the object are dropped first: all of them, or those the `retryDequeuePolicy`
 *   selects ({@link opinionatedRetryDequeuePolicy}). A `TerminalError` is reported, never retried.
 *   A handler that fails after the controller stopped, or after it was removed, is neither
 *   reported nor retried.
 * - **Reconcilers** (app-sdk v0.10+): a result `{ requeueAfterMs, state }` runs the same request
 *   again after that long without counting an attempt and hands `state` back as `request.state`;
 *   a thrown error goes through the retry policy like a watcher's, and the retry gets the state the
 *   error carries (`withReconcileState`), else the state the failed call had. A
 *   requeue asked by throwing a `RequeueAfterError` is a requeue, not a failure (app-sdk: an error
 *   returned with `RequeueAfter` is not retried through the policy). A requeue (of a watcher or a
 *   reconciler) is always dropped by the next event of its object, whatever the dequeue policy: the
 *   new event's call decides whether to requeue again.
 * - **Lifecycle.** `start(signal)` subscribes to the informers, runs those it should (see
 *   `startInformers`; not the ones an `InformerRegistry` runs), including informers added later,
 *   and runs until `signal` aborts. Then: pending retries are discarded, queued events are dropped,
 *   new events are ignored, running handlers see `context.signal` abort, and `start` resolves once
 *   they finish — or rejects with a `ShutdownTimeoutError` naming them after `shutdownTimeoutMs`.
 *   An informer whose `start` rejects stops the controller with a `SourceFailedError`.
 *
 * Fixes of app-sdk v0.9.10's quirks:
 * 1. A failed retry keeps its error: the dequeue policy and `onError` see the latest one (v0.9.10
 *    re-queued failed retries with a nil error).
 * 2. `onError` is called for every failure, failed retries included (v0.9.10 only for the first).
 * 3. A retry never races a fresh event for the same object: it is scheduled into the object's own
 *    lane (v0.9.10 ran retries on a ticker goroutine beside the informer's).
 * 4. Retries belong to a handler, not to its index: `removeWatcher` drops the removed watcher's
 *    pending retries and never makes another watcher's retries point at the wrong watcher.
 * 5. Retries fire at their exact time, not on the next tick of a 1 s ticker, so counts are exact.
 * 6. Informers added after `start` are started (v0.9.10 ignored them); stopping waits, bounded, for
 *    running handlers (v0.9.10 returned at once).
 * 7. Deletes missed during a relist (tombstones) reach `delete` with the last known state (v0.9.10's
 *    Kubernetes informer dropped them).
 *
 * @example
 * const controller = new InformerController({ retryDequeuePolicy: opinionatedRetryDequeuePolicy });
 * controller.addInformer(widgets, 'Widget');
 * controller.addWatcher({ async add(widget, { signal }) { await provision(widget, signal); } }, 'Widget');
 * await controller.start(signal); // or manager.add(controller)
 *
 * @module
 */
import { type Clock, realClock, settlesWithin } from '../clock/index.ts';
import { ShutdownTimeoutError, SourceFailedError } from '../controller/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { EventSource, ObjectEvent } from '../event/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { type KubeObject, keyToString, type ObjectKey } from '../object/index.ts';
import { durationMs, func, integer, nonEmptyString } from '../options.ts';
import { findInCauseChain, isTerminalError, RequeueAfterError, toError } from '../reconcile/index.ts';
import { type Runnable, whenAborted } from '../runnable/index.ts';
import type { RetryPolicy } from '../workqueue/index.ts';
import {
  type Call,
  type CallOutcome,
  checkReconciler,
  checkWatcher,
  type Handler,
  invoke,
} from './informer-controller-handlers.ts';
import { InformerBindings } from './informer-controller-informers.ts';
import type {
  AddHandlerOptions,
  AddInformerOptions,
  InformerControllerOptions,
  InformerControllerState,
  InformerControllerStats,
  WatcherErrorInfo,
} from './informer-controller-options.ts';
import { type LaneTask, ObjectLanes } from './object-lanes.ts';
import { reconcileStateOf } from './reconcile-state.ts';
import { RetryBook, retryDelay, type ScheduledCall } from './retry-book.ts';
import { defaultWatcherRetryPolicy } from './retry-dequeue-policy.ts';
import type { EventReconciler, ResourceAction, ResourceWatcher, RetryDequeuePolicy } from './types.ts';

/** A handler added for a kind. Its identity (the entry) is what its retries belong to. */
interface Entry {
  readonly kind: string;
  readonly name: string;
  readonly handler: Handler;
  removed: boolean;
}

/** The handlers of a kind, each list in add order. */
interface Kind {
  watchers: Entry[];
  reconcilers: Entry[];
}

/**
 * Calls event-style handlers (watchers, event reconcilers) for the events of informers, per kind,
 * in order per object and in parallel across objects, with retries. See the module overview for
 * the exact semantics.
 */
export class InformerController implements Runnable {
  readonly name: string;
  readonly needLeaderElection: boolean;
  readonly #retryPolicy: RetryPolicy;
  readonly #dequeuePolicy: RetryDequeuePolicy | undefined;
  readonly #onError: ((error: Error, info: WatcherErrorInfo) => void) | undefined;
  readonly #startInformers: boolean;
  readonly #shutdownTimeoutMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #kinds = new Map<string, Kind>();
  readonly #informers: InformerBindings;
  readonly #calls = new Set<string>();
  readonly #lanes: ObjectLanes<LaneTask>;
  readonly #retries: RetryBook<Entry>;
  readonly #stop = new AbortController();
  #state: InformerControllerState = 'new';
  #failure: Error | undefined;
  #handlers = 0;
  #events = 0;

  constructor(options: InformerControllerOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    this.name = nonEmptyString('name', options.name, 'informer-controller');
    this.#retryPolicy = options.retryPolicy ?? defaultWatcherRetryPolicy;
    if (typeof this.#retryPolicy !== 'object' || typeof this.#retryPolicy.decide !== 'function') {
      throw new OptionsError('retryPolicy', options.retryPolicy, 'a RetryPolicy');
    }
    this.#dequeuePolicy = func('retryDequeuePolicy', options.retryDequeuePolicy, undefined);
    this.#onError = func('onError', options.onError, undefined);
    const workers = integer('workers', options.workers, 10, 1);
    this.#startInformers = options.startInformers ?? true;
    this.#shutdownTimeoutMs = durationMs('shutdownTimeoutMs', options.shutdownTimeoutMs, 30_000);
    this.needLeaderElection = options.needLeaderElection ?? true;
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? noopLogger).child({ controller: this.name });
    this.#lanes = new ObjectLanes(workers, (error) =>
      this.#logger.error({ err: error }, 'Informer controller task failed'),
    );
    this.#retries = new RetryBook<Entry>(this.#clock, this.#lanes, (scheduled) =>
      this.#stop.signal.aborted
        ? Promise.resolve()
        : this.#call(scheduled.owner, scheduled.lane, scheduled.key, scheduled.call),
    );
    this.#informers = new InformerBindings(
      (kind, event) => this.#onEvent(kind, event),
      (kind, error) =>
        this.#fail(new SourceFailedError(`informer controller ${this.name}`, kind, { cause: error })),
    );
  }

  get state(): InformerControllerState {
    return this.#state;
  }

  /**
   * Adds an informer for `kind` (any label: it pairs informers with handlers). Several informers
   * per kind are fine, each triggers every handler of the kind; the same informer twice for one
   * kind throws an {@link InformerAlreadyAddedError}. While running, it is subscribed to (and run,
   * if `start`) at once.
   */
  addInformer<T extends KubeObject>(
    informer: EventSource<T>,
    kind: string,
    options: AddInformerOptions = {},
  ): void {
    if (typeof informer !== 'object' || informer === null || typeof informer.subscribe !== 'function') {
      throw new OptionsError('informer', informer, 'an EventSource with a subscribe() method');
    }
    checkKind(kind);
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const start = options.start ?? this.#startInformers;
    this.#informers.add(informer as unknown as EventSource<KubeObject>, kind, start);
  }

  /** Removes an informer from `kind`: no more of its events; stopped if this controller ran it. */
  removeInformer<T extends KubeObject>(informer: EventSource<T>, kind: string): boolean {
    return this.#informers.remove(informer as unknown as EventSource<KubeObject>, kind);
  }

  /** Adds a watcher for `kind`; it runs after the handlers added before it. The same watcher twice runs twice. */
  addWatcher<T extends KubeObject>(
    watcher: ResourceWatcher<T>,
    kind: string,
    options: AddHandlerOptions = {},
  ): void {
    checkWatcher(watcher);
    checkKind(kind);
    const entry = this.#entry(kind, 'watcher', options, {
      type: 'watcher',
      target: watcher as unknown as ResourceWatcher,
    });
    this.#kind(kind).watchers.push(entry);
  }

  /**
   * Removes the first watcher of `kind` that is `watcher`, keeping the order of the others, and
   * drops its pending retries. False (a no-op) for an unknown watcher or kind.
   */
  removeWatcher<T extends KubeObject>(watcher: ResourceWatcher<T>, kind: string): boolean {
    return this.#remove(kind, 'watchers', watcher);
  }

  /** Removes every watcher of `kind` and their pending retries. */
  removeAllWatchersForResource(kind: string): void {
    this.#removeAll(kind, 'watchers');
  }

  /** Adds an event reconciler for `kind`; reconcilers run after the watchers, in add order. */
  addReconciler<T extends KubeObject, S>(
    reconciler: EventReconciler<T, S>,
    kind: string,
    options: AddHandlerOptions = {},
  ): void {
    checkReconciler(reconciler);
    checkKind(kind);
    const entry = this.#entry(kind, 'reconciler', options, {
      type: 'reconciler',
      target: reconciler as unknown as EventReconciler,
    });
    this.#kind(kind).reconcilers.push(entry);
  }

  /** Removes the first reconciler of `kind` that is `reconciler` and its pending retries and requeues. */
  removeReconciler<T extends KubeObject, S>(reconciler: EventReconciler<T, S>, kind: string): boolean {
    return this.#remove(kind, 'reconcilers', reconciler);
  }

  /** Removes every reconciler of `kind` and their pending retries and requeues. */
  removeAllReconcilersForResource(kind: string): void {
    this.#removeAll(kind, 'reconcilers');
  }

  stats(): InformerControllerStats {
    const lanes = this.#lanes.stats();
    return {
      pendingRetries: this.#retries.size,
      running: this.#calls.size,
      queued: lanes.queued,
      objects: lanes.lanes,
      events: this.#events,
    };
  }

  /** Runs until `signal` aborts, then stops as the module overview says. Starts once. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new AlreadyStartedError(`informer controller ${this.name}`);
    this.#state = 'running';
    const stop = this.#stop.signal;
    const onAbort = (): void => this.#stop.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (!stop.aborted) {
        this.#logger.info({}, 'Starting informer controller');
        this.#informers.start(stop);
        await whenAborted(stop);
      }
      await this.#shutdown();
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#state = 'stopped';
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  #kind(kind: string): Kind {
    let entry = this.#kinds.get(kind);
    if (entry === undefined) {
      entry = { watchers: [], reconcilers: [] };
      this.#kinds.set(kind, entry);
    }
    return entry;
  }

  #dropKindIfEmpty(kind: string): void {
    const entry = this.#kinds.get(kind);
    if (entry !== undefined && entry.watchers.length === 0 && entry.reconcilers.length === 0) {
      this.#kinds.delete(kind);
    }
  }

  #entry(kind: string, type: Handler['type'], options: AddHandlerOptions, handler: Handler): Entry {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const name = nonEmptyString('name', options.name, `${type}-${++this.#handlers}`);
    return { kind, name, handler, removed: false };
  }

  #remove(kind: string, list: 'watchers' | 'reconcilers', target: unknown): boolean {
    const entry = this.#kinds.get(kind);
    if (entry === undefined) return false;
    const index = entry[list].findIndex((e) => e.handler.target === target);
    if (index < 0) return false;
    const [removed] = entry[list].splice(index, 1);
    if (removed !== undefined) this.#retire(removed);
    this.#dropKindIfEmpty(kind);
    return true;
  }

  #removeAll(kind: string, list: 'watchers' | 'reconcilers'): void {
    const entry = this.#kinds.get(kind);
    if (entry === undefined) return;
    const removed = entry[list];
    entry[list] = [];
    for (const e of removed) this.#retire(e);
    this.#dropKindIfEmpty(kind);
  }

  /** A removed handler is never called again and its retries are gone. */
  #retire(entry: Entry): void {
    entry.removed = true;
    this.#retries.dropOwner(entry);
  }

  #onEvent(kind: string, event: ObjectEvent<KubeObject>): void {
    if (this.#state !== 'running' || this.#stop.signal.aborted || event.type === 'generic') return;
    const object: unknown = event.object;
    if (typeof object !== 'object' || object === null) {
      this.#logger.warn({ kind, eventType: event.type }, 'Event without an object ignored');
      return;
    }
    this.#events++;
    const key = keyOf(event.object);
    const lane = laneOf(kind, key);
    const oldObject = event.type === 'update' ? event.oldObject : undefined;
    const action = actionOf(event);
    this.#lanes.push(lane, {
      run: () =>
        this.#handleEvent(kind, lane, key, {
          action,
          object: event.object,
          oldObject,
          attempt: 0,
          state: undefined,
        }),
    });
  }

  /** Runs every handler of the kind for one event, watchers first, each in add order. */
  async #handleEvent(kind: string, lane: string, key: ObjectKey, call: Call): Promise<void> {
    const entry = this.#kinds.get(kind);
    if (entry === undefined) return;
    for (const handler of [...entry.watchers, ...entry.reconcilers]) {
      if (this.#stop.signal.aborted) return;
      if (handler.removed) continue;
      this.#dequeue(handler, lane, call);
      await this.#call(handler, lane, key, call);
    }
  }

  /**
   * Drops the pending calls of `entry` for the object that the new event's `call` supersedes:
   * every requeue, and the retries the dequeue policy selects (all of them without a policy).
   */
  #dequeue(entry: Entry, lane: string, call: Call): void {
    this.#retries.dropWhere(
      entry,
      lane,
      (scheduled) => scheduled.error === undefined || this.#supersedes(call, scheduled, scheduled.error),
    );
  }

  #supersedes(call: Call, retry: ScheduledCall<Entry>, error: Error): boolean {
    const policy = this.#dequeuePolicy;
    if (policy === undefined) return true;
    try {
      const pending = {
        action: retry.call.action,
        object: retry.call.object,
        error,
        attempts: retry.attempts,
      };
      return policy(call.action, call.object, pending) === true;
    } catch (policyError) {
      this.#logger.error({ err: policyError }, 'Retry dequeue policy threw; dropping the retry');
      return true;
    }
  }

  async #call(entry: Entry, lane: string, key: ObjectKey, call: Call): Promise<void> {
    const logger = this.#logger.child({
      kind: entry.kind,
      watcher: entry.name,
      action: call.action,
      namespace: key.namespace,
      name: key.name,
      attempt: call.attempt,
    });
    const label = `${entry.kind} ${keyToString(key)} ${entry.name} ${call.action} #${call.attempt}`;
    this.#calls.add(label);
    let outcome: CallOutcome;
    try {
      outcome = await invoke(entry.handler, call, {
        signal: this.#stop.signal,
        logger,
        attempt: call.attempt,
      });
    } finally {
      this.#calls.delete(label);
    }
    if (this.#stop.signal.aborted || entry.removed) {
      if (!outcome.ok)
        logger.debug({ err: outcome.error }, 'Handler failed after stop or removal; not retried');
      return;
    }
    this.#settle(entry, lane, key, call, outcome, logger);
  }

  /**
   * What follows a call: nothing after a success; a requeue (same attempt) after a result with
   * `requeueAfterMs` or a thrown `RequeueAfterError`; a report, then a retry if the policy says so,
   * after any other error. A reconciler's state goes with the requeue or retry: the one it
   * returned, the one its error carries (`withReconcileState`), else the one it was called with.
   */
  #settle(
    entry: Entry,
    lane: string,
    key: ObjectKey,
    call: Call,
    outcome: CallOutcome,
    logger: Logger,
  ): void {
    if (outcome.ok) {
      if (outcome.requeueAfterMs === undefined) return;
      this.#requeue(entry, lane, key, { ...call, state: outcome.state }, outcome.requeueAfterMs);
      return;
    }
    const carried = reconcileStateOf(outcome.error);
    const next: Call = carried.carried ? { ...call, state: carried.state } : call;
    const requeue = findInCauseChain(
      outcome.error,
      (e): e is RequeueAfterError => e instanceof RequeueAfterError,
    );
    if (requeue !== undefined) {
      this.#requeue(entry, lane, key, next, requeue.afterMs);
      return;
    }
    const error = toError(outcome.error);
    const delayMs = isTerminalError(error)
      ? undefined
      : retryDelay(this.#retryPolicy, error, call.attempt, logger);
    logger.error({ err: error, retryInMs: delayMs }, 'Handler failed');
    this.#report(error, {
      kind: entry.kind,
      handler: entry.handler.type,
      watcher: entry.name,
      action: call.action,
      key,
      attempt: call.attempt,
      retryInMs: delayMs,
    });
    if (delayMs === undefined) return;
    const retry: Call = { ...next, attempt: call.attempt + 1 };
    this.#retries.schedule({ owner: entry, lane, key, call: retry, error, attempts: retry.attempt }, delayMs);
  }

  /** Makes the same call again after `delayMs`, with the same attempt number. */
  #requeue(entry: Entry, lane: string, key: ObjectKey, call: Call, delayMs: number): void {
    this.#retries.schedule(
      { owner: entry, lane, key, call, error: undefined, attempts: call.attempt + 1 },
      delayMs,
    );
  }

  #report(error: Error, info: WatcherErrorInfo): void {
    const onError = this.#onError;
    if (onError === undefined) return;
    try {
      onError(error, info);
    } catch (hookError) {
      this.#logger.error({ err: hookError }, 'onError threw; ignored');
    }
  }

  #fail(error: Error): void {
    if (this.#failure === undefined) this.#failure = error;
    this.#logger.error({ err: error }, 'Informer controller failed; stopping');
    this.#stop.abort(error);
  }

  async #shutdown(): Promise<void> {
    this.#state = 'stopping';
    const informerRuns = this.#informers.stop();
    this.#retries.dropAll();
    const dropped = this.#lanes.clear();
    const all = Promise.all([...this.#lanes.inFlight(), ...informerRuns]);
    if (this.#shutdownTimeoutMs === 0) {
      this.#logger.info(
        { running: this.#calls.size, dropped },
        'Stopped without waiting for running handlers',
      );
      return;
    }
    const timedOut = !(await settlesWithin(this.#clock, all, this.#shutdownTimeoutMs));
    if (timedOut) {
      const still = [...this.#calls];
      this.#logger.error({ running: still }, 'Shutdown timed out');
      if (this.#failure === undefined) {
        this.#failure = new ShutdownTimeoutError(
          `informer controller ${this.name}`,
          this.#shutdownTimeoutMs,
          still,
        );
      }
      return;
    }
    this.#logger.info({ dropped }, 'Informer controller stopped');
  }
}

function checkKind(kind: unknown): asserts kind is string {
  if (typeof kind !== 'string' || kind === '') throw new OptionsError('kind', kind, 'a non-empty string');
}

function keyOf(object: KubeObject): ObjectKey {
  const metadata = object.metadata as KubeObject['metadata'] | undefined;
  return { namespace: metadata?.namespace ?? '', name: metadata?.name ?? '' };
}

/** The lane of an object: its kind and key (a NUL cannot appear in a kind label from an API). */
function laneOf(kind: string, key: ObjectKey): string {
  return `${kind}\u0000${key.namespace}\u0000${key.name}`;
}

function actionOf(event: Exclude<ObjectEvent<KubeObject>, { type: 'generic' }>): ResourceAction {
  switch (event.type) {
    case 'create':
      return 'create';
    case 'delete':
      return 'delete';
    case 'update': {
      if (event.isResync === true) return 'resync';
      const before = event.oldObject?.metadata?.resourceVersion;
      const after = event.object.metadata?.resourceVersion;
      return before !== undefined && before === after ? 'resync' : 'update';
    }
  }
}
