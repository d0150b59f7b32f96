import {
  AlreadyStartedError,
  type Clock,
  eventCause,
  type Logger,
  type ObjectKey,
  objectKey,
  type RequestQueue,
  type Source,
  sleepOn,
} from '@converge/runtime';
import type { TypeBucket } from './bucket.ts';
import type { BackendContext } from './context.ts';
import { readSnapshot } from './snapshot.ts';

/** Options of {@link NatsBackend.replayMarkers}. */
export interface MarkerReplayOptions {
  /** Name for logs and for the `source` of the causes. Default `markers:<plural>`. */
  readonly name?: string;
  /** Replay the markers of this namespace only. Default: all. */
  readonly namespace?: string;
}

/** Counters of a {@link MarkerReplay}. */
export interface MarkerReplayStats {
  /** Keys enqueued with a `deleted` cause (a `DEL` marker). */
  readonly deleted: number;
  /** Keys enqueued with a `deleted` cause marked `purged` (a `PURGE` marker). */
  readonly purged: number;
  /** Snapshot reads that failed and were retried. */
  readonly failedReads: number;
}

/**
 * A controller source that, when it starts, enqueues every key of one bucket whose last entry is a
 * delete or purge marker, with the cause a live watch would have given: `deleted`, marked `purged`
 * for a purge. So a primary deleted or purged while no controller ran still gets its `delete` or
 * `purge` run (`operationOf(causes)`), as Kumori's KV watch replays markers at start. Made by
 * {@link NatsBackend.replayMarkers}; add it with the builder's `watchesSource`.
 *
 * It reads one consistent snapshot of the bucket, enqueues the keys of its markers and is synced;
 * then it does nothing until its signal aborts (live deletes reach the controller through its
 * informer). A failed read is logged and retried (1 s, doubling up to 30 s) until it succeeds or
 * the signal aborts. Every start replays every marker still in the bucket, including those of
 * deletes a controller already handled: reconcilers must be idempotent, as they are anyway, and
 * `backend.compact()` removes the markers of deleted keys.
 */
export class MarkerReplay implements Source<ObjectKey> {
  readonly name: string;
  readonly #ctx: BackendContext;
  readonly #bucket: TypeBucket;
  readonly #namespace: string | undefined;
  readonly #synced: Promise<void>;
  #markSynced: () => void = () => {};
  #started = false;
  #stats = { deleted: 0, purged: 0, failedReads: 0 };

  /** Use {@link NatsBackend.replayMarkers}, which knows the bucket. */
  constructor(ctx: BackendContext, bucket: TypeBucket, options: MarkerReplayOptions = {}) {
    this.#ctx = ctx;
    this.#bucket = bucket;
    this.name = options.name ?? `markers:${bucket.type.plural}`;
    this.#namespace = options.namespace === '' ? undefined : options.namespace;
    this.#synced = new Promise((resolve) => {
      this.#markSynced = resolve;
    });
  }

  /** Counters since creation. */
  stats(): MarkerReplayStats {
    return { ...this.#stats };
  }

  async start(signal: AbortSignal, queue: RequestQueue<ObjectKey>): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(`marker replay ${this.name}`);
    this.#started = true;
    const { clock, logger } = this.#ctx.options;
    if (!(await this.#replay(signal, queue, clock, logger))) return;
    this.#markSynced();
    if (signal.aborted) return;
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  async waitForSync(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await Promise.race([
      this.#synced,
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
  }

  /** Reads the snapshot (retrying) and enqueues its markers; false when the signal aborted first. */
  async #replay(
    signal: AbortSignal,
    queue: RequestQueue<ObjectKey>,
    clock: Clock,
    logger: Logger,
  ): Promise<boolean> {
    for (let delayMs = 1000; ; delayMs = Math.min(delayMs * 2, 30_000)) {
      if (signal.aborted) return false;
      let entries: Awaited<ReturnType<typeof readSnapshot>>['entries'];
      try {
        entries = (await readSnapshot(this.#ctx.js, this.#bucket, this.#namespace, signal)).entries;
      } catch (error) {
        if (signal.aborted) return false;
        this.#stats.failedReads++;
        logger.warn(
          { source: this.name, bucket: this.#bucket.name, err: error, retryInMs: delayMs },
          'Reading the delete markers failed; retrying',
        );
        try {
          await sleepOn(clock, delayMs, signal);
        } catch {
          return false;
        }
        continue;
      }
      for (const raw of entries.values()) {
        if (raw.operation === 'PUT') continue;
        const decoded = this.#bucket.decode(raw);
        if (decoded.kind === 'malformed') this.#ctx.reportMalformed(decoded.error);
        if (decoded.kind !== 'deleted') continue;
        const key = objectKey(decoded.object);
        if (this.#namespace !== undefined && key.namespace !== this.#namespace) continue;
        const purged = raw.operation === 'PURGE';
        const event = purged
          ? ({ type: 'delete', object: decoded.object, purged: true } as const)
          : ({ type: 'delete', object: decoded.object } as const);
        queue.add(key, { cause: eventCause(event, { source: this.name }) });
        if (purged) this.#stats.purged++;
        else this.#stats.deleted++;
      }
      return true;
    }
  }
}
