import { ProtobufDecodeError, ProtobufErrorCodes } from './errors.ts';
import type { ProtoReader, Tag } from './wire.ts';

/** A JSON object being built from protobuf fields. */
export type JsonObject = Record<string, unknown>;

/**
 * Sets an own, enumerable property, even for keys such as `__proto__` that plain assignment would
 * turn into a prototype change. Map keys come from the request and may be anything.
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** How a `map<string, V>` entry's value is turned into JSON. */
export type MapValue = 'string' | 'bytes';

/**
 * Reads one entry of a protobuf map (`message Entry { key = 1; value = 2; }`) into `target`. A
 * missing key or value is the empty string (or empty bytes); a repeated key keeps the last value,
 * as Go's decoder does. Bytes become standard base64, as Go's JSON encoder writes `[]byte`.
 */
export function readMapEntry(
  reader: ProtoReader,
  tag: Tag,
  name: string,
  kind: MapValue,
  target: JsonObject,
): void {
  const entry = reader.message(tag, name);
  let key = '';
  let value = '';
  while (!entry.done) {
    const t = entry.tag(`${name} entry`);
    if (t.field === 1) key = entry.string(t, `${name} key`);
    else if (t.field === 2) {
      value = kind === 'string' ? entry.string(t, `${name} value`) : base64(entry.bytes(t, `${name} value`));
    } else entry.skip(t);
  }
  setOwn(target, key, value);
}

/** Standard base64 with padding (Go's encoding of `[]byte` in JSON). */
export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range RFC 3339 can print. */
const MIN_SECONDS = -62_135_596_800n;
const MAX_SECONDS = 253_402_300_799n;

/**
 * Reads a `meta.v1.Time` (a Timestamp message: seconds = 1, nanos = 2) as Kubernetes' JSON does:
 * RFC 3339 in UTC at second precision (nanos are dropped, as apimachinery's decoder drops them).
 * An empty message is the zero time, which JSON writes as `null`: returns `undefined`.
 */
export function readTime(reader: ProtoReader, tag: Tag, name: string): string | undefined {
  const at = reader.offset;
  const time = reader.message(tag, name);
  if (time.done) return undefined;
  let seconds = 0n;
  while (!time.done) {
    const t = time.tag('Timestamp');
    if (t.field === 1) seconds = time.int64(t, 'Seconds');
    else if (t.field === 2) time.int32(t, 'Nanos');
    else time.skip(t);
  }
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw new ProtobufDecodeError(
      ProtobufErrorCodes.MALFORMED,
      `${name}: seconds ${seconds} is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z`,
      at,
    );
  }
  return new Date(Number(seconds) * 1000).toISOString().replace('.000Z', 'Z');
}
