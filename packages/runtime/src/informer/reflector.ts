import {
  BackendErrorCodes,
  isExpired,
  isNotFound,
  type ListOptions,
  type MetadataOnlyOption,
  type SelectorOptions,
  type WatchEvent,
} from '../backend/index.ts';
import type { CacheStage } from '../cache/index.ts';
import type { Logger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { parseShardSelector, type ShardSelectorExpr } from '../selector/index.ts';
import { Backoff } from './backoff.ts';
import { eventProblem, type ObjectCheck, objectCheck } from './check-object.ts';
import {
  InitialEventsIncompleteError,
  MalformedEventError,
  ResourceVersionRegressionError,
  ShortWatchError,
  WatchExpiredAtStartError,
  WatchListUnsupportedError,
} from './errors.ts';
import { type ResolvedInformerOptions, reportInformerError } from './options.ts';
import { isOlderResourceVersion } from './resource-version.ts';
import { normalizeShardSelector } from './selectors.ts';
import type { InformerCounters, InformerMetrics, ListReason, WatchEndReason } from './stats.ts';
import { stripManagedFields } from './transform.ts';
import { YIELD_EVERY, yieldToEventLoop } from './yield.ts';

/** Where a list starts: a consistent read of the latest state, or not older than the last seen version. */
export type ListFrom = 'consistent' | 'lastSeen';

/** How a list is read: page by page, or streamed as a watch's initial events (`sendInitialEvents`). */
export type ListMethod = 'paginated' | 'watch-list';

/**
 * What an informer is doing, one state at a time:
 * - `new`: not started;
 * - `listing`: reading a full list (`from` as above), page by page or streamed (`method`);
 * - `watching`: streaming changes from `resourceVersion`;
 * - `backingOff`: waiting `delayMs` after `error` before the `next` list or watch;
 * - `stopped`: its signal aborted; it will not run again.
 */
export type InformerState =
  | { readonly phase: 'new' }
  | { readonly phase: 'listing'; readonly from: ListFrom; readonly method: ListMethod }
  | { readonly phase: 'watching'; readonly resourceVersion: string }
  | {
      readonly phase: 'backingOff';
      readonly next: 'list' | 'watch';
      readonly delayMs: number;
      readonly error: unknown;
    }
  | { readonly phase: 'stopped' };

/** What the reflector hands its results to: the informer, which owns the cache and the listeners. */
export interface ReflectorSink<T extends KubeObject> {
  stage(): CacheStage<T>;
  /** Checks, transforms and stages one list item. */
  stageItem(stage: CacheStage<T>, item: unknown): void;
  /** Swaps a complete list in and tells listeners what changed. */
  commit(stage: CacheStage<T>, resourceVersion: string, signal: AbortSignal): Promise<void>;
  /** Transforms and applies one well-formed watch event and tells listeners. */
  apply(event: WatchEvent<T>): void;
  /** A list failed (it is retried after a backoff): the informer tells readers waiting for sync. */
  listFailed(error: unknown): void;
}

type Step = { readonly kind: 'list'; readonly from: ListFrom } | { readonly kind: 'watch' };

type ListOutcome =
  | { readonly kind: 'listed' }
  | { readonly kind: 'expired'; readonly error: unknown }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'aborted' };

/** A streamed list: a list outcome until its initial events are committed, a watch outcome after. */
type StreamedListOutcome =
  | Exclude<ListOutcome, { readonly kind: 'listed' }>
  | { readonly kind: 'unsupported'; readonly error: WatchListUnsupportedError }
  | { readonly kind: 'streamed'; readonly watch: WatchOutcome };

type WatchOutcome =
  | { readonly kind: 'closed'; readonly events: number; readonly durationMs: number }
  | { readonly kind: 'expired'; readonly events: number; readonly error: unknown }
  | { readonly kind: 'regressed'; readonly events: number; readonly error: unknown }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'aborted' };

type Verdict = 'applied' | 'skipped' | ResourceVersionRegressionError;

/** What one event of a streamed list's initial phase did. */
type InitialVerdict = 'staged' | 'end' | WatchListUnsupportedError;

/** Backend errors that mean "this backend does not do sendInitialEvents" when a watch-list opens. */
const REJECTIONS: ReadonlySet<unknown> = new Set([
  BackendErrorCodes.BAD_REQUEST,
  BackendErrorCodes.INVALID,
  BackendErrorCodes.UNSUPPORTED,
]);

/** A watch shorter than this with no event is an error (client-go's "very short watch"). */
const SHORT_WATCH_MS = 1000;

/**
 * The list-then-watch loop of an informer (client-go's Reflector, kube-rs' watcher): list (page by
 * page, or streamed as one watch's initial events that then goes on as the watch), watch from the
 * list's resourceVersion, resume from the last seen one (bookmarks advance it), relist on expiry,
 * back off on errors. It never throws and never stops before its signal aborts.
 */
export class Reflector<T extends KubeObject> {
  readonly #o: ResolvedInformerOptions<T>;
  readonly #sink: ReflectorSink<T>;
  readonly #counters: InformerCounters;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  /** Selectors, and `metadataOnly` when set: what every list and watch asks for. */
  #selectors: SelectorOptions & MetadataOnlyOption & { readonly shardSelector?: string };
  /** The shard scope's selector in force, parsed (undefined without a scope, or listing all of it). */
  #shard: ShardSelectorExpr | undefined;
  /** The selector the shard scope changed to, not listed yet. */
  #rescopeTo: string | undefined;
  /** Aborts the list or watch under way when the shard scope changes (only with a scope). */
  #step: AbortController | undefined;
  /** The signal `run` was given: commits finish under it even when a scope change ends their step. */
  #runSignal: AbortSignal | undefined;
  readonly #check: ObjectCheck;
  #state: InformerState = { phase: 'new' };
  #lastSeen = '';
  /** When `#lastSeen` last changed (clock ms), kept only once observed; else NaN. */
  #lastSeenAt = Number.NaN;
  /** Why the next list runs. */
  #listReason: ListReason = 'initial';
  #hooks: InformerMetrics | undefined;
  /** Lists are streamed (`sendInitialEvents`); false for `paginated` and after an `auto` fallback. */
  #streamLists: boolean;
  /** The transform is the default, which drops managedFields: watches need not decode them. */
  readonly #omitManagedFields: boolean;

  constructor(
    options: ResolvedInformerOptions<T>,
    sink: ReflectorSink<T>,
    counters: InformerCounters,
    log: Logger,
  ) {
    this.#o = options;
    this.#sink = sink;
    this.#counters = counters;
    this.#log = log;
    this.#backoff = new Backoff(options.clock, options.backoff);
    this.#check = objectCheck(options.type, options.namespace);
    this.#streamLists = options.initialList !== 'paginated';
    this.#omitManagedFields = options.transform === stripManagedFields;
    const { namespace, labelSelector, fieldSelector, shardSelector, metadataOnly } = options;
    this.#selectors = {
      ...(metadataOnly ? { metadataOnly } : {}),
      ...(namespace === '' ? {} : { namespace }),
      ...(labelSelector === '' ? {} : { labelSelector }),
      ...(fieldSelector === '' ? {} : { fieldSelector }),
      ...(shardSelector === '' ? {} : { shardSelector }),
    };
  }

  get state(): InformerState {
    return this.#state;
  }

  /** The resourceVersion the next watch resumes from: the last list's, advanced by every event and bookmark. */
  get lastSeenResourceVersion(): string {
    return this.#lastSeen;
  }

  /**
   * When the resourceVersion seen last advanced (an event, a bookmark or a list), in clock
   * milliseconds; NaN until something advanced it after `observe` was called.
   */
  get lastSeenAt(): number {
    return this.#lastSeenAt;
  }

  /** Sets the metric hooks (the informer joins several); also starts timing `lastSeenAt`. */
  observe(hooks: InformerMetrics): void {
    this.#hooks = hooks;
  }

  /**
   * The shard the cache holds now (a shard scope's current selector, parsed): objects outside it
   * that a relist no longer finds left the shard, they were not deleted. Undefined without a scope.
   */
  get shard(): ShardSelectorExpr | undefined {
    return this.#shard;
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let step: Step = { kind: 'list', from: 'consistent' };
    let consistentExpiries = 0;
    this.#runSignal = signal;
    const scope = this.#o.shardScope;
    const unsubscribe = scope?.onChange(() => this.#scopeChanged());
    if (scope !== undefined) this.#setShard(this.#readScope() ?? '');
    while (!signal.aborted) {
      if (this.#rescopeTo !== undefined) {
        const to = this.#rescopeTo;
        this.#log.info({ from: this.#selectors.shardSelector ?? '', to }, 'Shard changed; listing it');
        this.#setShard(to);
        this.#rescopeTo = undefined;
        this.#listReason = 'rescoped';
        step = { kind: 'list', from: 'consistent' };
      }
      // With a shard scope each list and watch runs under its own signal, aborted by a change.
      const stepSignal = scope === undefined ? signal : this.#stepSignal(signal);
      try {
        if (step.kind === 'list') {
          const outcome = this.#streamLists
            ? await this.#streamList(step.from, stepSignal)
            : await this.#list(step.from, stepSignal);
          if (outcome.kind === 'aborted') continue;
          if (outcome.kind === 'listed') {
            consistentExpiries = 0;
            step = { kind: 'watch' };
          } else if (outcome.kind === 'streamed') {
            consistentExpiries = 0;
            step = await this.#afterWatch(outcome.watch, signal);
          } else if (outcome.kind === 'unsupported') {
            // Only `auto` gets here: list page by page from now on, at once.
            this.#streamLists = false;
            this.#counters.watchListFallbacks++;
            this.#log.info({ err: outcome.error }, 'Streamed lists unsupported; using paginated lists');
          } else if (outcome.kind === 'expired') {
            // From the last seen version: retry at once with a consistent read. A consistent list
            // whose continue token expired restarts at once the first time, after a backoff after that.
            this.#log.info({ from: step.from, err: outcome.error }, 'List expired; listing again');
            this.#listReason = 'expired';
            if (step.from === 'consistent' && consistentExpiries++ > 0) {
              if (!(await this.#pause('list', 'list', outcome.error, signal))) break;
            }
            step = { kind: 'list', from: 'consistent' };
          } else {
            if (isNotFound(outcome.error)) {
              // A list is never 404 for a served resource: the kind is not served (no CRD yet).
              const { kind, group, version } = this.#o.type;
              this.#log.warn(
                { err: outcome.error, kind, group, version },
                `List failed: the server does not serve ${kind} (${group === '' ? '' : `${group}/`}${version}); ` +
                  'is its CustomResourceDefinition installed? Retrying after a backoff',
              );
            } else {
              this.#log.warn({ err: outcome.error }, 'List failed; backing off');
            }
            this.#sink.listFailed(outcome.error);
            if (!(await this.#pause('list', 'list', outcome.error, signal))) break;
          }
          continue;
        }
        step = await this.#afterWatch(await this.#watch(stepSignal), signal);
      } catch (error) {
        // Only a bug gets here (a sink or backend that throws synchronously); keep going anyway.
        this.#log.error({ err: error }, 'Informer loop failed unexpectedly; relisting');
        step = { kind: 'list', from: 'consistent' };
        this.#listReason = 'error';
        if (!(await this.#pause('list', 'list', error, signal))) break;
      } finally {
        if (stepSignal !== signal) this.#endStep(signal);
      }
    }
    unsubscribe?.();
    this.#state = { phase: 'stopped' };
  }

  /** The current shard scope's selector, canonical; undefined (logged) when it is not a valid one. */
  #readScope(): string | undefined {
    try {
      return normalizeShardSelector('shardScope', this.#o.shardScope?.selector());
    } catch (error) {
      this.#log.error({ err: error }, 'The shard scope gave an invalid selector; keeping the current one');
      return undefined;
    }
  }

  #setShard(selector: string): void {
    const { shardSelector: _, ...rest } = this.#selectors;
    this.#selectors = selector === '' ? rest : { ...rest, shardSelector: selector };
    this.#shard = selector === '' ? undefined : parseShardSelector(selector);
  }

  /** The shard scope may have changed: if it did, end the list or watch under way and list the new shard. */
  #scopeChanged(): void {
    const next = this.#readScope();
    if (next === undefined) return;
    const current = this.#rescopeTo ?? this.#selectors.shardSelector ?? '';
    if (next === current) return;
    this.#rescopeTo = next;
    this.#step?.abort();
  }

  /** A signal for one step: aborted with `signal`, or by a shard change. */
  #stepSignal(signal: AbortSignal): AbortSignal {
    const step = new AbortController();
    this.#step = step;
    if (this.#rescopeTo !== undefined) step.abort();
    signal.addEventListener('abort', this.#abortStep, { once: true });
    return step.signal;
  }

  #endStep(signal: AbortSignal): void {
    signal.removeEventListener('abort', this.#abortStep);
    this.#step = undefined;
  }

  readonly #abortStep = (): void => this.#step?.abort();

  async #afterWatch(outcome: WatchOutcome, signal: AbortSignal): Promise<Step> {
    const watch: Step = { kind: 'watch' };
    switch (outcome.kind) {
      case 'aborted':
        return watch;
      case 'closed': {
        const short = outcome.events === 0 && outcome.durationMs < SHORT_WATCH_MS;
        this.#watchEnded(short ? 'short' : 'closed');
        if (short) {
          this.#counters.shortWatches++;
          const error = new ShortWatchError(this.#o.name, outcome.durationMs);
          this.#log.warn({ err: error }, 'Watch closed at once without events; backing off');
          await this.#pause('watch', 'watch', error, signal);
        }
        return watch;
      }
      case 'failed':
        this.#watchEnded('error');
        this.#counters.watchErrors++;
        this.#log.warn({ err: outcome.error, resourceVersion: this.#lastSeen }, 'Watch failed; backing off');
        await this.#pause('watch', 'watch', outcome.error, signal);
        return watch;
      case 'expired': {
        this.#watchEnded('expired');
        this.#listReason = 'expired';
        this.#counters.expired++;
        if (outcome.events === 0) {
          const error = new WatchExpiredAtStartError(this.#o.name, this.#lastSeen, { cause: outcome.error });
          this.#log.warn({ err: error }, 'Watch expired before any event; relisting after a backoff');
          await this.#pause('watch', 'list', error, signal);
        } else {
          this.#log.info({ resourceVersion: this.#lastSeen }, 'Watch expired; relisting');
        }
        return { kind: 'list', from: 'lastSeen' };
      }
      case 'regressed':
        this.#watchEnded('regressed');
        this.#listReason = 'regressed';
        // A stream that goes backwards before any progress may do it again: do not relist in a loop.
        if (outcome.events === 0) await this.#pause('watch', 'list', outcome.error, signal);
        else this.#reportError(outcome.error, 'watch', 'list', 0);
        return { kind: 'list', from: 'consistent' };
    }
  }

  #watchEnded(reason: WatchEndReason): void {
    const hooks = this.#hooks;
    if (hooks?.onWatchEnd === undefined) return;
    try {
      hooks.onWatchEnd(this.#o.name, reason);
    } catch {
      // Observers must never break the informer.
    }
  }

  #reportError(error: unknown, during: 'list' | 'watch', next: 'list' | 'watch', retryInMs: number): void {
    reportInformerError(this.#o, this.#log, error, { informer: this.#o.name, during, next, retryInMs });
  }

  /**
   * After a failure `during` a list or watch: tells the `onError` handler, then waits out the next
   * backoff delay; false when `signal` aborted meanwhile.
   */
  async #pause(
    during: 'list' | 'watch',
    next: 'list' | 'watch',
    error: unknown,
    signal: AbortSignal,
  ): Promise<boolean> {
    const delayMs = this.#backoff.next();
    this.#state = { phase: 'backingOff', next, delayMs, error };
    this.#reportError(error, during, next, delayMs);
    try {
      await this.#o.clock.sleep(delayMs, signal);
      return true;
    } catch {
      return false;
    }
  }

  async #list(from: ListFrom, signal: AbortSignal): Promise<ListOutcome> {
    this.#state = { phase: 'listing', from, method: 'paginated' };
    const { backend, type, pageSize } = this.#o;
    const startedAt = this.#o.clock.now();
    const stage = this.#sink.stage();
    let continueToken: string | undefined;
    let resourceVersion: string | undefined;
    try {
      do {
        const start: Partial<ListOptions> =
          continueToken !== undefined
            ? { continue: continueToken }
            : from === 'lastSeen' && this.#lastSeen !== ''
              ? { resourceVersion: this.#lastSeen, resourceVersionMatch: 'NotOlderThan' }
              : {};
        const page = await backend.list<T>(type, { ...this.#selectors, ...start, limit: pageSize, signal });
        resourceVersion ??= page.resourceVersion;
        for (const item of page.items) this.#sink.stageItem(stage, item);
        continueToken = page.continue === undefined || page.continue === '' ? undefined : page.continue;
        await yieldToEventLoop();
      } while (continueToken !== undefined && !signal.aborted);
      if (typeof resourceVersion !== 'string') throw new TypeError('the list has no resourceVersion');
    } catch (error) {
      stage.discard();
      if (signal.aborted) return { kind: 'aborted' };
      if (isExpired(error)) {
        this.#counters.expired++;
        return { kind: 'expired', error };
      }
      this.#counters.listErrors++;
      return { kind: 'failed', error };
    }
    if (signal.aborted) {
      stage.discard();
      return { kind: 'aborted' };
    }
    const objects = stage.size;
    await this.#sink.commit(stage, resourceVersion, this.#runSignal ?? signal);
    this.#listed(resourceVersion, objects, 'paginated', startedAt);
    return { kind: 'listed' };
  }

  /**
   * A streamed list: one watch with `sendInitialEvents` whose initial events are staged, committed
   * at the initial-events-end bookmark, and which then goes on as the watch. Until the commit its
   * outcomes are a list's (nothing is published from an incomplete stream); after it, a watch's.
   */
  async #streamList(from: ListFrom, signal: AbortSignal): Promise<StreamedListOutcome> {
    this.#state = { phase: 'listing', from, method: 'watch-list' };
    const stage = this.#sink.stage();
    const resourceVersion = from === 'lastSeen' ? this.#lastSeen : '';
    const initial = { stage, resourceVersion, committed: false, received: 0 };
    const outcome = await this.#watch(signal, initial);
    if (initial.committed) return { kind: 'streamed', watch: outcome };
    stage.discard();
    switch (outcome.kind) {
      case 'aborted':
        return outcome;
      case 'closed': {
        this.#counters.listErrors++;
        return { kind: 'failed', error: new InitialEventsIncompleteError(this.#o.name, initial.received) };
      }
      case 'expired':
        this.#counters.expired++;
        return { kind: 'expired', error: outcome.error };
      case 'regressed':
      case 'failed': {
        const unsupported =
          outcome.error instanceof WatchListUnsupportedError
            ? outcome.error
            : initial.received === 0 && REJECTIONS.has((outcome.error as { code?: unknown } | null)?.code)
              ? new WatchListUnsupportedError(this.#o.name, 'the backend rejected the watch', {
                  cause: outcome.error,
                })
              : undefined;
        if (unsupported !== undefined && this.#o.initialList === 'auto') {
          return { kind: 'unsupported', error: unsupported };
        }
        this.#counters.listErrors++;
        return { kind: 'failed', error: unsupported ?? outcome.error };
      }
    }
  }

  /**
   * One watch until it ends. With `initial` it is a streamed list: events before the
   * initial-events-end bookmark go to `initial.stage`, the bookmark commits it (`committed`), and
   * the rest are watch events as usual.
   */
  async #watch(
    signal: AbortSignal,
    initial?: { stage: CacheStage<T>; resourceVersion: string; committed: boolean; received: number },
  ): Promise<WatchOutcome> {
    const from = initial === undefined ? this.#lastSeen : initial.resourceVersion;
    if (initial === undefined) this.#state = { phase: 'watching', resourceVersion: from };
    this.#counters.watches++;
    const { backend, type, clock, watchTimeoutMinMs: min, watchTimeoutMaxMs: max } = this.#o;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const startedAt = clock.now();
    let events = 0;
    let staging = initial !== undefined;
    try {
      const timeoutMs = Math.round(min + clock.random() * (max - min));
      const stream = backend.watch<T>(type, {
        ...this.#selectors,
        ...(initial === undefined || from !== '' ? { resourceVersion: from } : {}),
        allowBookmarks: true,
        ...(this.#omitManagedFields ? { omitManagedFields: true } : {}),
        ...(initial === undefined ? {} : { sendInitialEvents: true }),
        timeoutMs,
        signal: stop.signal,
      });
      for await (const event of stream) {
        if (signal.aborted) return { kind: 'aborted' };
        if (staging && initial !== undefined) {
          const verdict = this.#onInitialEvent(event, initial.stage);
          if (verdict instanceof WatchListUnsupportedError) return { kind: 'failed', error: verdict };
          if (verdict === 'end') {
            const resourceVersion = (event as { resourceVersion: string }).resourceVersion;
            const objects = initial.stage.size;
            await this.#sink.commit(initial.stage, resourceVersion, this.#runSignal ?? signal);
            initial.committed = true;
            staging = false;
            this.#listed(resourceVersion, objects, 'watch-list', startedAt);
            if (signal.aborted) return { kind: 'aborted' };
            this.#state = { phase: 'watching', resourceVersion };
          } else initial.received++;
        } else {
          const verdict = this.#onEvent(event);
          if (verdict instanceof ResourceVersionRegressionError)
            return { kind: 'regressed', events, error: verdict };
        }
        if (++events % YIELD_EVERY === 0) await yieldToEventLoop();
      }
      if (signal.aborted) return { kind: 'aborted' };
      return { kind: 'closed', events, durationMs: clock.now() - startedAt };
    } catch (error) {
      if (signal.aborted) return { kind: 'aborted' };
      return isExpired(error) ? { kind: 'expired', events, error } : { kind: 'failed', error };
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  /** Records a committed list (paginated or streamed) at `resourceVersion`. */
  #listed(resourceVersion: string, objects: number, method: ListMethod, startedAt: number): void {
    this.#lastSeen = resourceVersion;
    if (this.#counters.lists++ > 0) this.#counters.relists++;
    const hooks = this.#hooks;
    if (hooks !== undefined) {
      const now = this.#o.clock.now();
      this.#lastSeenAt = now;
      const reason = this.#listReason;
      try {
        hooks.onList?.(this.#o.name, now - startedAt, { method, reason, objects });
      } catch {
        // Observers must never break the informer.
      }
    }
    this.#listReason = 'error';
    this.#log.debug({ resourceVersion, objects, method }, 'Listed');
  }

  /**
   * An event before the initial-events-end bookmark: an ADDED is staged (checked and transformed
   * like a list item), a malformed event or another bookmark is skipped, the end bookmark says so,
   * and a MODIFIED or DELETED means the backend does not honour `sendInitialEvents`.
   */
  #onInitialEvent(raw: unknown, stage: CacheStage<T>): InitialVerdict {
    const problem = eventProblem(raw);
    if (problem !== undefined) {
      this.#malformed(raw, problem);
      return 'staged';
    }
    const event = raw as WatchEvent<T>;
    if (event.type === 'BOOKMARK') return event.initialEventsEnd === true ? 'end' : 'staged';
    if (event.type !== 'ADDED') {
      return new WatchListUnsupportedError(
        this.#o.name,
        `a ${event.type} event came before the initial-events-end bookmark`,
      );
    }
    this.#sink.stageItem(stage, event.object);
    return 'staged';
  }

  #malformed(raw: unknown, problem: string): void {
    this.#counters.malformed++;
    const eventType = String((raw as { type?: unknown } | null)?.type);
    const error = new MalformedEventError(this.#o.name, eventType, problem);
    this.#log.warn({ eventType, err: error }, 'Skipped a malformed watch event');
  }

  #onEvent(raw: unknown): Verdict {
    const problem =
      eventProblem(raw) ??
      ((raw as { type: string }).type === 'BOOKMARK'
        ? undefined
        : this.#check((raw as { object?: unknown }).object));
    if (problem !== undefined) {
      this.#malformed(raw, problem);
      return 'skipped';
    }
    const event = raw as WatchEvent<T>;
    const version =
      event.type === 'BOOKMARK' ? event.resourceVersion : (event.object.metadata.resourceVersion ?? '');
    if (isOlderResourceVersion(version, this.#lastSeen)) {
      this.#counters.regressions++;
      const error = new ResourceVersionRegressionError(this.#o.name, this.#lastSeen, version);
      this.#log.warn({ eventType: event.type, err: error }, 'Resource version went backwards; relisting');
      return error;
    }
    if (event.type !== 'BOOKMARK') this.#counters.events++;
    this.#sink.apply(event);
    if (version !== '') {
      this.#lastSeen = version;
      if (this.#hooks !== undefined) this.#lastSeenAt = this.#o.clock.now();
    }
    return 'applied';
  }
}
