import type { ServerResponse } from 'node:http';
import { warningHeaders } from './respond.ts';

/** Bytes of serialized items gathered before one socket write. */
const CHUNK_BYTES = 64 * 1024;

/** Resolves when `res` can take more data (or is gone). */
export function drained(res: ServerResponse): Promise<void> {
  if (res.destroyed || !res.writableNeedDrain) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Writes a list response without building it as one string: the envelope, then the items
 * serialized in chunks of about 64 KiB, each written as the socket drains (backpressure) and with
 * the event loop free between chunks, then the closing bracket. `encode` turns one item into JSON.
 */
export async function streamList(
  res: ServerResponse,
  envelope: { readonly kind: string; readonly apiVersion: string; readonly metadata: object },
  items: readonly unknown[],
  encode: (item: unknown) => string,
  warnings: readonly string[] = [],
): Promise<void> {
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
  };
  if (warnings.length > 0) headers.Warning = warningHeaders(warnings);
  res.writeHead(200, headers);
  let chunk = `{"kind":${JSON.stringify(envelope.kind)},"apiVersion":${JSON.stringify(envelope.apiVersion)},"metadata":${JSON.stringify(envelope.metadata)},"items":[`;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) chunk += ',';
    chunk += encode(items[i]);
    if (chunk.length >= CHUNK_BYTES) {
      if (res.destroyed) return;
      const more = res.write(chunk);
      chunk = '';
      if (!more) await drained(res);
      // Always yield: on loopback 'drain' fires from process.nextTick, so waiting for it alone
      // never returns to the event loop and a large LIST would block it from start to end.
      await nextTurn();
    }
  }
  if (res.destroyed) return;
  res.end(`${chunk}]}\n`);
}
