import {
  AbortedError,
  BadRequestError,
  ExpiredError,
  type KubeObject,
  objectSelector,
  UnavailableError,
  type WatchEvent,
  type WatchOptions,
} from '@converge/runtime';
import type { JsMsg } from '@nats-io/jetstream';
import type { TypeBucket } from './bucket.ts';
import { type DecodedEntry, objectFromKey, type RawEntry } from './codec.ts';
import type { BackendContext } from './context.ts';
import { compareObjects, parseRevision } from './list.ts';
import { OrderedStream } from './ordered-stream.ts';
import { collectInitial } from './snapshot.ts';
import { StreamGuard } from './stream-guard.ts';
import { Waker } from './waker.ts';

type Event = WatchEvent<KubeObject>;
type Matcher = (object: KubeObject) => boolean;

/** What a watch needs to turn entries into events. */
interface Scope {
  readonly ctx: BackendContext;
  readonly bucket: TypeBucket;
  /** Namespace and field selector: they depend only on the key, so they never change for a key. */
  readonly keys: Matcher;
  /** The label and shard selectors, if any: they are judged on an object's state. */
  readonly labels: Matcher | undefined;
  /** For label- or shard-selector watches: whether each key's previous state matched. */
  readonly matched: Map<string, boolean>;
  /** True when `matched` knows every key (a watch that started with the initial events). */
  readonly complete: boolean;
  /**
   * True when `labels` is a shard selector alone: it reads the uid or namespace, which an update
   * keeps, so a known state tells what the state before it matched (no read of the history).
   */
  readonly stable: boolean;
}

/**
 * A watch of one bucket as an async iterable (see {@link NatsBackend.watch} for the contract).
 * Every error — a bad selector, an expired revision, a lost consumer — surfaces from the iteration.
 */
export function watchObjects(
  ctx: BackendContext,
  bucket: TypeBucket,
  options: WatchOptions,
  closing: AbortSignal,
): AsyncIterable<Event> {
  return { [Symbol.asyncIterator]: () => run(ctx, bucket, options, closing) };
}

async function* run(
  ctx: BackendContext,
  bucket: TypeBucket,
  options: WatchOptions,
  closing: AbortSignal,
): AsyncGenerator<Event, void, undefined> {
  const { namespace = '', labelSelector = '', fieldSelector = '', allowBookmarks = false } = options;
  const { shardSelector = '' } = options;
  const keys = objectSelector({ namespace, fieldSelector });
  // A shard selector reads the uid, which a bare delete marker lacks: it is judged with the labels,
  // on the states this watch knows, so such a delete still reaches the shard that had the object.
  const labels =
    labelSelector === '' && shardSelector === ''
      ? undefined
      : objectSelector({ labelSelector, shardSelector });
  const requested = parseRevision(options.resourceVersion, 'resourceVersion');
  const timeoutMs = options.timeoutMs;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs >= 0))) {
    throw new BadRequestError(
      `invalid timeoutMs ${String(timeoutMs)}: expected a number of milliseconds >= 0`,
    );
  }
  const initial = options.sendInitialEvents === true || requested === undefined || requested === 0;
  const signal = options.signal === undefined ? closing : AbortSignal.any([options.signal, closing]);
  if (signal.aborted) return;
  const clock = ctx.options.clock;
  const waker = new Waker();
  let stream: OrderedStream | undefined;
  let guard: StreamGuard | undefined;
  // A lost or recreated consumer may mean a deleted or recreated stream: check it at once.
  const consuming = {
    heartbeatMs: ctx.options.heartbeatMs,
    onTrouble: (reason: string): void => {
      ctx.options.logger.debug(
        { bucket: bucket.name, reason },
        'Watch consumer in trouble; checking its stream',
      );
      guard?.check();
    },
  };
  const onAbort = (): void => {
    waker.fire('abort');
    void stream?.close();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const timeout =
    timeoutMs === undefined ? undefined : clock.setTimer(() => waker.fire('timeout'), timeoutMs);
  let bookmarkTimer = allowBookmarks
    ? clock.setTimer(() => waker.fire('bookmark'), ctx.options.bookmarkIntervalMs)
    : undefined;
  try {
    const baseline = await StreamGuard.baseline(bucket);
    const state = baseline.state;
    const stable = labelSelector === '' && shardSelector !== '';
    const scope: Scope = { ctx, bucket, keys, labels, matched: new Map(), complete: initial, stable };
    let cursor: number;
    if (initial) {
      stream = await OrderedStream.open(ctx.js, bucket, { lastPerKey: true }, consuming);
      const opened = stream;
      if (signal.aborted) return;
      let snapshot: Awaited<ReturnType<typeof collectInitial>>;
      try {
        snapshot = await collectInitial(opened, bucket, state.last, signal);
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      if (requested !== undefined && requested > snapshot.revision)
        throw newerThanBucket(bucket, requested, snapshot.revision);
      for (const event of initialEvents(scope, snapshot.entries.values())) yield event;
      cursor = snapshot.revision;
      if (options.sendInitialEvents === true) {
        yield { type: 'BOOKMARK', resourceVersion: String(cursor), initialEventsEnd: true };
      }
    } else {
      const from = requested as number;
      if (from > state.last) throw newerThanBucket(bucket, from, state.last);
      if (state.last > from && state.first > from + 1) throw expiredAt(bucket, from, state.first);
      stream = await OrderedStream.open(ctx.js, bucket, { fromRevision: from + 1 }, consuming);
      cursor = from;
    }
    guard = StreamGuard.start(bucket, baseline, {
      clock,
      intervalMs: ctx.options.streamCheckIntervalMs,
      cursor: () => cursor,
      onExpired: () => waker.fire('expired'),
      logger: ctx.options.logger,
    });
    const checked = guard;
    let pending: Promise<{ message: JsMsg | undefined } | { error: unknown }> | undefined;
    for (;;) {
      const reasons = waker.take();
      if (reasons.has('abort')) return;
      checked.throwIfExpired();
      if (reasons.has('timeout')) {
        if (allowBookmarks) yield { type: 'BOOKMARK', resourceVersion: String(cursor) };
        return;
      }
      if (reasons.has('bookmark')) {
        yield { type: 'BOOKMARK', resourceVersion: String(cursor) };
        bookmarkTimer = clock.setTimer(() => waker.fire('bookmark'), ctx.options.bookmarkIntervalMs);
        continue;
      }
      const reading = stream;
      // Each message waits for a running stream check (see StreamGuard.settled).
      pending ??= reading.next().then(
        async (message) => {
          await checked.settled();
          return { message };
        },
        (error: unknown) => ({ error }),
      );
      const result = await Promise.race([pending, waker.wait()]);
      if (result === 'wake') continue;
      pending = undefined;
      if ('error' in result) throw result.error;
      const message = result.message;
      if (message === undefined) {
        if (signal.aborted) return;
        throw new UnavailableError(`nats: the watch of bucket ${bucket.name} lost its consumer`);
      }
      // A message that waited for a check that expired the watch may be from another stream.
      checked.throwIfExpired();
      const entry = bucket.fromMessage(message);
      if (entry.seq <= cursor) continue;
      if (entry.seq !== cursor + 1) throw expiredAt(bucket, cursor, entry.seq);
      cursor = entry.seq;
      for (const event of await liveEvents(scope, bucket.decode(entry))) yield event;
    }
  } catch (error) {
    if (signal.aborted && !(error instanceof ExpiredError)) return;
    if (error instanceof AbortedError) return;
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
    guard?.close();
    timeout?.cancel();
    bookmarkTimer?.cancel();
    await stream?.close();
  }
}

function newerThanBucket(bucket: TypeBucket, requested: number, last: number): ExpiredError {
  return new ExpiredError(
    `resourceVersion ${requested} is newer than the last revision ${last} of bucket ${bucket.name}: the bucket was purged or recreated`,
  );
}

/** Revisions after `from` and before `next` were removed (history limit, purge, compaction). */
function expiredAt(bucket: TypeBucket, from: number, next: number): ExpiredError {
  return new ExpiredError(
    `too old resource version: ${from} (bucket ${bucket.name} no longer holds revisions ${from + 1} to ${next - 1})`,
  );
}

/** The synthetic ADDED events of a snapshot, in key order; records what each key matched. */
function initialEvents(scope: Scope, entries: Iterable<RawEntry>): Event[] {
  const objects: KubeObject[] = [];
  for (const raw of entries) {
    const decoded = scope.bucket.decode(raw);
    if (decoded.kind === 'malformed') {
      scope.ctx.reportMalformed(decoded.error);
      continue;
    }
    if (decoded.kind !== 'object' || !scope.keys(decoded.object)) continue;
    const matches = scope.labels === undefined || scope.labels(decoded.object);
    if (scope.labels !== undefined) scope.matched.set(raw.key, matches);
    if (matches) objects.push(decoded.object);
  }
  return objects.sort(compareObjects).map((object) => ({ type: 'ADDED', object }));
}

/**
 * Whether the key's state before this entry matched the label selector: known from earlier events
 * of this watch, judged on the entry itself for a shard selector alone (see `Scope.stable`), else
 * read at the previous revision the writer asserted (0: the key was new).
 * Undefined when nobody can tell (a plain `kv.put` of another writer, or history already gone).
 */
async function matchedBefore(scope: Scope, decoded: DecodedEntry): Promise<boolean | undefined> {
  const key = decoded.entry.key;
  const known = scope.matched.get(key);
  if (known !== undefined) return known;
  if (scope.complete) return false;
  if (scope.stable && (decoded.kind === 'object' || (decoded.kind === 'deleted' && decoded.known))) {
    return (scope.labels as Matcher)(decoded.object);
  }
  const previous = decoded.entry.previous;
  if (previous === undefined) return undefined;
  if (previous === 0) return false;
  const before = await scope.bucket.at(key, previous);
  if (before === undefined || before.kind === 'internal') return undefined;
  return before.kind === 'object' && (scope.labels as Matcher)(before.object);
}

/** The events one live entry gives a watch (none, one, or a DELETED for leaving the selector). */
async function liveEvents(scope: Scope, decoded: DecodedEntry): Promise<Event[]> {
  if (decoded.kind === 'internal') return [];
  const { labels, matched } = scope;
  const key = decoded.entry.key;
  if (decoded.kind === 'malformed') {
    scope.ctx.reportMalformed(decoded.error);
    if (decoded.objectKey === undefined) return [];
    // No longer readable as an object: to this watch it is gone, as a list no longer shows it.
    const gone = objectFromKey(scope.bucket.type, decoded.objectKey, decoded.entry.seq);
    if (!scope.keys(gone)) return [];
    if (labels !== undefined) {
      const before = await matchedBefore(scope, decoded);
      matched.set(key, false);
      if (before === false) return [];
    }
    return [{ type: 'DELETED', object: gone }];
  }
  const object = decoded.object;
  if (!scope.keys(object)) return [];
  if (decoded.kind === 'deleted') {
    if (labels !== undefined) {
      const before = (await matchedBefore(scope, decoded)) ?? (decoded.known ? labels(object) : undefined);
      matched.delete(key);
      if (before === false) return [];
    }
    // A purge marker (the key's history dropped) is told apart from a delete marker.
    return [
      decoded.entry.operation === 'PURGE'
        ? { type: 'DELETED', object, purged: true }
        : { type: 'DELETED', object },
    ];
  }
  const created = decoded.entry.create || decoded.entry.previous === 0;
  if (labels === undefined) return [{ type: created ? 'ADDED' : 'MODIFIED', object }];
  const now = labels(object);
  const before = created ? false : await matchedBefore(scope, decoded);
  matched.set(key, now);
  if (now)
    return [
      {
        type: before === true ? 'MODIFIED' : before === false ? 'ADDED' : created ? 'ADDED' : 'MODIFIED',
        object,
      },
    ];
  return before === false ? [] : [{ type: 'DELETED', object }];
}
