import type { RequestQueue } from '../handler/index.ts';
import type { Logger } from '../log/index.ts';
import { integer, nonEmptyString } from '../options.ts';
import { whenAborted } from '../runnable/index.ts';
import type { AddOptions, Cause } from '../workqueue/index.ts';
import { alreadyStarted } from './errors.ts';
import { Latch } from './latch.ts';
import { loggerOption } from './option-checks.ts';
import type { Source } from './source.ts';

export interface ChannelSourceOptions {
  /** Name for logs and for the `source` of causes. Default 'channel'. */
  readonly name?: string;
  /**
   * How many sends are kept before `start`. Default 1024; 0 keeps none. When the buffer is full,
   * the new send is dropped (the buffered ones keep their order) and counted in
   * `stats().droppedOverflow`; the first drop is logged at warn.
   */
  readonly bufferSize?: number;
  /** Where overflow and queue failures are logged. Default no logging. */
  readonly logger?: Logger;
}

/** Counters of a {@link ChannelSource}. */
export interface ChannelSourceStats {
  /** Requests handed to the queue. */
  readonly delivered: number;
  /** Requests waiting in the buffer for `start`. */
  readonly buffered: number;
  /** Sends dropped because the buffer was full. */
  readonly droppedOverflow: number;
  /** Sends ignored because the source had stopped (plus buffered requests of a source started already stopped). */
  readonly droppedStopped: number;
  /** Sends the queue's `add` threw on. */
  readonly failed: number;
}

interface Pending<R> {
  readonly request: R;
  readonly options: AddOptions | undefined;
}

/**
 * A source that requests are pushed into from anywhere: timers, webhooks, other controllers
 * (controller-runtime's `source.Channel`, with requests instead of events). Sends before `start`
 * are buffered up to `bufferSize` and added in send order when it starts; sends while running go
 * straight to the queue; sends after the start signal aborts are ignored. `send` never throws.
 * It is synced as soon as it has started.
 *
 * A send without a cause is a manual enqueue: its cause is `{ type: 'manual', source: name }`; a
 * cause without a source gets the channel's name.
 *
 * @example
 * const wake = new ChannelSource<ObjectKey>();
 * const controller = new Controller({ sources: [wake], reconciler });
 * wake.send({ namespace: 'default', name: 'web' }, { priority: Priority.high });
 */
export class ChannelSource<R> implements Source<R> {
  readonly name: string;
  readonly #bufferSize: number;
  readonly #logger: Logger;
  readonly #started = new Latch();
  readonly #manual: Cause;
  #buffer: Pending<R>[] = [];
  #queue: RequestQueue<R> | undefined;
  #signal: AbortSignal | undefined;
  #delivered = 0;
  #droppedOverflow = 0;
  #droppedStopped = 0;
  #failed = 0;

  constructor(options: ChannelSourceOptions = {}) {
    this.name = nonEmptyString('name', options.name, 'channel');
    this.#bufferSize = integer('bufferSize', options.bufferSize, 1024, 0);
    this.#logger = loggerOption('logger', options.logger);
    this.#manual = Object.freeze({ type: 'manual', source: this.name });
  }

  /** Adds `request` to the controller's queue, now if running, at `start` if not started yet. */
  send(request: R, options?: AddOptions): void {
    if (this.#signal?.aborted === true) {
      this.#droppedStopped++;
      return;
    }
    const queue = this.#queue;
    if (queue !== undefined) {
      this.#deliver(queue, request, options);
      return;
    }
    if (this.#buffer.length >= this.#bufferSize) {
      this.#droppedOverflow++;
      if (this.#droppedOverflow === 1) {
        this.#logger.warn(
          { source: this.name, bufferSize: this.#bufferSize },
          'Channel buffer full, dropping sends',
        );
      }
      return;
    }
    this.#buffer.push({ request, options });
  }

  /** Delivers the buffered requests and every later send to `queue` until `signal` aborts. */
  async start(signal: AbortSignal, queue: RequestQueue<R>): Promise<void> {
    if (this.#signal !== undefined) throw alreadyStarted(`channel source ${this.name}`);
    this.#signal = signal;
    const buffered = this.#buffer;
    this.#buffer = [];
    if (signal.aborted) {
      this.#droppedStopped += buffered.length;
      this.#started.open();
      return;
    }
    for (const { request, options } of buffered) this.#deliver(queue, request, options);
    this.#queue = queue;
    this.#started.open();
    await whenAborted(signal);
    this.#queue = undefined;
  }

  /** Resolves once the source has started. */
  waitForSync(signal: AbortSignal): Promise<void> {
    return this.#started.wait(signal);
  }

  stats(): ChannelSourceStats {
    return {
      delivered: this.#delivered,
      buffered: this.#buffer.length,
      droppedOverflow: this.#droppedOverflow,
      droppedStopped: this.#droppedStopped,
      failed: this.#failed,
    };
  }

  #deliver(queue: RequestQueue<R>, request: R, options: AddOptions | undefined): void {
    try {
      const given = options?.cause;
      queue.add(
        request,
        given?.source !== undefined
          ? options
          : { ...options, cause: given === undefined ? this.#manual : { ...given, source: this.name } },
      );
      this.#delivered++;
    } catch (error) {
      this.#failed++;
      this.#logger.error({ source: this.name, err: error }, 'Queue add failed');
    }
  }
}
