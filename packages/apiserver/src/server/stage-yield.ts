import type { IncomingMessage } from 'node:http';

/**
 * Writes of large bodies, interleaved with everyone else's requests. Each stage of a write —
 * decoding, field ownership, validation, the size check, the store's copy, the answer's encoding —
 * costs a few µs per key of the object, and the stages run back to back on the event loop, so a
 * 40 000-key create would hold every other client for their sum (several hundred ms). For a body
 * over {@link YIELDING_BODY_BYTES}, the write pipeline lets the event loop run between stages
 * (`setImmediate`), so another client's request waits for one stage, not for the whole write.
 * Smaller bodies never yield: their stages are a few ms in all.
 */

/** Bodies over this many bytes have their write pipeline yield between stages. */
export const YIELDING_BODY_BYTES = 64 * 1024;

const bodyBytes = new WeakMap<IncomingMessage, number>();

/** Records the size of a request's body once it is read (see `readBody`). */
export function noteBodySize(req: IncomingMessage, bytes: number): void {
  bodyBytes.set(req, bytes);
}

/**
 * Lets the event loop serve other clients (I/O, timers) before the next stage of `req`'s write,
 * when its body is over {@link YIELDING_BODY_BYTES}; resolves at once otherwise. Only where a
 * stage boundary needs no consistency with the store: before the stored object is read, or after
 * the write is committed (for creates, anywhere before the store: the store refuses a duplicate).
 */
export async function yieldBetweenStages(req: IncomingMessage): Promise<void> {
  if ((bodyBytes.get(req) ?? 0) <= YIELDING_BODY_BYTES) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
}
