import { ProtobufDecodeError, ProtobufErrorCodes } from './errors.ts';

/** Protobuf wire types (the low three bits of a tag). */
export const WireType = {
  VARINT: 0,
  FIXED64: 1,
  LENGTH_DELIMITED: 2,
  START_GROUP: 3,
  END_GROUP: 4,
  FIXED32: 5,
} as const;

/** One field tag: its number and wire type. */
export interface Tag {
  readonly field: number;
  readonly wire: number;
}

/** The largest field number protobuf allows. */
const MAX_FIELD = 2 ** 29 - 1;
/** A varint never takes more than ten bytes (64 bits in 7-bit groups). */
const MAX_VARINT_BYTES = 10;

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Reads protobuf wire format from a window of a byte array. Every read checks the window's end,
 * so truncated or hostile input ends in a {@link ProtobufDecodeError} (400), never an exception
 * of another kind, an out-of-bounds read or a loop without progress: each call consumes at least
 * one byte or throws. Messages are decoded with a `while (!reader.done)` loop over {@link tag}.
 *
 * Strings are decoded as UTF-8 with U+FFFD for invalid sequences (Go keeps the bytes; its JSON
 * encoder then makes the same replacement), so decoding never fails on text content.
 *
 * @example
 * const r = new ProtoReader(bytes);
 * while (!r.done) { const t = r.tag('TypeMeta'); if (t.field === 1) apiVersion = r.string(t, 'apiVersion'); else r.skip(t); }
 */
export class ProtoReader {
  readonly #bytes: Uint8Array;
  readonly #end: number;
  #pos: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.#bytes = bytes;
    this.#pos = start;
    this.#end = end;
  }

  /** True once the whole window has been read. */
  get done(): boolean {
    return this.#pos >= this.#end;
  }

  /** The current read position (an offset into the underlying array). */
  get offset(): number {
    return this.#pos;
  }

  /** Reads a field tag of a message named `message` (for error messages). */
  tag(message: string): Tag {
    const at = this.#pos;
    const value = this.#varint();
    const wire = Number(value & 7n);
    const field = value >> 3n;
    if (field <= 0n || field > BigInt(MAX_FIELD)) {
      throw this.#error(`proto: ${message}: illegal tag ${field} (wire type ${wire})`, at);
    }
    if (wire === WireType.END_GROUP) {
      throw this.#error(`proto: ${message}: wiretype end group for non-group`, at);
    }
    return { field: Number(field), wire };
  }

  /** Reads a length-delimited field as a UTF-8 string. */
  string(tag: Tag, name: string): string {
    const bytes = this.bytes(tag, name);
    return bytes.length === 0 ? '' : utf8.decode(bytes);
  }

  /** Reads a length-delimited field as bytes (a view into the input, not a copy). */
  bytes(tag: Tag, name: string): Uint8Array {
    this.#expect(tag, WireType.LENGTH_DELIMITED, name);
    const length = this.#length();
    const start = this.#pos;
    this.#pos += length;
    return this.#bytes.subarray(start, start + length);
  }

  /** Reads a length-delimited field as a reader over its bytes (an embedded message). */
  message(tag: Tag, name: string): ProtoReader {
    this.#expect(tag, WireType.LENGTH_DELIMITED, name);
    const length = this.#length();
    const start = this.#pos;
    this.#pos += length;
    return new ProtoReader(this.#bytes, start, start + length);
  }

  /** Reads a varint field as a two's complement signed 64-bit integer (`int64`). */
  int64(tag: Tag, name: string): bigint {
    this.#expect(tag, WireType.VARINT, name);
    return BigInt.asIntN(64, this.#varint());
  }

  /** Reads a varint field as an `int32` (the low 32 bits, signed, as Go's decoder truncates). */
  int32(tag: Tag, name: string): number {
    this.#expect(tag, WireType.VARINT, name);
    return Number(BigInt.asIntN(32, this.#varint()));
  }

  /** Reads a varint field as a `bool` (any non-zero value is true). */
  bool(tag: Tag, name: string): boolean {
    this.#expect(tag, WireType.VARINT, name);
    return this.#varint() !== 0n;
  }

  /** Skips a field of any wire type, including (nested) groups. */
  skip(tag: Tag): void {
    if (tag.wire !== WireType.START_GROUP) {
      this.#skipValue(tag.wire);
      return;
    }
    let depth = 1;
    while (depth > 0) {
      const at = this.#pos;
      const value = this.#varint();
      const wire = Number(value & 7n);
      if (wire === WireType.START_GROUP) depth++;
      else if (wire === WireType.END_GROUP) depth--;
      else this.#skipValue(wire, at);
    }
  }

  #skipValue(wire: number, at = this.#pos): void {
    switch (wire) {
      case WireType.VARINT:
        this.#varint();
        return;
      case WireType.FIXED64:
        this.#advance(8);
        return;
      case WireType.LENGTH_DELIMITED:
        this.#advance(this.#length());
        return;
      case WireType.FIXED32:
        this.#advance(4);
        return;
      case WireType.END_GROUP:
        throw this.#error('proto: unexpected end of group', at);
      default:
        throw this.#error(`proto: illegal wireType ${wire}`, at);
    }
  }

  #advance(count: number): void {
    if (this.#end - this.#pos < count) throw this.#eof();
    this.#pos += count;
  }

  /** A length prefix: a varint that must fit in the remaining window. */
  #length(): number {
    const at = this.#pos;
    const value = this.#varint();
    if (value > BigInt(this.#end - this.#pos)) {
      throw value >= 2n ** 63n
        ? this.#error('proto: negative length found during unmarshaling', at)
        : this.#eof();
    }
    return Number(value);
  }

  #varint(): bigint {
    const start = this.#pos;
    let small = 0;
    let big = 0n;
    for (let i = 0; ; i++) {
      if (i === MAX_VARINT_BYTES) throw this.#error('proto: integer overflow', start);
      if (this.#pos >= this.#end) throw this.#eof();
      const byte = this.#bytes[this.#pos++] ?? 0;
      if (i < 4) small += (byte & 0x7f) * 2 ** (7 * i);
      else big |= BigInt(byte & 0x7f) << BigInt(7 * i);
      if (byte < 0x80) return (BigInt(small) | big) & 0xffff_ffff_ffff_ffffn;
    }
  }

  #expect(tag: Tag, wire: number, name: string): void {
    if (tag.wire !== wire)
      throw this.#error(`proto: wrong wireType = ${tag.wire} for field ${name}`, this.#pos);
  }

  #eof(): ProtobufDecodeError {
    return this.#error('unexpected EOF', this.#pos);
  }

  #error(message: string, at: number): ProtobufDecodeError {
    return new ProtobufDecodeError(ProtobufErrorCodes.MALFORMED, message, at);
  }
}
