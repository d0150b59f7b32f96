import {
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import { natsFailure, type TypeBucket } from './bucket.ts';

/** Where an ordered stream starts: the last entry of every key, or a revision. */
export type StreamStart = { readonly lastPerKey: true } | { readonly fromRevision: number };

/** Options of {@link OrderedStream.open}. */
export interface OrderedStreamOptions {
  /** The subjects to read; default every key of the bucket. */
  readonly filter?: string;
  /** The consumer's idle heartbeat; default the client's (half of its 30 s pull expiry). */
  readonly heartbeatMs?: number;
  /**
   * Called with the notification's type when the client reports that the consumer is in trouble
   * or was replaced: missed heartbeats, a deleted or missing consumer or stream, a consumer
   * recreated after any of those. The client recovers from a lost consumer by itself.
   */
  readonly onTrouble?: (reason: string) => void;
}

/** Client notifications that {@link OrderedStreamOptions.onTrouble} reports. */
const TROUBLE = new Set([
  'heartbeats_missed',
  'consumer_deleted',
  'consumer_not_found',
  'stream_not_found',
  'ordered_consumer_recreated',
]);

/** Pull requests expire after this long (the client's default); the heartbeat may be at most half. */
const PULL_EXPIRES_MS = 30_000;

/** Messages per pull request of a consumer. */
const BATCH = 512;

/**
 * One ordered consumer over a bucket's stream, read message by message. The NATS client recreates
 * the consumer after reconnects, two missed heartbeats or a lost consumer, starting after the last
 * message it delivered, so the stream has neither gaps nor duplicates of its own making. A message
 * the server removed in the meantime is simply not there; callers that must see every revision
 * check that the stream sequences they get are consecutive. A stream that was purged, or deleted
 * and created again, looks like the same stream to the client: callers that care check the stream
 * itself when `onTrouble` reports (and now and then, for purges, which nothing reports).
 */
export class OrderedStream {
  readonly #consumer: Consumer;
  readonly #messages: ConsumerMessages;
  readonly #iterator: AsyncIterator<JsMsg>;
  /** Messages the consumer had to deliver when it was created. */
  readonly pendingAtStart: number;
  #closed = false;

  private constructor(consumer: Consumer, messages: ConsumerMessages, pendingAtStart: number) {
    this.#consumer = consumer;
    this.#messages = messages;
    this.#iterator = messages[Symbol.asyncIterator]();
    this.pendingAtStart = pendingAtStart;
  }

  /** Creates the consumer on the server and starts pulling. */
  static async open(
    js: JetStreamClient,
    bucket: TypeBucket,
    start: StreamStart,
    options: OrderedStreamOptions = {},
  ): Promise<OrderedStream> {
    const { filter, heartbeatMs, onTrouble } = options;
    let consumer: Consumer;
    try {
      consumer = await js.consumers.get(bucket.stream, {
        filter_subjects: filter ?? bucket.filter(),
        ...('lastPerKey' in start
          ? { deliver_policy: DeliverPolicy.LastPerSubject }
          : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.fromRevision }),
      });
    } catch (error) {
      throw natsFailure(error, `consumer on ${bucket.name}`);
    }
    const info = await consumer.info(true);
    let messages: ConsumerMessages;
    try {
      messages = await consumer.consume({
        max_messages: BATCH,
        ...(heartbeatMs === undefined ? {} : { idle_heartbeat: heartbeatMs, expires: PULL_EXPIRES_MS }),
      });
    } catch (error) {
      consumer.delete().catch(() => {});
      throw natsFailure(error, `consume of ${bucket.name}`);
    }
    if (onTrouble !== undefined) void report(messages, onTrouble);
    return new OrderedStream(consumer, messages, info.num_pending);
  }

  /** The next message, or undefined once the stream was closed. Failures are backend errors. */
  async next(): Promise<JsMsg | undefined> {
    if (this.#closed) return undefined;
    let result: IteratorResult<JsMsg>;
    try {
      result = await this.#iterator.next();
    } catch (error) {
      throw natsFailure(error, 'reading an ordered consumer');
    }
    return result.done === true ? undefined : result.value;
  }

  /** Stops pulling (a pending `next()` resolves undefined) and deletes the consumer on the server. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#messages.stop();
    await this.#consumer.delete().catch(() => false);
  }
}

/** Passes the consumer's trouble notifications to `onTrouble` until the messages stop. */
async function report(messages: ConsumerMessages, onTrouble: (reason: string) => void): Promise<void> {
  try {
    for await (const notification of messages.status()) {
      if (TROUBLE.has(notification.type)) onTrouble(notification.type);
    }
  } catch {
    // The notifications end with the messages; nothing to report then.
  }
}
