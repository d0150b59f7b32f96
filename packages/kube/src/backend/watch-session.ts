import type { Readable } from 'node:stream';
import { type Clock, isConvergeError, type KubeObject, type Timer, type WatchEvent } from '@converge/runtime';
import {
  Cooperator,
  decodeWatchEvent,
  LineDecoder,
  type TypeMeta,
  withoutManagedFields,
} from '../decode/index.ts';
import { WatchStalledError } from '../errors.ts';
import { type Transport, transportError } from '../http/index.ts';

/** What one watch request needs. */
export interface WatchSessionOptions {
  readonly transport: Transport;
  readonly clock: Clock;
  readonly path: string;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly typeMeta: TypeMeta;
  /** The `Accept` header. Default `application/json`. */
  readonly accept?: string;
  /** Objects are reduced to their metadata (see `decodeWatchEvent`). Default false. */
  readonly metadataOnly?: boolean;
  /** Each line's `object.metadata.managedFields` is cut out before it is parsed. Default false. */
  readonly omitManagedFields?: boolean;
  /** No byte for this long while waiting for one: the stream is stalled. */
  readonly idleLimitMs: number;
  readonly maxLineBytes: number;
  /** Deliver BOOKMARK events (the initial-events-end bookmark is always delivered). */
  readonly bookmarks: boolean;
  /** The caller's signal: aborting it ends the watch cleanly. */
  readonly signal: AbortSignal | undefined;
  /** Told once when the stream is closed as stalled. */
  readonly onStall: () => void;
}

/**
 * How much complete lines' text the session holds for its consumer before it pauses the body
 * (counted in characters, which are bytes for the ASCII of Kubernetes JSON): the consumer is this
 * far behind the socket, and the server's writes wait in the kernel and TCP.
 */
export const QUEUE_HIGH_BYTES = 1024 * 1024;
/** The body is resumed once the consumer has brought the queue down to this. */
const QUEUE_LOW_BYTES = QUEUE_HIGH_BYTES / 4;
/** Events handed out between two looks at the cooperator's clock. */
const COOPERATE_EVERY = 32;

/** The result of an iteration that is over. */
export const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** A consumer waiting in `next()` for bytes. */
interface Waiter {
  readonly resolve: (result: IteratorResult<WatchEvent>) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One watch request and its stream. {@link open} sends it (typed errors for non-2xx answers);
 * {@link events} decodes the NDJSON stream line by line — each line capped at `maxLineBytes`,
 * ERROR events thrown as typed errors — and ends cleanly when the server closes the stream or the
 * caller's signal aborts. A watchdog measures only the time spent *waiting for bytes* (never the
 * time the consumer holds an event): past `idleLimitMs` it closes the stream and the iteration
 * throws a retryable {@link WatchStalledError}. {@link close} always releases the connection, and
 * so does the end of the iteration (done, failed or left early).
 *
 * The body is read as it arrives ('data' events), not through the stream's async iterator: each
 * chunk is split into lines at once and queued as text, and `next()` parses one line per event
 * and answers with a settled promise while lines are queued, so an event costs one promise and no
 * generator. The queue is bounded ({@link QUEUE_HIGH_BYTES}: past it the body is paused, which
 * stops reading the socket), and a long drain lets the event loop turn every few milliseconds.
 *
 * @example
 * const session = new WatchSession({ transport, clock, path, query, typeMeta, idleLimitMs: 180_000, maxLineBytes, bookmarks: true, signal, onStall });
 * try {
 *   await session.open();
 *   for await (const event of session.events()) handle(event);
 * } finally {
 *   session.close();
 * }
 */
export class WatchSession {
  readonly #o: WatchSessionOptions;
  readonly #controller = new AbortController();
  readonly #onAbort: () => void;
  #timer: Timer | undefined;
  #waitingSince: number | undefined;
  #stalled: WatchStalledError | undefined;
  #body: Readable | undefined;
  // The iteration (events()): complete lines not yet handed out, from #head on.
  #lines: string[] = [];
  #head = 0;
  #queuedBytes = 0;
  #paused = false;
  /** The body ended (its last line queued). */
  #ended = false;
  /** Why the body failed, once it did: reported after the lines queued before it. */
  #failure: { readonly error: unknown } | undefined;
  /** The iteration is over: every next() answers done. */
  #done = false;
  /** Consumers waiting in next() for bytes, in the order they called it. */
  #waiters: Waiter[] = [];
  #served = 0;
  #decoder: LineDecoder | undefined;
  #cooperator: Cooperator | undefined;

  constructor(options: WatchSessionOptions) {
    this.#o = options;
    this.#onAbort = () => {
      this.#controller.abort(options.signal?.reason);
      // A consumer waiting for bytes ends now, whatever the body does after the abort.
      if (this.#waiters.length > 0) this.#finish();
    };
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    if (options.signal?.aborted === true) this.#controller.abort(options.signal.reason);
  }

  /** Whether the caller aborted (the watch then ends without an error). */
  get callerAborted(): boolean {
    return this.#o.signal?.aborted === true;
  }

  /** Characters of complete lines received and not yet handed out. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Whether the body is paused because the consumer is {@link QUEUE_HIGH_BYTES} behind. */
  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Sends the watch request; resolves once the server answered 200 (headers only). Waiting for the
   * headers is bounded by the transport's `requestTimeoutMs` (Retry-After waits included), so the
   * stall watchdog starts only with the stream.
   */
  async open(): Promise<void> {
    const response = await this.#o.transport.send({
      method: 'GET',
      path: this.#o.path,
      query: this.#o.query,
      ...(this.#o.accept === undefined ? {} : { accept: this.#o.accept }),
      signal: this.#controller.signal,
      stream: true,
    });
    this.#body = response.body;
    this.#waiting();
    this.#arm(this.#o.idleLimitMs);
  }

  /**
   * The decoded events, until the stream ends (done) or fails (a typed error); call once, after
   * {@link open}. Leaving the iteration early (`break`, `return()`) closes the session.
   */
  events<T extends KubeObject>(): AsyncIterableIterator<WatchEvent<T>> {
    const iterator: AsyncIterableIterator<WatchEvent> = {
      next: () => this.#next(),
      return: () => {
        this.#finish();
        return Promise.resolve(DONE);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    if (this.#decoder !== undefined) throw new Error('WatchSession.events() was already called');
    const body = this.#body;
    if (body === undefined) {
      this.#done = true;
      return iterator as AsyncIterableIterator<WatchEvent<T>>;
    }
    this.#decoder = new LineDecoder(this.#o.maxLineBytes);
    this.#cooperator = new Cooperator();
    body.on('data', (chunk: Buffer) => this.#onData(chunk));
    body.on('end', () => this.#onEnd());
    body.on('error', (error: unknown) => this.#onFailure(error));
    body.on('close', () => {
      if (!this.#ended) this.#onFailure(new Error('the watch stream closed before it ended'));
    });
    return iterator as AsyncIterableIterator<WatchEvent<T>>;
  }

  /** Stops the watchdog and releases the connection. Idempotent. */
  close(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#o.signal?.removeEventListener('abort', this.#onAbort);
    if (!this.#controller.signal.aborted) this.#controller.abort();
    this.#body?.destroy();
  }

  #onData(chunk: Buffer): void {
    if (this.#done) return;
    this.#waitingSince = undefined;
    let lines: string[];
    try {
      lines = (this.#decoder as LineDecoder).push(chunk);
    } catch (error) {
      this.#onFailure(error);
      this.#body?.destroy();
      return;
    }
    for (const line of lines) {
      this.#lines.push(line);
      this.#queuedBytes += line.length;
    }
    if (this.#queuedBytes >= QUEUE_HIGH_BYTES && !this.#paused) {
      this.#paused = true;
      this.#body?.pause();
    }
    this.#wake();
  }

  #onEnd(): void {
    this.#waitingSince = undefined;
    const last = (this.#decoder as LineDecoder).end();
    if (last !== undefined) {
      this.#lines.push(last);
      this.#queuedBytes += last.length;
    }
    this.#ended = true;
    this.#wake();
  }

  #onFailure(error: unknown): void {
    this.#waitingSince = undefined;
    this.#failure ??= { error };
    this.#wake();
  }

  /** Answers the consumers waiting in next(), in order, as far as what came lets it. */
  #wake(): void {
    while (this.#waiters.length > 0) {
      let result: IteratorResult<WatchEvent> | undefined;
      try {
        result = this.#take();
      } catch (error) {
        const waiter = this.#waiters.shift() as Waiter;
        const failure = this.#fail(error); // the waiters after it are answered done
        if (failure === undefined) waiter.resolve(DONE);
        else waiter.reject(failure);
        return;
      }
      if (result === undefined) {
        this.#waiting();
        return;
      }
      // After the last event, #take finished the iteration: every waiter was answered done.
      this.#waiters.shift()?.resolve(result);
    }
  }

  #next(): Promise<IteratorResult<WatchEvent>> {
    if (this.#done) return Promise.resolve(DONE);
    if (this.callerAborted) {
      this.#finish();
      return Promise.resolve(DONE);
    }
    // Calls that overlap (not for-await's way, but allowed) are answered in the order they came.
    if (this.#waiters.length > 0)
      return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
    let result: IteratorResult<WatchEvent> | undefined;
    try {
      result = this.#take();
    } catch (error) {
      const failure = this.#fail(error);
      return failure === undefined ? Promise.resolve(DONE) : Promise.reject(failure);
    }
    if (result === undefined) {
      // Nothing queued: from here the session waits for bytes (what the watchdog measures).
      (this.#cooperator as Cooperator).reset();
      this.#waiting();
      return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
    }
    if ((++this.#served & (COOPERATE_EVERY - 1)) === 0 && result.done !== true) {
      const pause = (this.#cooperator as Cooperator).maybeYield();
      if (pause !== undefined) return pause.then(() => result);
    }
    return Promise.resolve(result);
  }

  /**
   * The next event from the queued lines; done once the body ended and every line was handed
   * out; undefined when the consumer must wait for bytes. Throws what ended the stream (a decode
   * error, an ERROR event, the body's failure) once the lines before it were handed out.
   */
  #take(): IteratorResult<WatchEvent> | undefined {
    const lines = this.#lines;
    while (this.#head < lines.length) {
      const line = lines[this.#head] as string;
      lines[this.#head++] = '';
      this.#queuedBytes -= line.length;
      if (this.#paused && this.#queuedBytes <= QUEUE_LOW_BYTES) {
        this.#paused = false;
        this.#body?.resume();
      }
      const event = this.#decode(line);
      if (event !== undefined) return { done: false, value: event };
    }
    if (this.#head > 0) {
      this.#lines = [];
      this.#head = 0;
    }
    if (this.#failure !== undefined) throw this.#failure.error;
    if (this.#ended) {
      this.#finish();
      return DONE;
    }
    return undefined;
  }

  /** Ends the iteration with `error`: the error to throw, or undefined when it ends cleanly. */
  #fail(error: unknown): Error | undefined {
    this.#finish();
    if (this.#stalled !== undefined) return this.#stalled;
    if (this.callerAborted) return undefined;
    return isConvergeError(error) ? error : transportError(`watch ${this.#o.path}`, error);
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#waitingSince = undefined;
    this.#lines = [];
    this.#head = 0;
    this.#queuedBytes = 0;
    this.close();
    for (const waiter of this.#waiters.splice(0)) waiter.resolve(DONE);
  }

  #decode(line: string): WatchEvent | undefined {
    const text = this.#o.omitManagedFields === true ? withoutManagedFields(line) : line;
    const event = decodeWatchEvent(text, this.#o.typeMeta, this.#o.metadataOnly === true);
    if (event.type === 'BOOKMARK' && !this.#o.bookmarks && event.initialEventsEnd !== true) return undefined;
    return event;
  }

  #waiting(): void {
    this.#waitingSince = this.#o.clock.now();
  }

  #arm(delayMs: number): void {
    this.#timer = this.#o.clock.setTimer(() => this.#check(), delayMs);
  }

  #check(): void {
    const since = this.#waitingSince;
    if (since === undefined) {
      if (!this.#done) this.#arm(this.#o.idleLimitMs);
      return;
    }
    const idle = this.#o.clock.now() - since;
    if (idle < this.#o.idleLimitMs) {
      this.#arm(this.#o.idleLimitMs - idle);
      return;
    }
    this.#stalled = new WatchStalledError(this.#o.path, idle);
    this.#o.onStall();
    this.#controller.abort(this.#stalled);
    this.#body?.destroy();
  }
}
