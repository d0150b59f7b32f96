import { ResponseDecodeError } from '../errors.ts';
import { Cooperator } from './cooperate.ts';
import { ListDecoder, type ListEnvelope } from './list-decoder.ts';

/**
 * Bodies up to this size are parsed with one `JSON.parse` (the fastest decoder, blocking for a few
 * milliseconds at most); larger ones are split into items as they stream in.
 */
export const WHOLE_PARSE_BYTES = 1024 * 1024;

/** A decoded list response: its items (not validated) and everything else. */
export interface DecodedList {
  readonly items: unknown[];
  readonly envelope: ListEnvelope;
}

function parseWhole(chunks: readonly Buffer[]): DecodedList {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new ResponseDecodeError('list', '(body)', `is not JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ResponseDecodeError('list', '(body)', 'is not a JSON object');
  }
  const { items, ...envelope } = parsed as { items?: unknown };
  if (items !== undefined && items !== null && !Array.isArray(items)) {
    throw new ResponseDecodeError('list', 'items', 'is not a list');
  }
  return { items: items ?? [], envelope };
}

/**
 * Decodes a list response body: small bodies (≤ `wholeParseBytes`, a page of a paginated list) with
 * one `JSON.parse`; larger ones item by item with a {@link ListDecoder}, yielding to the event loop
 * between slices of work, so an unpaginated list of any size never blocks it for long.
 *
 * @example
 * const { items, envelope } = await decodeListBody(response.body, 16 * 1024 * 1024);
 */
export async function decodeListBody(
  body: AsyncIterable<Buffer>,
  maxItemBytes: number,
  wholeParseBytes = WHOLE_PARSE_BYTES,
): Promise<DecodedList> {
  const cooperator = new Cooperator();
  const buffered: Buffer[] = [];
  let size = 0;
  let decoder: ListDecoder | undefined;
  const items: unknown[] = [];
  const feed = async (chunk: Buffer, into: ListDecoder): Promise<void> => {
    for (const item of into.push(chunk)) items.push(item);
    const pause = cooperator.maybeYield();
    if (pause !== undefined) await pause;
  };
  for await (const chunk of body) {
    if (decoder !== undefined) {
      await feed(chunk, decoder);
      continue;
    }
    buffered.push(chunk);
    size += chunk.length;
    if (size <= wholeParseBytes) continue;
    decoder = new ListDecoder(maxItemBytes);
    for (const part of buffered.splice(0)) await feed(part, decoder);
  }
  if (decoder === undefined) return parseWhole(buffered);
  const envelope = decoder.end();
  if (Array.isArray(envelope.items)) for (const item of envelope.items) items.push(item);
  return { items, envelope: { ...envelope, items: [] } };
}
