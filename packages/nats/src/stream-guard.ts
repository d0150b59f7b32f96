import { type Clock, ExpiredError, type Logger, type Timer } from '@converge/runtime';
import type { StreamState, TypeBucket } from './bucket.ts';
import { BUCKET_MARKER_KEY } from './codec.ts';

/**
 * Watches a running watch's stream for changes its revisions do not show. The ordered consumer
 * resumes after the last sequence it delivered on whatever stream has the bucket's name, and a
 * purge removes revisions the watch already delivered (whole objects vanish without an event), so a
 * watch that only checks its revisions for gaps would go on silently after:
 *
 * - the bucket was deleted: the stream is gone;
 * - the bucket was deleted and created again: the stream's creation time changed (and its last
 *   revision may be below the watch's);
 * - the stream was purged: the bucket's marker entry (written once when this backend created the
 *   bucket, never changed, so its revision is the first the stream holds) is gone, or the stream,
 *   which held entries when the watch started, holds none (buckets without a marker).
 *
 * A check is one stream-info request, run every `intervalMs` and at once on {@link StreamGuard.check}
 * (the watch calls it when the client reports a lost or recreated consumer). A check that fails
 * (the server does not answer) is retried at the next one; only a definite answer expires the
 * watch. Purges of single keys by subject (not through KV operations) cannot be told apart from
 * normal history trimming and go unnoticed.
 */
export class StreamGuard {
  readonly #bucket: TypeBucket;
  readonly #start: StreamState;
  readonly #marker: number | undefined;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #cursor: () => number;
  readonly #onExpired: () => void;
  readonly #log: Logger;
  #timer: Timer | undefined;
  #running = false;
  #again = false;
  /** Resolvers of {@link StreamGuard.settled} calls waiting for the running check. */
  #waiting: (() => void)[] = [];
  #closed = false;
  #expired: ExpiredError | undefined;

  private constructor(bucket: TypeBucket, baseline: StreamBaseline, options: GuardOptions) {
    this.#bucket = bucket;
    this.#start = baseline.state;
    this.#marker = baseline.marker;
    this.#clock = options.clock;
    this.#intervalMs = options.intervalMs;
    this.#cursor = options.cursor;
    this.#onExpired = options.onExpired;
    this.#log = options.logger;
  }

  /**
   * What the stream is when a watch starts; read it before the watch's consumer is made, so that
   * whatever happens to the stream after is seen by the checks.
   */
  static async baseline(bucket: TypeBucket): Promise<StreamBaseline> {
    const [state, marker] = await Promise.all([bucket.state(), bucket.current(BUCKET_MARKER_KEY)]);
    return { state, marker: marker?.entry.seq };
  }

  /** Starts the periodic checks of `bucket` against `baseline`. */
  static start(bucket: TypeBucket, baseline: StreamBaseline, options: GuardOptions): StreamGuard {
    const guard = new StreamGuard(bucket, baseline, options);
    guard.#schedule();
    return guard;
  }

  /** Throws the ExpiredError that ends the watch, once a check found one. */
  throwIfExpired(): void {
    if (this.#expired !== undefined) throw this.#expired;
  }

  /** Checks now (or once more right after a check that is running). */
  check(): void {
    if (this.#closed || this.#expired !== undefined) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#timer?.cancel();
    void this.#run();
  }

  /**
   * Resolves once no check is running. The watch holds each message until then: a consumer the
   * client recreated on a stream that was replaced meanwhile delivers messages of the new stream,
   * which must not be reported before the check triggered by the recreation decided.
   */
  settled(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Stops checking. */
  close(): void {
    this.#closed = true;
    this.#timer?.cancel();
    this.#release();
  }

  #release(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }

  #schedule(): void {
    if (this.#closed || this.#expired !== undefined) return;
    this.#timer = this.#clock.setTimer(() => this.check(), this.#intervalMs);
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      do {
        this.#again = false;
        const expired = await this.#verify();
        if (this.#closed) return;
        if (expired !== undefined) {
          this.#expired = expired;
          this.#onExpired();
          return;
        }
      } while (this.#again);
      this.#schedule();
    } finally {
      this.#running = false;
      this.#release();
    }
  }

  /** The ExpiredError the stream's state calls for, or undefined if it still is the watch's stream. */
  async #verify(): Promise<ExpiredError | undefined> {
    const name = this.#bucket.name;
    let now: StreamState | undefined;
    try {
      now = await this.#bucket.stateIfExists();
    } catch (error) {
      this.#log.debug({ bucket: name, err: error }, 'Watch stream check failed; retrying at the next check');
      return undefined;
    }
    const cursor = this.#cursor();
    if (now === undefined)
      return new ExpiredError(`bucket ${name} was deleted during the watch (at revision ${cursor})`);
    if (now.created !== this.#start.created || now.last < cursor) {
      return new ExpiredError(
        `bucket ${name} was recreated during the watch: its revisions restarted (the watch was at ${cursor}, the bucket is at ${now.last})`,
      );
    }
    if (
      (this.#marker !== undefined && now.first > this.#marker) ||
      (this.#start.messages > 0 && now.messages === 0)
    ) {
      return new ExpiredError(
        `bucket ${name} was purged during the watch (at revision ${cursor}): it no longer holds revisions before ${now.first}`,
      );
    }
    return undefined;
  }
}

/** A bucket's stream when a watch starts. */
export interface StreamBaseline {
  readonly state: StreamState;
  /** The revision of the bucket's marker entry, if it has one. */
  readonly marker: number | undefined;
}

/** How a {@link StreamGuard} checks and whom it tells. */
export interface GuardOptions {
  readonly clock: Clock;
  readonly intervalMs: number;
  /** The last revision the watch delivered. */
  readonly cursor: () => number;
  /** Called once when a check expired the watch ({@link StreamGuard.throwIfExpired} throws why). */
  readonly onExpired: () => void;
  readonly logger: Logger;
}
