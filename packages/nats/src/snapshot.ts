import { AbortedError, UnavailableError } from '@converge/runtime';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { TypeBucket } from './bucket.ts';
import type { RawEntry } from './codec.ts';
import { OrderedStream } from './ordered-stream.ts';

/** Messages handled between two yields to the event loop, so huge lists do not block it. */
export const YIELD_EVERY = 1000;

/** Lets other work run (I/O, timers) before continuing. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The latest entry of every key at one revision. */
export interface Snapshot {
  /** The revision the snapshot is at: every write up to it, and none after it, is in `entries`. */
  readonly revision: number;
  /** The latest entry per KV key: objects, delete markers and garbage alike. */
  readonly entries: Map<string, RawEntry>;
}

/**
 * Reads the initial part of an ordered stream that delivers the last entry of every key, up to the
 * first message after which the consumer has nothing pending: then every write up to that message
 * has been seen (the last entries first, later writes in order), so the snapshot is consistent at
 * its revision. Writes that arrive while it reads only move the snapshot forward. `last` is the
 * stream's last revision read before the consumer was made: the revision of a snapshot that ends
 * below it (no entry of the filter after it).
 */
export async function collectInitial(
  stream: OrderedStream,
  bucket: TypeBucket,
  last: number,
  signal?: AbortSignal,
): Promise<Snapshot> {
  const entries = new Map<string, RawEntry>();
  let revision = last;
  if (stream.pendingAtStart === 0) return { revision, entries };
  let count = 0;
  for (;;) {
    const message = await stream.next();
    if (signal?.aborted === true) throw new AbortedError('list aborted', { cause: signal.reason });
    if (message === undefined) throw new UnavailableError(`nats: the consumer on ${bucket.name} ended early`);
    const entry = bucket.fromMessage(message);
    entries.set(entry.key, entry);
    if (entry.seq > revision) revision = entry.seq;
    if (message.info.pending === 0) return { revision, entries };
    if (++count % YIELD_EVERY === 0) await yieldToEventLoop();
  }
}

/**
 * A consistent snapshot of a bucket (of one namespace token when given) from one ordered consumer
 * that delivers the last entry per key (of one namespace's keys, when the codec can filter them): no
 * per-key requests.
 */
export async function readSnapshot(
  js: JetStreamClient,
  bucket: TypeBucket,
  namespace: string | undefined,
  signal?: AbortSignal,
): Promise<Snapshot> {
  if (signal?.aborted === true) throw new AbortedError('list aborted', { cause: signal.reason });
  const state = await bucket.state();
  if (state.messages === 0) return { revision: state.last, entries: new Map() };
  const stream = await OrderedStream.open(
    js,
    bucket,
    { lastPerKey: true },
    {
      filter: bucket.filter(namespace),
    },
  );
  const onAbort = (): void => {
    void stream.close();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await collectInitial(stream, bucket, state.last, signal);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await stream.close();
  }
}
