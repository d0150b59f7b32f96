import { crc32 } from 'node:zlib';
import type { StoreFileSystem } from './file-system.ts';

/** First bytes of a log file. */
export const LOG_MAGIC = Buffer.from('CVGLOG1\n', 'latin1');
/** First bytes of a snapshot file written whole as one record (read for old data directories). */
export const SNAPSHOT_MAGIC = Buffer.from('CVGSNP1\n', 'latin1');
/** First bytes of a snapshot file of one record per object (written since v2). */
export const SNAPSHOT_MAGIC_V2 = Buffer.from('CVGSNP2\n', 'latin1');
/** Bytes before each payload: length, checksum of the length bytes, checksum of the payload. */
export const HEADER_BYTES = 12;

/**
 * Frames one record: `[u32 length][u32 crc32(length bytes)][u32 crc32(payload)][payload]`, all
 * little-endian. The length has its own checksum so a damaged length is told apart from a record
 * cut short by a crash.
 */
export function frame(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(out.subarray(0, 4)), 4);
  out.writeUInt32LE(crc32(payload), 8);
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** Random access to the bytes of a file (or of a buffer in tests), read in bounded slices. */
export interface ByteSource {
  readonly size: number;
  /** Reads `length` bytes at `position` (fewer at the end of the source). */
  read(position: number, length: number): Buffer;
}

/** A {@link ByteSource} over a buffer. */
export function bufferSource(data: Buffer): ByteSource {
  return { size: data.length, read: (position, length) => data.subarray(position, position + length) };
}

/** A {@link ByteSource} over an open file of `size` bytes. */
export function fileSource(fsys: StoreFileSystem, fd: number, size: number): ByteSource {
  return {
    size,
    read(position, length) {
      const n = Math.max(0, Math.min(length, size - position));
      const out = Buffer.allocUnsafe(n);
      let done = 0;
      while (done < n) {
        const read = fsys.readSync(fd, out, done, n - done, position + done);
        if (read === 0) break;
        done += read;
      }
      return out.subarray(0, done);
    },
  };
}

/** What is at an offset: a whole record, a record a crash cut short (torn), or damage. */
export type FrameRead =
  | { readonly kind: 'record'; readonly payload: Buffer; readonly next: number }
  | { readonly kind: 'torn'; readonly reason: string }
  | { readonly kind: 'damaged'; readonly reason: string };

/** How many bytes are read ahead at once when streaming a file. */
const CHUNK_BYTES = 1 << 20;

/**
 * Reads framed records one after another from a {@link ByteSource}, a megabyte at a time: memory
 * is bounded by the largest record, never by the file (a log of several GiB streams).
 */
export class FrameReader {
  readonly #source: ByteSource;
  #chunk: Buffer = Buffer.alloc(0);
  #chunkAt = 0;
  #trailingZeros: number | undefined;

  constructor(source: ByteSource) {
    this.#source = source;
  }

  get size(): number {
    return this.#source.size;
  }

  /** The bytes `[offset, offset + length)`, from the read-ahead chunk when they are in it. */
  bytes(offset: number, length: number): Buffer {
    const end = offset + length;
    if (offset >= this.#chunkAt && end <= this.#chunkAt + this.#chunk.length) {
      return this.#chunk.subarray(offset - this.#chunkAt, end - this.#chunkAt);
    }
    if (length > CHUNK_BYTES) return this.#source.read(offset, length);
    this.#chunk = this.#source.read(offset, CHUNK_BYTES);
    this.#chunkAt = offset;
    return this.#chunk.subarray(0, length);
  }

  /** Reads the framed record at `offset` (`offset < size`). */
  read(offset: number): FrameRead {
    const size = this.#source.size;
    if (size - offset < HEADER_BYTES) return { kind: 'torn', reason: 'record header cut short' };
    const header = this.bytes(offset, HEADER_BYTES);
    const length = header.readUInt32LE(0);
    const payloadCrc = header.readUInt32LE(8);
    if (crc32(header.subarray(0, 4)) !== header.readUInt32LE(4)) {
      return this.#zeroTailFrom() < offset + HEADER_BYTES
        ? { kind: 'torn', reason: 'record header never reached the disk (zeros)' }
        : { kind: 'damaged', reason: 'record length checksum mismatch' };
    }
    const end = offset + HEADER_BYTES + length;
    if (end > size)
      return { kind: 'torn', reason: `record cut short (${size - offset} of ${end - offset} bytes)` };
    const payload = this.bytes(offset + HEADER_BYTES, length);
    if (crc32(payload) !== payloadCrc) {
      // A crash mid-append leaves a record cut short or blocks the file system allocated but
      // never wrote (zeros to the end of the file). A whole record of wrong non-zero bytes is
      // damage to bytes that were fsynced, so possibly to an acknowledged write: not a torn tail.
      return this.#zeroTailFrom() < end
        ? { kind: 'torn', reason: 'record payload never reached the disk (zeros to the end of the file)' }
        : {
            kind: 'damaged',
            reason:
              end === size ? 'last record is complete but fails its checksum' : 'record checksum mismatch',
          };
    }
    return { kind: 'record', payload, next: end };
  }

  /** Where the run of zero bytes that ends the file starts (`size` when the last byte is not zero). */
  #zeroTailFrom(): number {
    if (this.#trailingZeros !== undefined) return this.#trailingZeros;
    let at = this.#source.size;
    while (at > 0) {
      const from = Math.max(0, at - 65_536);
      const slice = this.#source.read(from, at - from);
      let i = slice.length - 1;
      while (i >= 0 && slice[i] === 0) i--;
      if (i >= 0) {
        at = from + i + 1;
        break;
      }
      at = from;
    }
    this.#trailingZeros = at;
    return at;
  }
}
