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
import { WatchSession } from './watch-session.ts';

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

/** Opens a session and yields its events; a caller abort ends it cleanly. */
async function* stream<T extends KubeObject>(
  s: WatchSession,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  try {
    try {
      await s.open();
    } catch (error) {
      if (s.callerAborted) return;
      throw error;
    }
    yield* s.events<T>();
  } finally {
    s.close();
  }
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
  yield* stream<T>(session(ctx, type, { ...rest, resourceVersion }, false));
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
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const { shardSelector } = options;
  // Unsharded, the events as they come: no generator of its own passing each one on.
  if (shardSelector === undefined || shardSelector === '') return unsharded<T>(ctx, type, options);
  return sharded<T>(ctx, type, options, shardSelector);
}

/** The watch with a shard selector: parsed at the first read (a malformed one fails it). */
async function* sharded<T extends KubeObject>(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
  shardSelector: string,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  yield* inShard(parseShardSelector(shardSelector), unsharded<T>(ctx, type, options));
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

async function* unsharded<T extends KubeObject>(
  ctx: WatchContext,
  type: ResourceType,
  options: WatchOptions,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  if (options.signal?.aborted === true) return;
  if (options.sendInitialEvents !== true) {
    yield* stream<T>(session(ctx, type, options, false));
    return;
  }
  if (!ctx.state.watchListUnsupported) {
    const s = session(ctx, type, options, true);
    let rejected = false;
    try {
      try {
        await s.open();
      } catch (error) {
        if (s.callerAborted) return;
        if (!(error instanceof InvalidError || error instanceof BadRequestError)) throw error;
        rejected = true;
        ctx.state.watchListUnsupported = true;
        ctx.counters.watchListFallbacks++;
        ctx.logger.info(
          { err: error },
          'The API server rejected sendInitialEvents; using list + watch instead',
        );
      }
      if (!rejected) {
        yield* s.events<T>();
        return;
      }
    } finally {
      s.close();
    }
  } else {
    ctx.counters.watchListFallbacks++;
  }
  yield* emulateWatchList<T>(ctx, type, options);
}
