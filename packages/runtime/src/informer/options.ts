import type { Backend } from '../backend/index.ts';
import { type ResourceType, resourceType } from '../backend/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { durationMs, func, integer, nonEmptyString, positiveDurationMs } from '../options.ts';
import { normalizeFieldSelector, normalizeLabelSelector, normalizeShardSelector } from './selectors.ts';
import { stripManagedFields } from './transform.ts';

/**
 * Retry timing after errors: client-go's reflector backoff. The delay before retry `n` (from 0) is
 * `min(initialMs × factor^n, maxMs)` plus a random extra of up to `jitter` times that, so with the
 * defaults retries settle at 30–60 s (client-go's "[30,60) sec", about 0.02–0.03 QPS per informer).
 * After `resetAfterMs` without an error the next delay starts again from `initialMs`.
 */
export interface BackoffOptions {
  /** Default 800. */
  readonly initialMs?: number;
  /** Cap of the delay before jitter. Default 30 000. */
  readonly maxMs?: number;
  /** Quiet time after which the delay starts over. Default 120 000. */
  readonly resetAfterMs?: number;
  /** Growth per consecutive error, >= 1. Default 2. */
  readonly factor?: number;
  /** Extra random fraction of the delay, >= 0. Default 1 (up to double). */
  readonly jitter?: number;
}

/**
 * How an informer reads the full state (at start and on every relist):
 * - `watch-list`: one watch with `sendInitialEvents` (Kubernetes' streaming list, KEP-3157). Its
 *   initial ADDED events are staged until the BOOKMARK marked `initialEventsEnd`, swapped into the
 *   cache at once, and the same watch then goes on with live events;
 * - `paginated`: a list page by page (`limit` / `continue`), then a separate watch from its
 *   resourceVersion;
 * - `auto`: `watch-list`, falling back to `paginated` for good (logged, counted in
 *   `watchListFallbacks`) when the backend rejects `sendInitialEvents` (a BadRequest, Invalid or
 *   Unsupported error before any event) or breaks its contract (an event other than ADDED before the
 *   end bookmark).
 */
export type InitialListMode = 'auto' | 'watch-list' | 'paginated';

const INITIAL_LIST_MODES: readonly InitialListMode[] = ['auto', 'watch-list', 'paginated'];

/** A shard selector that changes over time; see {@link InformerOptions.shardScope}. */
export interface InformerShardScope {
  /** The KEP-5866 shard selector to list and watch with now. */
  selector(): string;
  /** Calls `listener` whenever `selector()` may have changed; returns a function that removes it. */
  onChange(listener: () => void): () => void;
}

/** Options of an {@link Informer}. */
export interface InformerOptions<T extends KubeObject = KubeObject> {
  readonly backend: Backend;
  /** The kind to list and watch. */
  readonly type: ResourceType;
  /** One namespace of a namespaced kind; undefined or '' means all namespaces. */
  readonly namespace?: string;
  /** Server-side label selection, Kubernetes syntax. */
  readonly labelSelector?: string;
  /** Server-side field selection, Kubernetes syntax. */
  readonly fieldSelector?: string;
  /**
   * Only this shard of the kind (KEP-5866 `shardSelector`, e.g. from `shardSelectorFor(i, n)`):
   * every list and watch asks the backend for it, and every backend honours it. Default: all.
   */
  readonly shardSelector?: string;
  /**
   * A shard that changes while the informer runs (a shard member's share, from
   * `ShardMember.cacheScope`): every list and watch asks for `scope.selector()`. When it changes the
   * informer lists again with the new selector, without a gap in what it caches of what both
   * selectors hold: objects that came into the shard are created, objects that left it are dropped
   * from the cache without a delete event (nothing was deleted), and an object deleted meanwhile in
   * the shard is a delete as always. Not with `shardSelector`. Default: none.
   */
  readonly shardScope?: InformerShardScope;
  /**
   * Cache only metadata (controller-runtime's `OnlyMetadata`, kube-rs' `metadata_watcher`): lists and
   * watches ask the backend for metadata only, and every cached object and event is a
   * `PartialObjectMetadata` — `{ apiVersion, kind, metadata }` of `type`, nothing else (an object
   * from a backend that sends more is projected first). For kinds whose objects are only mapped
   * to owners or counted: thousands of Pods or Secrets without their bodies. Type the informer
   * `Informer<PartialObjectMetadata>`. A separate informer from the full one of the same kind.
   * What the cached objects of one owner repeat (owner references, equal labels and annotations,
   * timestamps) is held once, frozen and shared between them: compare such values by value, not
   * by identity. Default false.
   */
  readonly metadataOnly?: boolean;
  /** Replay every cached object to listeners as an update this often; 0 (default) = off. */
  readonly resyncPeriodMs?: number;
  /**
   * Applied to every object before it is cached (to drop what nobody reads). Default
   * {@link stripManagedFields}. The object may be frozen and shared with the backend (the in-process
   * store hands out its own frozen objects): return a changed copy, never change it in place. If
   * it throws, the object is cached untransformed (logged). With the default, watches ask the
   * backend not to decode managedFields at all (`WatchOptions.omitManagedFields`: the Kubernetes
   * backend cuts them out of each event's text before parsing it, a third of a Pod's bytes).
   */
  readonly transform?: (object: T) => T;
  /**
   * How the full state is read: see {@link InitialListMode}. Default `auto` (a streamed list where
   * the backend supports it: every Backend passing `runBackendSuite` does).
   */
  readonly initialList?: InitialListMode;
  /** Objects per list page (`limit`) of a paginated list. Default 500. */
  readonly pageSize?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** A name for logs. Default the plural (`pods`, `pods:metadata` when metadata-only), with `/namespace` when scoped. */
  readonly name?: string;
  /** Server-side watch timeout, drawn at random per watch in [min, max]. Default 300 000 – 600 000. */
  readonly watchTimeoutMinMs?: number;
  readonly watchTimeoutMaxMs?: number;
  readonly backoff?: BackoffOptions;
  /**
   * Told of every error the informer recovers from on its own (grafana app-sdk's informer
   * `ErrorHandler`, client-go's `SetWatchErrorHandler`): a list or watch that failed (retried
   * after `retryInMs`), and a listener that threw (its event is not delivered again). The informer
   * logs each one anyway; a handler that throws is logged and ignored. Default none.
   */
  readonly onError?: (error: unknown, info: InformerErrorInfo) => void;
}

/** What an {@link InformerOptions.onError} handler learns about an error. */
export type InformerErrorInfo =
  | {
      /** The informer's name. */
      readonly informer: string;
      /** What failed: the list or the watch (the informer retries on its own). */
      readonly during: 'list' | 'watch';
      /** What it does next, and after how long. */
      readonly next: 'list' | 'watch';
      readonly retryInMs: number;
    }
  | {
      readonly informer: string;
      /** A listener (an event handler) threw on an event of this type. */
      readonly during: 'listener';
      readonly eventType: string;
    };

/** Tells `options.onError` (if any) of `error`; a handler that throws is logged and ignored. */
export function reportInformerError(
  options: { readonly onError: ((error: unknown, info: InformerErrorInfo) => void) | undefined },
  log: Logger,
  error: unknown,
  info: InformerErrorInfo,
): void {
  if (options.onError === undefined) return;
  try {
    options.onError(error, info);
  } catch (handlerError) {
    log.error({ err: handlerError }, 'Informer onError handler threw; ignored');
  }
}

/** {@link InformerOptions} with every default filled in and every value checked. */
export interface ResolvedInformerOptions<T extends KubeObject> {
  readonly backend: Backend;
  readonly type: ResourceType;
  readonly namespace: string;
  readonly labelSelector: string;
  readonly fieldSelector: string;
  /** Canonical shard selector; '' for none. */
  readonly shardSelector: string;
  readonly shardScope: InformerShardScope | undefined;
  readonly metadataOnly: boolean;
  readonly resyncPeriodMs: number;
  readonly transform: (object: T) => T;
  readonly initialList: InitialListMode;
  readonly pageSize: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly name: string;
  readonly watchTimeoutMinMs: number;
  readonly watchTimeoutMaxMs: number;
  readonly backoff: Required<BackoffOptions>;
  readonly onError: ((error: unknown, info: InformerErrorInfo) => void) | undefined;
}

/** Checks `options` once and fills in the defaults; throws an {@link OptionsError} naming the field. */
export function resolveInformerOptions<T extends KubeObject>(
  options: InformerOptions<T>,
): ResolvedInformerOptions<T> {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const { backend } = options;
  if (
    typeof backend !== 'object' ||
    backend === null ||
    typeof backend.list !== 'function' ||
    typeof backend.watch !== 'function'
  ) {
    throw new OptionsError('backend', backend, 'a Backend with list() and watch()');
  }
  const type = resourceType(options.type);
  const namespace = options.namespace ?? '';
  if (typeof namespace !== 'string') throw new OptionsError('namespace', namespace, 'a string');
  if (namespace !== '' && !type.namespaced) {
    throw new OptionsError('namespace', namespace, `no namespace: ${type.kind} is cluster-scoped`);
  }
  const metadataOnly = options.metadataOnly ?? false;
  if (typeof metadataOnly !== 'boolean') throw new OptionsError('metadataOnly', metadataOnly, 'a boolean');
  const plural = metadataOnly ? `${type.plural}:metadata` : type.plural;
  const watchTimeoutMinMs = positiveDurationMs('watchTimeoutMinMs', options.watchTimeoutMinMs, 300_000);
  const watchTimeoutMaxMs = positiveDurationMs(
    'watchTimeoutMaxMs',
    options.watchTimeoutMaxMs,
    Math.max(600_000, watchTimeoutMinMs),
  );
  if (watchTimeoutMaxMs < watchTimeoutMinMs) {
    throw new OptionsError(
      'watchTimeoutMaxMs',
      watchTimeoutMaxMs,
      `a duration >= watchTimeoutMinMs (${watchTimeoutMinMs})`,
    );
  }
  return {
    backend,
    type,
    namespace,
    labelSelector: normalizeLabelSelector('labelSelector', options.labelSelector),
    fieldSelector: normalizeFieldSelector('fieldSelector', options.fieldSelector),
    shardSelector: normalizeShardSelector('shardSelector', options.shardSelector),
    shardScope: shardScopeOption(options.shardScope, options.shardSelector),
    metadataOnly,
    resyncPeriodMs: durationMs('resyncPeriodMs', options.resyncPeriodMs, 0),
    transform: func('transform', options.transform, stripManagedFields as (object: T) => T),
    initialList: initialListOption(options.initialList),
    pageSize: integer('pageSize', options.pageSize, 500, 1),
    clock: clockOption(options.clock),
    logger: loggerOption(options.logger),
    name: nonEmptyString('name', options.name, namespace === '' ? plural : `${plural}/${namespace}`),
    watchTimeoutMinMs,
    watchTimeoutMaxMs,
    backoff: resolveBackoff(options.backoff),
    onError: func('onError', options.onError, undefined),
  };
}

function resolveBackoff(backoff: BackoffOptions | undefined): Required<BackoffOptions> {
  if (backoff !== undefined && (typeof backoff !== 'object' || backoff === null)) {
    throw new OptionsError('backoff', backoff, 'an object');
  }
  const b = backoff ?? {};
  const initialMs = positiveDurationMs('backoff.initialMs', b.initialMs, 800);
  const maxMs = positiveDurationMs('backoff.maxMs', b.maxMs, Math.max(30_000, initialMs));
  if (maxMs < initialMs)
    throw new OptionsError('backoff.maxMs', maxMs, `a duration >= backoff.initialMs (${initialMs})`);
  const factor = b.factor ?? 2;
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) {
    throw new OptionsError('backoff.factor', factor, 'a finite number >= 1');
  }
  const jitter = b.jitter ?? 1;
  if (typeof jitter !== 'number' || !Number.isFinite(jitter) || jitter < 0) {
    throw new OptionsError('backoff.jitter', jitter, 'a finite number >= 0');
  }
  return {
    initialMs,
    maxMs,
    resetAfterMs: positiveDurationMs('backoff.resetAfterMs', b.resetAfterMs, 120_000),
    factor,
    jitter,
  };
}

function initialListOption(value: InitialListMode | undefined): InitialListMode {
  if (value === undefined) return 'auto';
  if (!INITIAL_LIST_MODES.includes(value)) {
    throw new OptionsError(
      'initialList',
      value,
      `one of ${INITIAL_LIST_MODES.map((m) => `'${m}'`).join(', ')}`,
    );
  }
  return value;
}

function clockOption(value: Clock | undefined): Clock {
  if (value === undefined) return realClock;
  const methods = ['now', 'setTimer', 'sleep', 'random'] as const;
  if (typeof value !== 'object' || value === null || methods.some((m) => typeof value[m] !== 'function')) {
    throw new OptionsError('clock', value, 'a Clock with now, setTimer, sleep and random');
  }
  return value;
}

function loggerOption(value: Logger | undefined): Logger {
  if (value === undefined) return noopLogger;
  const methods = ['debug', 'info', 'warn', 'error'] as const;
  if (typeof value !== 'object' || value === null || methods.some((m) => typeof value[m] !== 'function')) {
    throw new OptionsError('logger', value, 'a logger with debug, info, warn and error methods');
  }
  return value;
}

function shardScopeOption(scope: unknown, selector: string | undefined): InformerShardScope | undefined {
  if (scope === undefined) return undefined;
  const given = scope as Partial<InformerShardScope> | null;
  if (
    typeof given !== 'object' ||
    given === null ||
    typeof given.selector !== 'function' ||
    typeof given.onChange !== 'function'
  ) {
    throw new OptionsError('shardScope', scope, 'an object with selector() and onChange(listener)');
  }
  if (selector !== undefined && selector !== '') {
    throw new OptionsError('shardScope', scope, 'no shardScope beside a shardSelector: one or the other');
  }
  return given as InformerShardScope;
}
