import { ResponseDecodeError } from '../errors.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const ITEMS = Buffer.from('items');
const WHAT = 'list';

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The list's fields other than `items`. */
export interface ListEnvelope {
  readonly kind?: unknown;
  readonly apiVersion?: unknown;
  readonly metadata?: unknown;
  /** Items the decoder could not split out (never for a Kubernetes list); usually `[]`. */
  readonly items?: unknown;
}

/**
 * Decodes a Kubernetes list response (`{"kind":…,"metadata":{…},"items":[{…},…]}`) as it streams
 * in: each item is cut out of the byte stream and parsed on its own as soon as it is complete, so a
 * large list is never one huge `JSON.parse` that blocks the event loop, and never held twice (raw
 * and parsed). The rest of the document (kind, metadata) is parsed at the end. Only JSON structure
 * is tracked (depth, strings, escapes): structural bytes are ASCII, so UTF-8 needs no decoding.
 *
 * Malformed input throws a `ResponseDecodeError`; an item larger than `maxItemBytes` too.
 *
 * @example
 * const decoder = new ListDecoder(16 * 1024 * 1024);
 * for await (const chunk of body) items.push(...decoder.push(chunk));
 * const { metadata } = decoder.end();
 */
export class ListDecoder {
  readonly #limit: number;
  #depth = 0;
  #inString = false;
  #escape = false;
  /** At depth 1, whether the next string is a member name. */
  #expectKey = false;
  /** Collecting a depth-1 member name. */
  #keyParts: number[] | undefined;
  #lastKey = '';
  #inItems = false;
  #done = false;
  #itemCount = 0;
  /** Bytes of the item being read (from earlier chunks). */
  #itemParts: Buffer[] = [];
  #itemSize = 0;
  /** Bytes of everything but the items. */
  #envelopeParts: Buffer[] = [];
  #envelopeSize = 0;

  constructor(maxItemBytes: number) {
    this.#limit = maxItemBytes;
  }

  /** The items this chunk completes, parsed, in order. */
  push(chunk: Buffer): unknown[] {
    const items: unknown[] = [];
    let itemStart = this.#itemParts.length > 0 || this.#itemSize > 0 ? 0 : -1;
    let copyStart = this.#inItems ? -1 : 0;
    let nextQuote = -1;
    let nextBackslash = -1;
    for (let i = 0; i < chunk.length; i++) {
      if (this.#inString) {
        if (this.#escape) {
          this.#escape = false;
          if (this.#keyParts !== undefined) this.#keyParts.push(-1);
          continue;
        }
        if (this.#keyParts !== undefined) {
          const b = chunk[i] as number;
          if (b === BACKSLASH) this.#escape = true;
          else if (b === QUOTE) this.#endString();
          else if (this.#keyParts.length < 16) this.#keyParts.push(b);
          continue;
        }
        // Inside a value string: jump to the next quote or backslash with native searches.
        if (nextQuote < i) nextQuote = chunk.indexOf(QUOTE, i);
        if (nextBackslash < i && nextBackslash !== -2) {
          nextBackslash = chunk.indexOf(BACKSLASH, i);
          if (nextBackslash < 0) nextBackslash = -2;
        }
        if (nextQuote < 0 && nextBackslash === -2) break;
        if (nextBackslash >= 0 && (nextQuote < 0 || nextBackslash < nextQuote)) {
          i = nextBackslash;
          this.#escape = true;
          continue;
        }
        i = nextQuote;
        this.#inString = false;
        continue;
      }
      const c = chunk[i] as number;
      if (this.#done) {
        if (!isSpace(c)) throw new ResponseDecodeError(WHAT, '(body)', 'has data after the end of the list');
        continue;
      }
      if (this.#depth === 0 && c !== OPEN_OBJECT) {
        if (isSpace(c)) continue;
        throw new ResponseDecodeError(WHAT, '(body)', 'is not a JSON object');
      }
      if (this.#inItems && this.#depth === 1 && c !== OPEN_OBJECT && c !== CLOSE_ARRAY) {
        if (isSpace(c) || c === COMMA) continue;
        throw new ResponseDecodeError(WHAT, `items[${this.#itemCount}]`, 'is not an object');
      }
      switch (c) {
        case QUOTE:
          this.#inString = true;
          if (this.#depth === 1 && this.#expectKey && !this.#inItems) this.#keyParts = [];
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          if (this.#inItems && this.#depth === 1) itemStart = i;
          this.#depth++;
          if (this.#depth === 1) this.#expectKey = true;
          if (this.#depth === 2 && c === OPEN_ARRAY && this.#lastKey === 'items' && !this.#inItems) {
            // Copy up to and including '[' into the envelope; items are cut out from here on.
            this.#envelope(chunk.subarray(copyStart, i + 1));
            copyStart = -1;
            this.#inItems = true;
            this.#depth = 1;
          }
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          this.#depth--;
          if (this.#depth < 0) throw new ResponseDecodeError(WHAT, '(body)', 'has an unbalanced bracket');
          if (this.#inItems && this.#depth === 1 && c === CLOSE_OBJECT) {
            items.push(this.#item(chunk.subarray(itemStart, i + 1)));
            itemStart = -1;
          } else if (this.#inItems && this.#depth === 0 && c === CLOSE_ARRAY) {
            this.#inItems = false;
            this.#depth = 1;
            copyStart = i;
          } else if (this.#depth === 0) this.#done = true;
          break;
        case COMMA:
          if (this.#depth === 1) this.#expectKey = true;
          break;
        case COLON:
          if (this.#depth === 1) this.#expectKey = false;
          break;
      }
    }
    if (itemStart >= 0) this.#partialItem(chunk.subarray(itemStart));
    if (copyStart >= 0) this.#envelope(chunk.subarray(copyStart));
    return items;
  }

  /** Ends a string; a depth-1 member name is remembered. */
  #endString(): void {
    this.#inString = false;
    if (this.#keyParts !== undefined) {
      this.#lastKey = Buffer.from(this.#keyParts).equals(ITEMS) ? 'items' : '';
      this.#keyParts = undefined;
    }
  }

  /** Parses what is not an item; throws when the document is incomplete or malformed. */
  end(): ListEnvelope {
    if (!this.#done || this.#inString)
      throw new ResponseDecodeError(WHAT, '(body)', 'ended before the list did');
    const text = Buffer.concat(this.#envelopeParts).toString('utf8');
    let envelope: unknown;
    try {
      envelope = JSON.parse(text);
    } catch (error) {
      throw new ResponseDecodeError(WHAT, '(body)', `is not JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) {
      throw new ResponseDecodeError(WHAT, '(body)', 'is not a JSON object');
    }
    return envelope as ListEnvelope;
  }

  #envelope(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#envelopeSize += bytes.length;
    if (this.#envelopeSize > this.#limit) {
      throw new ResponseDecodeError(WHAT, '(body)', `has more than ${this.#limit} bytes outside its items`);
    }
    this.#envelopeParts.push(bytes);
  }

  #partialItem(bytes: Buffer): void {
    this.#itemSize += bytes.length;
    if (this.#itemSize > this.#limit) {
      throw new ResponseDecodeError(WHAT, `items[${this.#itemCount}]`, `is larger than ${this.#limit} bytes`);
    }
    this.#itemParts.push(bytes);
  }

  #item(tail: Buffer): unknown {
    const field = `items[${this.#itemCount++}]`;
    if (this.#itemSize + tail.length > this.#limit) {
      throw new ResponseDecodeError(WHAT, field, `is larger than ${this.#limit} bytes`);
    }
    const bytes = this.#itemParts.length === 0 ? tail : Buffer.concat([...this.#itemParts, tail]);
    this.#itemParts = [];
    this.#itemSize = 0;
    try {
      return JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      throw new ResponseDecodeError(WHAT, field, `is not JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
