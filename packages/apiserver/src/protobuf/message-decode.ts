import { builtinDefinitions, type ProtoRow, protoMessages } from '../builtin/index.ts';
import { ProtobufDecodeError, ProtobufErrorCodes } from './errors.ts';
import { base64, type JsonObject, setOwn } from './fields.ts';
import { formatDuration, formatTime, POINTER_SCALARS, wellKnown } from './well-known.ts';
import { ProtoReader, type Tag, WireType } from './wire.ts';

/** A message's rows by field number, and the fields its JSON always carries. */
export interface MessageInfo {
  readonly name: string;
  readonly byNumber: ReadonlyMap<number, ProtoRow>;
  readonly rows: readonly ProtoRow[];
  readonly required: ReadonlySet<string>;
}

const infos = new Map<string, MessageInfo>();

/** The table of a generated message (cached), or undefined for a message the tables do not have. */
export function messageInfo(name: string): MessageInfo | undefined {
  let info = infos.get(name);
  if (info !== undefined) return info;
  const rows = protoMessages()[name];
  if (rows === undefined) return undefined;
  const definition = builtinDefinitions()[`io.k8s.${name.slice('k8s.io.'.length)}`];
  info = {
    name,
    rows,
    byNumber: new Map(rows.map((row) => [row[1], row])),
    required: new Set(definition?.required ?? []),
  };
  infos.set(name, info);
  return info;
}

/** Nested messages deeper than this are hostile: no Kubernetes type nests this deep. */
const MAX_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

const SCALARS: ReadonlySet<string> = new Set(['string', 'bool', 'int32', 'int64', 'bytes']);

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

function scalar(reader: ProtoReader, tag: Tag, type: string, name: string): unknown {
  switch (type) {
    case 'string':
      return reader.string(tag, name);
    case 'bool':
      return reader.bool(tag, name);
    case 'int32':
      return reader.int32(tag, name);
    case 'int64':
      return Number(reader.int64(tag, name));
    case 'bytes':
      return base64(reader.bytes(tag, name));
    default:
      throw new ProtobufDecodeError(
        ProtobufErrorCodes.MALFORMED,
        `${name}: unsupported type ${type}`,
        reader.offset,
      );
  }
}

function special(reader: ProtoReader, kind: string, name: string, at: number): unknown {
  const fields = new Map<number, bigint | Uint8Array>();
  while (!reader.done) {
    const t = reader.tag(name);
    if (t.wire === WireType.VARINT) fields.set(t.field, reader.int64(t, name));
    else if (t.wire === WireType.LENGTH_DELIMITED) fields.set(t.field, reader.bytes(t, name));
    else reader.skip(t);
  }
  const int = (n: number): bigint => {
    const v = fields.get(n);
    return typeof v === 'bigint' ? v : 0n;
  };
  const bytes = (n: number): Uint8Array | undefined => {
    const v = fields.get(n);
    return v instanceof Uint8Array ? v : undefined;
  };
  switch (kind) {
    case 'time':
    case 'microtime': {
      if (fields.size === 0) return undefined;
      const seconds = int(1);
      if (seconds < -62_135_596_800n || seconds > 253_402_300_799n) {
        throw new ProtobufDecodeError(
          ProtobufErrorCodes.MALFORMED,
          `${name}: seconds ${seconds} out of range`,
          at,
        );
      }
      return formatTime(seconds, Number(BigInt.asIntN(32, int(2))), kind === 'microtime');
    }
    case 'duration':
      return formatDuration(int(1));
    case 'quantity':
      return utf8.decode(bytes(1) ?? new Uint8Array());
    case 'int-or-string':
      return int(1) === 1n ? utf8.decode(bytes(3) ?? new Uint8Array()) : Number(BigInt.asIntN(32, int(2)));
    case 'raw-json': {
      const raw = bytes(1);
      if (raw === undefined || raw.length === 0) return undefined;
      try {
        return JSON.parse(utf8.decode(raw)) as unknown;
      } catch {
        throw new ProtobufDecodeError(ProtobufErrorCodes.MALFORMED, `${name}: raw is not JSON`, at);
      }
    }
    default:
      return undefined;
  }
}

function stringArray(reader: ProtoReader, name: string): string[] {
  const items: string[] = [];
  while (!reader.done) {
    const t = reader.tag(name);
    if (t.field === 1) items.push(reader.string(t, name));
    else reader.skip(t);
  }
  return items;
}

/** Reads one value of `type` (scalar or message) at the reader's current field. */
function value(reader: ProtoReader, tag: Tag, type: string, name: string, depth: number): unknown {
  const info = messageInfo(type);
  const known = wellKnown(type);
  if (info === undefined && known === undefined) return scalar(reader, tag, type, name);
  const at = reader.offset;
  const sub = reader.message(tag, name);
  if (known === 'string-array') return stringArray(sub, name);
  if (known !== undefined) return special(sub, known, name, at);
  return decodeFields(sub, info as MessageInfo, depth + 1, {});
}

function readPacked(reader: ProtoReader, tag: Tag, type: string, name: string, into: unknown[]): void {
  const sub = reader.message(tag, name);
  const varint: Tag = { field: tag.field, wire: WireType.VARINT };
  while (!sub.done) into.push(scalar(sub, varint, type, name));
}

/**
 * Decodes the fields of one message into `target` as the JSON kube-apiserver would write: Go
 * JSON names, embedded structs inlined, zero scalars dropped unless required or a Go pointer,
 * unknown field numbers skipped (as Go's decoder skips them).
 */
export function decodeFields(
  reader: ProtoReader,
  info: MessageInfo,
  depth: number,
  target: JsonObject,
): JsonObject {
  if (depth > MAX_DEPTH) {
    throw new ProtobufDecodeError(
      ProtobufErrorCodes.MALFORMED,
      `${info.name}: nested too deeply`,
      reader.offset,
    );
  }
  while (!reader.done) {
    const tag = reader.tag(info.name);
    const row = info.byNumber.get(tag.field);
    if (row === undefined) {
      reader.skip(tag);
      continue;
    }
    const [json, , type, label] = row;
    const name = `${info.name}.${json}`;
    if (label === 'inline') {
      const embedded = messageInfo(type);
      const sub = reader.message(tag, name);
      if (embedded === undefined) continue;
      decodeFields(sub, embedded, depth + 1, target);
    } else if (label === 'repeated') {
      let list = target[json] as unknown[] | undefined;
      if (list === undefined) {
        list = [];
        setOwn(target, json, list);
      }
      if (
        tag.wire === WireType.LENGTH_DELIMITED &&
        (type === 'int32' || type === 'int64' || type === 'bool')
      ) {
        readPacked(reader, tag, type, name, list);
      } else list.push(value(reader, tag, type, name, depth));
    } else if (label === 'map') {
      let map = target[json] as JsonObject | undefined;
      if (map === undefined) {
        map = {};
        setOwn(target, json, map);
      }
      const entry = reader.message(tag, name);
      let key = '';
      let entryValue: unknown;
      while (!entry.done) {
        const t = entry.tag(name);
        if (t.field === 1) key = entry.string(t, name);
        else if (t.field === 2) entryValue = value(entry, t, type, name, depth);
        else entry.skip(t);
      }
      setOwn(map, key, entryValue ?? defaultOf(type));
    } else {
      const decoded = value(reader, tag, type, name, depth);
      if (decoded === undefined) delete target[json];
      // Go's omitempty drops zero scalars; a struct (IntOrString, Quantity) is never empty to it.
      else if (
        isZero(decoded) &&
        SCALARS.has(type) &&
        !info.required.has(json) &&
        !POINTER_SCALARS.has(json)
      ) {
        delete target[json];
      } else setOwn(target, json, decoded);
    }
  }
  return target;
}

function defaultOf(type: string): unknown {
  if (type === 'string' || type === 'bytes' || wellKnown(type) === 'quantity') return '';
  if (type === 'bool') return false;
  if (type === 'int32' || type === 'int64') return 0;
  return wellKnown(type) === 'string-array' ? [] : {};
}

/** Decodes a whole message of a generated type from a window of bytes. */
export function decodeMessage(bytes: Uint8Array, start: number, end: number, message: string): JsonObject {
  const info = messageInfo(message);
  if (info === undefined) throw new Error(`no protobuf table for ${message}`);
  return decodeFields(new ProtoReader(bytes, start, end), info, 0, {});
}

export { utf8 };
