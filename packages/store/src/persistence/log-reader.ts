import type { KubeObject } from '@converge/runtime';
import { StoreCorruptError } from '../errors.ts';
import { LOG_MAGIC, readFrame } from './record-codec.ts';

/** One logged write: the object stored at `revision`, or a delete (object undefined). */
export interface LogRecord {
  readonly revision: number;
  readonly typeId: string;
  readonly key: string;
  readonly object: KubeObject | undefined;
}

/** What {@link readLog} found. */
export interface LogContents {
  readonly records: readonly LogRecord[];
  /** Bytes of the file up to the end of the last good record; the rest is a torn tail. */
  readonly validLength: number;
  /** Whether a torn tail was found (and must be truncated before appending). */
  readonly torn: boolean;
}

/** Encodes a record's payload (the framing is added by `frame`). */
export function encodeRecord(record: LogRecord): Buffer {
  const body =
    record.object === undefined
      ? { r: record.revision, t: record.typeId, k: record.key, d: 1 }
      : { r: record.revision, t: record.typeId, k: record.key, o: record.object };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * Reads a write-ahead log. A cut-short last record (a crash mid-append) is reported as a torn tail
 * and not returned; anything else that is wrong — bad magic, a checksum failure before the end, a
 * record that does not decode, revisions out of order — is a {@link StoreCorruptError}. Never
 * returns a record that was not written whole.
 */
export function readLog(data: Buffer, file: string): LogContents {
  if (data.length < LOG_MAGIC.length) {
    if (LOG_MAGIC.subarray(0, data.length).equals(data))
      return { records: [], validLength: 0, torn: data.length > 0 };
    throw new StoreCorruptError(file, 0, 'not a store log (bad magic)');
  }
  if (!data.subarray(0, LOG_MAGIC.length).equals(LOG_MAGIC)) {
    throw new StoreCorruptError(file, 0, 'not a store log (bad magic)');
  }
  const records: LogRecord[] = [];
  let offset = LOG_MAGIC.length;
  let previous = 0;
  while (offset < data.length) {
    const read = readFrame(data, offset);
    if (read.kind === 'torn') return { records, validLength: offset, torn: true };
    if (read.kind === 'damaged') throw new StoreCorruptError(file, offset, read.reason);
    const record = decodeRecord(read.payload, file, offset);
    if (record.revision <= previous) {
      throw new StoreCorruptError(file, offset, `revision ${record.revision} after ${previous}`);
    }
    previous = record.revision;
    records.push(record);
    offset = read.next;
  }
  return { records, validLength: offset, torn: false };
}

function decodeRecord(payload: Buffer, file: string, offset: number): LogRecord {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch (cause) {
    throw new StoreCorruptError(file, offset, 'record is not JSON', { cause });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new StoreCorruptError(file, offset, 'record is not an object');
  }
  const { r, t, k, o, d } = body as Record<string, unknown>;
  if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 1) {
    throw new StoreCorruptError(file, offset, 'record has no valid revision');
  }
  if (typeof t !== 'string' || t === '' || typeof k !== 'string' || !k.includes('\u0000')) {
    throw new StoreCorruptError(file, offset, 'record has no valid type or key');
  }
  if (d === 1 && o === undefined) return { revision: r, typeId: t, key: k, object: undefined };
  if (
    d === undefined &&
    typeof o === 'object' &&
    o !== null &&
    !Array.isArray(o) &&
    typeof (o as { metadata?: unknown }).metadata === 'object' &&
    (o as { metadata?: unknown }).metadata !== null
  ) {
    return { revision: r, typeId: t, key: k, object: o as KubeObject };
  }
  throw new StoreCorruptError(file, offset, 'record is neither a put nor a delete');
}
