import { crc32 } from 'node:zlib';

/** First bytes of a log file. */
export const LOG_MAGIC = Buffer.from('CVGLOG1\n', 'latin1');
/** First bytes of a snapshot file. */
export const SNAPSHOT_MAGIC = Buffer.from('CVGSNP1\n', 'latin1');
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

/** What is at `offset`: a whole record, a record cut short (torn), or damage. */
export type FrameRead =
  | { readonly kind: 'record'; readonly payload: Buffer; readonly next: number }
  | { readonly kind: 'torn' }
  | { readonly kind: 'damaged'; readonly reason: string };

/** Reads the framed record at `offset` of `data` (`offset < data.length`). */
export function readFrame(data: Buffer, offset: number): FrameRead {
  if (data.length - offset < HEADER_BYTES) return { kind: 'torn' };
  const length = data.readUInt32LE(offset);
  if (crc32(data.subarray(offset, offset + 4)) !== data.readUInt32LE(offset + 4)) {
    // A file extended by the file system but never written reads as zeros: a torn tail.
    return allZero(data, offset)
      ? { kind: 'torn' }
      : { kind: 'damaged', reason: 'record length checksum mismatch' };
  }
  const end = offset + HEADER_BYTES + length;
  if (end > data.length) return { kind: 'torn' };
  const payload = data.subarray(offset + HEADER_BYTES, end);
  if (crc32(payload) !== data.readUInt32LE(offset + 8)) {
    return end === data.length ? { kind: 'torn' } : { kind: 'damaged', reason: 'record checksum mismatch' };
  }
  return { kind: 'record', payload, next: end };
}

function allZero(data: Buffer, from: number): boolean {
  for (let i = from; i < data.length; i++) if (data[i] !== 0) return false;
  return true;
}
