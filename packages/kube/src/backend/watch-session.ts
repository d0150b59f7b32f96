import type { Readable } from 'node:stream';
import { type Clock, isConvergeError, type KubeObject, type Timer, type WatchEvent } from '@converge/runtime';
import { Cooperator, decodeWatchEvent, LineDecoder, type TypeMeta } from '../decode/index.ts';
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
 * One watch request and its stream. {@link open} sends it (typed errors for non-2xx answers);
 * {@link events} decodes the NDJSON stream line by line — each line capped at `maxLineBytes`,
 * ERROR events thrown as typed errors — and ends cleanly when the server closes the stream or the
 * caller's signal aborts. A watchdog measures only the time spent *waiting for bytes* (never the
 * time the consumer holds an event): past `idleLimitMs` it closes the stream and the iteration
 * throws a retryable {@link WatchStalledError}. {@link close} always releases the connection.
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

  constructor(options: WatchSessionOptions) {
    this.#o = options;
    this.#onAbort = () => this.#controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    if (options.signal?.aborted === true) this.#controller.abort(options.signal.reason);
  }

  /** Whether the caller aborted (the watch then ends without an error). */
  get callerAborted(): boolean {
    return this.#o.signal?.aborted === true;
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

  /** The decoded events, until the stream ends (clean return) or fails (typed error). */
  async *events<T extends KubeObject>(): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const body = this.#body;
    if (body === undefined) return;
    const decoder = new LineDecoder(this.#o.maxLineBytes);
    const cooperator = new Cooperator();
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        this.#waitingSince = undefined;
        for (const line of decoder.push(chunk)) {
          const event = this.#decode<T>(line);
          if (event !== undefined) yield event;
        }
        const pause = cooperator.maybeYield();
        if (pause !== undefined) await pause;
        this.#waiting();
      }
      this.#waitingSince = undefined;
      const last = decoder.end();
      const event = last === undefined ? undefined : this.#decode<T>(last);
      if (event !== undefined) yield event;
    } catch (error) {
      if (this.#stalled !== undefined) throw this.#stalled;
      if (this.callerAborted) return;
      throw isConvergeError(error) ? error : transportError(`watch ${this.#o.path}`, error);
    }
  }

  /** Stops the watchdog and releases the connection. Idempotent. */
  close(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#o.signal?.removeEventListener('abort', this.#onAbort);
    if (!this.#controller.signal.aborted) this.#controller.abort();
    this.#body?.destroy();
  }

  #decode<T extends KubeObject>(line: string): WatchEvent<T> | undefined {
    const event = decodeWatchEvent<T>(line, this.#o.typeMeta, this.#o.metadataOnly === true);
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
      this.#arm(this.#o.idleLimitMs);
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
