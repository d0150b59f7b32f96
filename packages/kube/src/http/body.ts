import type { Readable } from 'node:stream';
import { ResponseDecodeError } from '../errors.ts';

/**
 * Reads a whole response body, failing (and destroying the stream) past `limit` bytes rather than
 * buffering without bound.
 *
 * @example
 * const bytes = await readBody(response.body, 64 * 1024 * 1024, 'get configmaps');
 */
export async function readBody(body: Readable, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new ResponseDecodeError(what, '(body)', `is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

/**
 * Parses a response body as JSON; a typed {@link ResponseDecodeError} when it is not JSON.
 *
 * @example
 * const object = parseJson(await readBody(response.body, limit, what), what);
 */
export function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new ResponseDecodeError(what, '(body)', `is not JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Reads up to `limit` bytes of an error body as text, then discards the rest.
 *
 * @example
 * const text = await readErrorText(response.body); // at most 64 KiB
 */
export async function readErrorText(body: Readable, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    }
  } catch {
    // A broken error body still leaves the status code to map.
  }
  return Buffer.concat(chunks).toString('utf8');
}
