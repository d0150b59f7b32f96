import type { KubeObject } from '@converge/runtime';
import { StoreCorruptError } from '../errors.ts';
import { type ByteSource, bufferSource, FrameReader, frame, LOG_MAGIC } from './record-codec.ts';

/** One logged write: the object stored at `revision`, or a delete (object undefined). */
export interface LogRecord {
  readonly revision: number;
  readonly typeId: string;
  readonly key: string;
  readonly object: KubeObject | undefined;
}

/** A torn last record found (and to be cut off) when reading a log. */
export interface TornTail {
  /** Offset of the record that was cut short; the log is valid up to here. */
  readonly offset: number;
  /** How many bytes follow that offset (dropped). */
  readonly bytes: number;
  readonly reason: string;
}

/** What {@link scanLog} found. */
export interface LogScan {
  /** The revision the log starts after (its header; 0 for a log without one). */
  readonly base: number;
  readonly records: number;
  readonly firstRevision: number | undefined;
  readonly lastRevision: number | undefined;
  /** Bytes of the file up to the end of the last good record. */
  readonly validLength: number;
  readonly torn: TornTail | undefined;
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

/** The first record of a log written since v2: the revision of the snapshot the log continues. */
export function logHeader(base: number): Buffer {
  return Buffer.concat([LOG_MAGIC, frame(Buffer.from(JSON.stringify({ h: 1, base }), 'utf8'))]);
}

/**
 * Streams a write-ahead log, calling `onRecord` for each record in order. A cut-short last record
 * (a crash mid-append) is reported as a torn tail and not returned; anything else that is wrong —
 * bad magic, a checksum failure before the end, a complete last record that fails its checksum, a
 * record that does not decode, revisions out of order or with a gap — is a
 * {@link StoreCorruptError}. Never returns a record that was not written whole.
 */
export function scanLog(
  source: ByteSource,
  file: string,
  onRecord: (record: LogRecord) => void,
  onBase: (base: number) => void = () => {},
): LogScan {
  const size = source.size;
  const head = source.read(0, LOG_MAGIC.length);
  const empty = { base: 0, records: 0, firstRevision: undefined, lastRevision: undefined, validLength: 0 };
  if (size < LOG_MAGIC.length) {
    if (LOG_MAGIC.subarray(0, size).equals(head)) {
      return {
        ...empty,
        torn: size > 0 ? { offset: 0, bytes: size, reason: 'log header cut short' } : undefined,
      };
    }
    throw new StoreCorruptError(file, 0, 'not a store log (bad magic)');
  }
  if (!head.equals(LOG_MAGIC)) throw new StoreCorruptError(file, 0, 'not a store log (bad magic)');
  const reader = new FrameReader(source);
  let offset = LOG_MAGIC.length;
  let base = 0;
  let count = 0;
  let first: number | undefined;
  let previous: number | undefined;
  while (offset < size) {
    const read = reader.read(offset);
    if (read.kind === 'torn') {
      return {
        base,
        records: count,
        firstRevision: first,
        lastRevision: previous,
        validLength: offset,
        torn: { offset, bytes: size - offset, reason: read.reason },
      };
    }
    if (read.kind === 'damaged') throw new StoreCorruptError(file, offset, read.reason);
    const body = parse(read.payload, file, offset);
    if (offset === LOG_MAGIC.length && body.h === 1) {
      if (typeof body.base !== 'number' || !Number.isSafeInteger(body.base) || body.base < 0) {
        throw new StoreCorruptError(file, offset, 'log header has no valid base revision');
      }
      base = body.base;
      previous = base === 0 ? undefined : base;
      onBase(base);
      offset = read.next;
      continue;
    }
    const record = decodeRecord(body, file, offset);
    if (previous !== undefined && record.revision !== previous + 1) {
      throw new StoreCorruptError(
        file,
        offset,
        record.revision <= previous
          ? `revision ${record.revision} after ${previous}`
          : `revisions ${previous + 1} to ${record.revision - 1} are missing`,
      );
    }
    previous = record.revision;
    first ??= record.revision;
    count++;
    onRecord(record);
    offset = read.next;
  }
  return {
    base,
    records: count,
    firstRevision: first,
    lastRevision: previous,
    validLength: offset,
    torn: undefined,
  };
}

/** Reads a whole log held in memory (tests and small files): {@link scanLog} collecting the records. */
export function readLog(data: Buffer, file: string): LogContents {
  const records: LogRecord[] = [];
  const scan = scanLog(bufferSource(data), file, (record) => records.push(record));
  return { records, validLength: scan.validLength, torn: scan.torn !== undefined };
}

function parse(payload: Buffer, file: string, offset: number): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch (cause) {
    throw new StoreCorruptError(file, offset, 'record is not JSON', { cause });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new StoreCorruptError(file, offset, 'record is not an object');
  }
  return body as Record<string, unknown>;
}

function decodeRecord(body: Record<string, unknown>, file: string, offset: number): LogRecord {
  const { r, t, k, o, d } = body;
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
