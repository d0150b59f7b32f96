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

/** Messages per pull request of a consumer. */
const BATCH = 512;

/**
 * One ordered consumer over a bucket's stream, read message by message. The NATS client recreates
 * the consumer after reconnects, missed heartbeats or a lost consumer, starting after the last
 * message it delivered, so the stream has neither gaps nor duplicates of its own making. A message
 * the server removed in the meantime is simply not there; callers that must see every revision
 * check that the stream sequences they get are consecutive.
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
    filter?: string,
  ): Promise<OrderedStream> {
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
      messages = await consumer.consume({ max_messages: BATCH });
    } catch (error) {
      consumer.delete().catch(() => {});
      throw natsFailure(error, `consume of ${bucket.name}`);
    }
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
