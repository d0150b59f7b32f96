import type { ProtoRow } from '../builtin/index.ts';
import { type MessageInfo, messageInfo } from './message-decode.ts';
import { parseDuration, parseTime, wellKnown } from './well-known.ts';

const encoder = new TextEncoder();

/** A growable byte buffer with protobuf's primitives; nested messages are written to a child and copied. */
export class ProtoBuffer {
  #bytes = new Uint8Array(256);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  /** The written bytes (a view; copy before reusing the buffer). */
  view(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  reset(): void {
    this.#length = 0;
  }

  #reserve(extra: number): void {
    if (this.#length + extra <= this.#bytes.length) return;
    let size = this.#bytes.length * 2;
    while (size < this.#length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = next;
  }

  byte(value: number): void {
    this.#reserve(1);
    this.#bytes[this.#length++] = value;
  }

  varint(value: number): void {
    if (value >= 0 && value <= 0xffffffff) {
      this.#reserve(5);
      let v = value;
      while (v > 0x7f) {
        this.#bytes[this.#length++] = (v & 0x7f) | 0x80;
        v = Math.floor(v / 128);
      }
      this.#bytes[this.#length++] = v;
      return;
    }
    this.bigVarint(BigInt(Math.trunc(value)));
  }

  bigVarint(value: bigint): void {
    this.#reserve(10);
    let v = BigInt.asUintN(64, value);
    do {
      const low = Number(v & 0x7fn);
      v >>= 7n;
      this.#bytes[this.#length++] = v === 0n ? low : low | 0x80;
    } while (v !== 0n);
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  bytes(field: number, bytes: Uint8Array): void {
    this.tag(field, 2);
    this.varint(bytes.length);
    this.#reserve(bytes.length);
    this.#bytes.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  string(field: number, text: string): void {
    // Short strings (at most 127 UTF-8 bytes) are encoded in place behind a one-byte length.
    if (text.length <= 42) {
      this.tag(field, 2);
      this.#reserve(1 + text.length * 3);
      const at = this.#length;
      const { written } = encoder.encodeInto(text, this.#bytes.subarray(at + 1));
      this.#bytes[at] = written;
      this.#length = at + 1 + written;
      return;
    }
    this.bytes(field, encoder.encode(text));
  }

  /** Appends another buffer's bytes as a length-delimited field (a nested message). */
  message(field: number, from: ProtoBuffer): void {
    const length = from.#length;
    this.tag(field, 2);
    this.varint(length);
    this.#reserve(length);
    this.#bytes.set(from.#bytes.subarray(0, length), this.#length);
    this.#length += length;
  }
}

/** One child buffer per nesting depth, reused across calls. */
const pool: ProtoBuffer[] = [];

function child(depth: number): ProtoBuffer {
  let buffer = pool[depth];
  if (buffer === undefined) {
    buffer = new ProtoBuffer();
    pool[depth] = buffer;
  }
  buffer.reset();
  return buffer;
}

function fromBase64(text: string): Uint8Array {
  return Buffer.from(text, 'base64');
}

function scalar(out: ProtoBuffer, field: number, type: string, value: unknown): void {
  switch (type) {
    case 'string':
      if (typeof value === 'string') out.string(field, value);
      return;
    case 'bool':
      if (typeof value === 'boolean') {
        out.tag(field, 0);
        out.byte(value ? 1 : 0);
      }
      return;
    case 'int32':
    case 'int64':
      if (typeof value === 'number' && Number.isFinite(value)) {
        out.tag(field, 0);
        out.varint(Math.trunc(value));
      }
      return;
    case 'bytes':
      if (typeof value === 'string') out.bytes(field, fromBase64(value));
      return;
    default:
      return;
  }
}

function special(out: ProtoBuffer, kind: string, value: unknown): void {
  switch (kind) {
    case 'time':
    case 'microtime': {
      if (typeof value !== 'string') return;
      const time = parseTime(value);
      if (time === undefined) return;
      out.tag(1, 0);
      out.bigVarint(time.seconds);
      out.tag(2, 0);
      out.varint(kind === 'microtime' ? time.nanos - (time.nanos % 1000) : 0);
      return;
    }
    case 'duration': {
      const ns = typeof value === 'string' ? parseDuration(value) : undefined;
      if (ns !== undefined) {
        out.tag(1, 0);
        out.bigVarint(ns);
      }
      return;
    }
    case 'quantity':
      if (typeof value === 'string' || typeof value === 'number') out.string(1, String(value));
      return;
    case 'int-or-string':
      if (typeof value === 'string') {
        out.tag(1, 0);
        out.byte(1);
        out.string(3, value);
      } else if (typeof value === 'number') {
        out.tag(1, 0);
        out.byte(0);
        out.tag(2, 0);
        out.varint(Math.trunc(value));
      }
      return;
    case 'raw-json':
      out.bytes(1, encoder.encode(JSON.stringify(value)));
      return;
    case 'string-array':
      if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') out.string(1, item);
      return;
    default:
      return;
  }
}

/** Writes one value of `type` as field `field` of `out`. */
function value(out: ProtoBuffer, field: number, type: string, item: unknown, depth: number): void {
  if (item === null || item === undefined) return;
  const known = wellKnown(type);
  const info = known === undefined ? messageInfo(type) : undefined;
  if (known === undefined && info === undefined) {
    scalar(out, field, type, item);
    return;
  }
  const sub = child(depth + 1);
  if (known !== undefined) special(sub, known, item);
  else if (typeof item === 'object' && !Array.isArray(item)) {
    encodeFields(sub, info as MessageInfo, item as Record<string, unknown>, depth + 1);
  } else return;
  out.message(field, sub);
}

/** Rows by JSON name, for messages without embedded structs (most): encoding walks the object's keys. */
const byJson = new WeakMap<MessageInfo, ReadonlyMap<string, ProtoRow> | null>();

function rowsByJson(info: MessageInfo): ReadonlyMap<string, ProtoRow> | null {
  let map = byJson.get(info);
  if (map === undefined) {
    map = info.rows.some((row) => row[3] === 'inline')
      ? null
      : new Map(info.rows.map((row) => [row[0], row]));
    byJson.set(info, map);
  }
  return map;
}

function field(out: ProtoBuffer, row: ProtoRow, item: unknown, depth: number): void {
  const [, number, type, label] = row;
  if (item === undefined || item === null) return;
  if (label === 'repeated') {
    if (Array.isArray(item)) for (const element of item) value(out, number, type, element, depth);
  } else if (label === 'map') {
    if (typeof item !== 'object' || Array.isArray(item)) return;
    const map = item as Record<string, unknown>;
    for (const key in map) {
      if (!Object.hasOwn(map, key)) continue;
      const entry = child(depth + 1);
      entry.string(1, key);
      value(entry, 2, type, map[key], depth + 1);
      out.message(number, entry);
    }
  } else value(out, number, type, item, depth);
}

/**
 * Writes the fields of `object` (its JSON form) as message `info`: in the object's key order for
 * plain messages (protobuf readers accept any order), in field-number order when the message
 * embeds structs (their fields are gathered from the same object).
 */
export function encodeFields(
  out: ProtoBuffer,
  info: MessageInfo,
  object: Readonly<Record<string, unknown>>,
  depth: number,
): void {
  const map = rowsByJson(info);
  if (map !== null) {
    for (const key in object) {
      const row = map.get(key);
      if (row !== undefined && Object.hasOwn(object, key)) field(out, row, object[key], depth);
    }
    return;
  }
  for (const row of info.rows) {
    if (row[3] === 'inline') {
      const embedded = messageInfo(row[2]);
      if (embedded === undefined) continue;
      const sub = child(depth + 1);
      encodeFields(sub, embedded, object, depth + 1);
      out.message(row[1], sub);
      continue;
    }
    const item = Object.hasOwn(object, row[0]) ? object[row[0]] : undefined;
    field(out, row, item, depth);
  }
}

/** Encodes an object (its JSON form) as message `message`; returns a fresh copy of the bytes. */
export function encodeMessage(message: string, object: Readonly<Record<string, unknown>>): Uint8Array {
  const info = messageInfo(message);
  if (info === undefined) throw new Error(`no protobuf table for ${message}`);
  const out = new ProtoBuffer();
  encodeFields(out, info, object, 0);
  return out.view().slice();
}

/** Like {@link encodeMessage}, but returns a view of a fresh buffer (no final copy). */
export function encodeMessageView(message: string, object: Readonly<Record<string, unknown>>): Uint8Array {
  const info = messageInfo(message);
  if (info === undefined) throw new Error(`no protobuf table for ${message}`);
  const out = new ProtoBuffer();
  encodeFields(out, info, object, 0);
  return out.view();
}
