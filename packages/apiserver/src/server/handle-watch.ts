import {
  BadRequestError,
  type KubeObject,
  PARTIAL_OBJECT_METADATA,
  type WatchEvent,
  type WatchOptions,
} from '@converge/runtime';
import { encodeProtobufWatchEvent, PROTOBUF_WATCH_CONTENT_TYPE } from '../protobuf/index.ts';
import { groupVersion, type JsonObject } from './api-resource.ts';
import type { RequestContext } from './context.ts';
import { type StallHook, stallHook } from './fault-stall.ts';
import { includeObject } from './handle-read.ts';
import { negotiateObject } from './media.ts';
import { fromStorage } from './object-io.ts';
import { servesProtobuf, writeFrame } from './protobuf-io.ts';
import type { ListQuery } from './query.ts';
import { listSelection } from './selection.ts';
import { statusOf } from './status.ts';
import { WatchFieldFilter } from './watch-filter.ts';
import { WatchWriter } from './watch-writer.ts';

/** Without `timeoutSeconds`, kube-apiserver ends a watch after minRequestTimeout × (1 + rand): 30–60 min. */
const MIN_REQUEST_TIMEOUT_MS = 1_800_000;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * Queues one event line, first asking the fault injector whether the watch may send it: a stalled
 * watch writes out what it already queued, then waits here, connection open, until released
 * (fault-stall.ts). Resolves `false` when the watch ended while held.
 */
async function send(writer: WatchWriter, line: string, stall: StallHook | undefined): Promise<boolean> {
  const held = stall?.();
  if (held !== undefined) {
    writer.flush();
    if (!(await held)) return false;
  }
  const wait = writer.push(line);
  if (wait !== undefined) await wait;
  return true;
}

/**
 * WATCH: a 200 with headers flushed at once, then newline-delimited JSON events until
 * `timeoutSeconds` (default 30–60 min), the client leaving or the server dropping watches — always
 * ended with a clean chunked EOF. Objects are written as `Accept` asks, as for GET and LIST: JSON,
 * protobuf, a Table, or a `meta.k8s.io/v1` PartialObjectMetadata (bookmarks too; ERROR events stay
 * a Status). Starts from `resourceVersion` (unset/0: initial ADDED events);
 * `sendInitialEvents=true` ends the initial events with a BOOKMARK annotated
 * `k8s.io/initial-events-end` (sent when bookmarks are allowed); `allowWatchBookmarks` adds the
 * store's periodic bookmarks. Errors once streaming — a resourceVersion older than the history
 * (410 Expired), a watcher too far behind — are one ERROR event carrying a Status, then the end.
 * An event's JSON is computed once for all watchers of the same change. Lines go out through a
 * {@link WatchWriter}: events available at once share HTTP chunks of about 64 KiB, a lone live event
 * leaves within its event-loop turn, and bookmarks, errors and the end are written at once.
 */
export async function handleWatch(ctx: RequestContext, query: ListQuery, name?: string): Promise<void> {
  const { resource, server, res, req } = ctx;
  const chosen = negotiateObject(
    req.headers.accept,
    server.extensions.toTable !== undefined,
    servesProtobuf(resource),
  );
  const protobuf = chosen.format === 'protobuf';
  const selection = listSelection(ctx, query.labelSelector, query.fieldSelector, name, query.shardSelector);
  const tableObjects = chosen.format === 'table' ? includeObject(ctx.query) : 'Metadata';
  const rv = query.resourceVersion;
  if (rv !== '' && !/^(0|[1-9][0-9]{0,15})$/.test(rv)) {
    throw new BadRequestError(`invalid resource version: ${JSON.stringify(rv)}`);
  }
  const filter = selection.extra === undefined ? undefined : new WatchFieldFilter(selection.extra);
  // through a conversion webhook, field selectors match objects in the watched version
  const many = filter === undefined ? undefined : resource.converter?.fromStorageMany;
  const served =
    many === undefined
      ? undefined
      : async (objects: readonly KubeObject[]): Promise<readonly KubeObject[]> =>
          (await many(objects)) as unknown as KubeObject[];
  if (filter !== undefined && rv !== '' && rv !== '0' && query.sendInitialEvents !== true) {
    const { namespace, labelSelector, shardSelector } = selection.storeOptions;
    const seedOptions = { namespace, labelSelector, shardSelector };
    await filter.seed(server.store, resource.storage, seedOptions, rv, served);
  }
  const timeoutMs =
    query.timeoutSeconds !== undefined && query.timeoutSeconds > 0
      ? query.timeoutSeconds * 1000
      : MIN_REQUEST_TIMEOUT_MS * (1 + server.clock.random());
  const controller = server.watches.open();
  const onClose = (): void => controller.abort();
  res.on('close', onClose);
  const stall = stallHook(server, req, controller.signal);
  const options: WatchOptions = {
    ...selection.storeOptions,
    ...(rv === '' ? {} : { resourceVersion: rv }),
    allowBookmarks: query.allowWatchBookmarks,
    ...(query.sendInitialEvents === undefined ? {} : { sendInitialEvents: query.sendInitialEvents }),
    timeoutMs,
    signal: controller.signal,
  };
  res.writeHead(200, {
    'Content-Type': protobuf ? PROTOBUF_WATCH_CONTENT_TYPE : 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();
  const writer = new WatchWriter(res);
  // kube-apiserver transforms every event's object, bookmarks included, to the negotiated form.
  const partial = chosen.format === 'partial';
  const bookmarkHead = partial
    ? { kind: PARTIAL_OBJECT_METADATA.kind, apiVersion: PARTIAL_OBJECT_METADATA.apiVersion }
    : { kind: resource.kind, apiVersion: groupVersion(resource) };
  let first = true;
  const objectJson = async (object: KubeObject): Promise<string> => {
    if (partial) return server.encoder.encodePartial(object);
    if (chosen.format === 'table') {
      const toTable = server.extensions.toTable as NonNullable<typeof server.extensions.toTable>;
      const table = toTable(resource, [await fromStorage(resource, object)], {
        includeObject: tableObjects,
        tableVersion: chosen.version,
        resourceVersion: object.metadata.resourceVersion ?? '',
        noHeaders: !first,
        nowMs: server.clock.now(),
      });
      first = false;
      return JSON.stringify(table);
    }
    const json = server.encoder.encode(resource, object);
    return typeof json === 'string' ? json : await json;
  };
  try {
    for await (const event of server.store.watch(resource.storage, options) as AsyncIterable<WatchEvent>) {
      if (event.type === 'BOOKMARK') {
        if (!query.allowWatchBookmarks) continue;
        const metadata: JsonObject = { resourceVersion: event.resourceVersion };
        if (event.initialEventsEnd === true) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
        if (protobuf) {
          await writeFrame(res, encodeProtobufWatchEvent('BOOKMARK', { ...bookmarkHead, metadata }));
          continue;
        }
        const line = server.encoder.line('BOOKMARK', JSON.stringify({ ...bookmarkHead, metadata }));
        // A bookmark is what a client waits for (the end of the initial events): never held back.
        if (await send(writer, line, stall)) writer.flush();
        continue;
      }
      let out: typeof event | undefined = event;
      if (filter !== undefined) {
        const object =
          served === undefined ? event.object : ((await served([event.object]))[0] ?? event.object);
        out = filter.convert({ type: event.type, object });
      }
      // a conversion webhook failing here ends the watch with an ERROR event (below)
      if (out !== undefined && protobuf) {
        const object = (await fromStorage(resource, out.object)) as JsonObject;
        await writeFrame(res, encodeProtobufWatchEvent(out.type, object));
      } else if (out !== undefined)
        await send(writer, server.encoder.line(out.type, await objectJson(out.object)), stall);
    }
  } catch (error) {
    if (!controller.signal.aborted && protobuf) {
      await writeFrame(res, encodeProtobufWatchEvent('ERROR', { ...statusOf(error) }));
    } else if (!controller.signal.aborted) {
      void writer.push(server.encoder.line('ERROR', JSON.stringify(statusOf(error))));
    }
  } finally {
    res.off('close', onClose);
    server.watches.closed(controller);
    writer.end();
  }
}
