import {
  apiVersionOf,
  BadRequestError,
  InvalidError,
  type KubeObject,
  type ListOptions,
  type Logger,
  type ObjectList,
  parseShardSelector,
  type ResourceType,
  type ShardSelectorExpr,
  type WatchEvent,
  type WatchOptions,
} from '@converge/runtime';
import { METADATA_OBJECT_ACCEPT } from '../decode/index.ts';
import type { Transport } from '../http/index.ts';
import type { ResolvedKubeBackendOptions } from './options.ts';
import { resourcePath } from './paths.ts';
import { DONE, WatchSession } from './watch-session.ts';

/** A watch past its `timeoutSeconds` gets this long to be closed by the server before it counts as stalled. */
const SERVER_CLOSE_GRACE_MS = 30_000;
const LIST_PAGE = 500;

/** Watch counters of a backend. */
export interface WatchCounters {
  watches: number;
  stalledWatches: number;
  /** `sendInitialEvents` watches served by list + watch because the server rejected them. */
  watchListFallbacks: number;
}

/** What watches need from their backend. */
export interface WatchContext {
  readonly options: ResolvedKubeBackendOptions;
  readonly transport: Transport;
  readonly logger: Logger;
  readonly counters: WatchCounters;
  /** Set once the server rejected `sendInitialEvents` (then emulated with list + watch). */
  readonly state: { watchListUnsupported: boolean };
  list<T extends KubeObject>(type: ResourceType, options: ListOptions): Promise<ObjectList<T>>;
}

/** client-go's reflector: a random server-side timeout in [5, 10) minutes spreads reconnects. */
function timeoutSecondsOf(ctx: WatchContext, options: WatchOptions): number {
  if (options.timeoutMs !== undefined) return Math.max(1, Math.ceil(options.timeoutMs / 1000));
  return 300 + Math.floor(ctx.options.clock.random() * 300);
}

function session(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
  initialEvents: boolean,
): WatchSession {
  const { options: o } = ctx;
  const timeoutSeconds = timeoutSecondsOf(ctx, options);
  const bookmarksOnWire = options.allowBookmarks === true || initialEvents;
  const deadline = timeoutSeconds * 1000 + SERVER_CLOSE_GRACE_MS;
  const idleLimitMs = bookmarksOnWire
    ? Math.min(o.watchBookmarkIntervalMs * o.watchStallFactor, deadline)
    : deadline;
  const rv = options.resourceVersion;
  const path = resourcePath(type, type.namespaced ? (options.namespace ?? '') : '');
  ctx.counters.watches++;
  return new WatchSession({
    transport: ctx.transport,
    clock: o.clock,
    path,
    query: {
      watch: 'true',
      ...(rv === undefined || rv === '' ? {} : { resourceVersion: rv }),
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      shardSelector: options.shardSelector === '' ? undefined : options.shardSelector,
      ...(bookmarksOnWire ? { allowWatchBookmarks: 'true' } : {}),
      ...(initialEvents ? { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' } : {}),
      timeoutSeconds: String(timeoutSeconds),
    },
    typeMeta: { apiVersion: apiVersionOf(type), kind: type.kind },
    // kube-apiserver transforms every watch event's object to PartialObjectMetadata for this
    // (ERROR events keep their Status); the session projects full objects of servers that do not.
    ...(options.metadataOnly === true ? { accept: METADATA_OBJECT_ACCEPT, metadataOnly: true } : {}),
    ...(options.omitManagedFields === true ? { omitManagedFields: true } : {}),
    idleLimitMs,
    maxLineBytes: o.maxWatchLineBytes,
    bookmarks: options.allowBookmarks === true,
    signal: options.signal,
    onStall: () => {
      ctx.counters.stalledWatches++;
      ctx.logger.warn({ path, idleLimitMs }, 'Watch stalled: no data within the limit; closed it');
    },
  });
}

/**
 * `sendInitialEvents` where the server rejects it: the initial events from a paginated list, the
 * initial-events-end BOOKMARK at the list's resourceVersion, then a watch from there.
 */
async function* emulateWatchList<T extends KubeObject>(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const { namespace, labelSelector, fieldSelector, shardSelector, signal, metadataOnly } = options;
  const selectors = {
    ...(metadataOnly === true ? { metadataOnly } : {}),
    ...(namespace === undefined ? {} : { namespace }),
    ...(labelSelector === undefined ? {} : { labelSelector }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    ...(shardSelector === undefined ? {} : { shardSelector }),
    ...(signal === undefined ? {} : { signal }),
  };
  const from = options.resourceVersion;
  let token: string | undefined;
  let listVersion: string | undefined;
  try {
    do {
      const start =
        token !== undefined
          ? { continue: token }
          : from === undefined || from === '' || from === '0'
            ? {}
            : { resourceVersion: from, resourceVersionMatch: 'NotOlderThan' as const };
      const page = await ctx.list<T>(type, { ...selectors, ...start, limit: LIST_PAGE });
      listVersion ??= page.resourceVersion;
      for (const object of page.items) yield { type: 'ADDED', object };
      token = page.continue;
    } while (token !== undefined && token !== '');
  } catch (error) {
    if (signal?.aborted === true) return;
    throw error;
  }
  const resourceVersion = listVersion as string;
  yield { type: 'BOOKMARK', resourceVersion, initialEventsEnd: true };
  const { sendInitialEvents: _s, ...rest } = options;
  yield* new OpenedOnFirstRead<WatchEvent<T>>(() =>
    openUnsharded<T>(ctx, type, { ...rest, resourceVersion }),
  );
}

/**
 * The watch of a {@link KubeBackend}: a chunked NDJSON stream decoded incrementally (line cap,
 * ERROR events as typed errors), bookmarks on request, a random 5–10 minute `timeoutSeconds`
 * unless `timeoutMs` is given, stall detection, a clean end on abort, and `sendInitialEvents`
 * (falling back to list + watch once if the server rejects it). A `shardSelector` is parsed first
 * (malformed: a BadRequestError from the first read), sent, and applied to the events as well.
 *
 * @example
 * for await (const event of watchEvents(context, configMaps, { resourceVersion: '42', allowBookmarks: true })) handle(event);
 */
export function watchEvents<T extends KubeObject>(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
): AsyncIterableIterator<WatchEvent<T>> {
  const { shardSelector } = options;
  // Unsharded, the session's own iterator once it is open: no generator passing each event on.
  if (shardSelector === undefined || shardSelector === '')
    return new OpenedOnFirstRead<WatchEvent<T>>(() => openUnsharded<T>(ctx, type, options));
  return sharded<T>(ctx, type, options, shardSelector);
}

/** The watch with a shard selector: parsed at the first read (a malformed one fails it). */
async function* sharded<T extends KubeObject>(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
  shardSelector: string,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const shard = parseShardSelector(shardSelector);
  yield* inShard(shard, new OpenedOnFirstRead<WatchEvent<T>>(() => openUnsharded<T>(ctx, type, options)));
}

/**
 * The events of objects in the shard, and every bookmark. Sent as the `shardSelector` parameter
 * too; this filter covers a server without the `ShardedListAndWatch` feature gate, which ignores
 * it. The uid and namespace never change, so an object never enters or leaves a shard.
 */
async function* inShard<T extends KubeObject>(
  shard: ShardSelectorExpr,
  events: AsyncIterable<WatchEvent<T>>,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  for await (const event of events) {
    if (event.type === 'BOOKMARK' || shard.matches(event.object)) yield event;
  }
}

/**
 * Sends the watch and answers the iterator of its events: the session's own, or, where the
 * server rejects `sendInitialEvents`, the list + watch that stands in for it. Undefined when the
 * caller aborted first (no events).
 */
async function openUnsharded<T extends KubeObject>(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
): Promise<AsyncIterator<WatchEvent<T>> | undefined> {
  if (options.signal?.aborted === true) return undefined;
  const initialEvents = options.sendInitialEvents === true;
  if (initialEvents && ctx.state.watchListUnsupported) {
    ctx.counters.watchListFallbacks++;
    return emulateWatchList<T>(ctx, type, options);
  }
  const s = session(ctx, type, options, initialEvents);
  try {
    await s.open();
  } catch (error) {
    s.close();
    if (s.callerAborted) return undefined;
    if (!initialEvents || !(error instanceof InvalidError || error instanceof BadRequestError)) throw error;
    ctx.state.watchListUnsupported = true;
    ctx.counters.watchListFallbacks++;
    ctx.logger.info({ err: error }, 'The API server rejected sendInitialEvents; using list + watch instead');
    return emulateWatchList<T>(ctx, type, options);
  }
  return s.events<T>();
}

/**
 * An async iterator whose source is opened by its first `next()`, and to which every later call
 * goes straight on (one function call, no promise of its own per item). `return()` reaches the
 * source, or keeps it from opening.
 */
class OpenedOnFirstRead<T> implements AsyncIterableIterator<T> {
  #open: (() => Promise<AsyncIterator<T> | undefined>) | undefined;
  #source: AsyncIterator<T> | undefined;
  #closed = false;

  constructor(open: () => Promise<AsyncIterator<T> | undefined>) {
    this.#open = open;
  }

  next(): Promise<IteratorResult<T>> {
    const source = this.#source;
    if (source !== undefined) return source.next();
    const open = this.#open;
    if (open === undefined) return Promise.resolve(DONE);
    this.#open = undefined;
    return open().then((opened) => {
      if (opened === undefined) return DONE;
      if (this.#closed) {
        opened.return?.()?.catch(() => {});
        return DONE;
      }
      this.#source = opened;
      return opened.next();
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.#closed = true;
    this.#open = undefined;
    const source = this.#source;
    this.#source = undefined;
    return source?.return !== undefined ? source.return() : Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
