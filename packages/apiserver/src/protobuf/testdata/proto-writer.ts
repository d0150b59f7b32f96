/**
 * A small protobuf writer and encoders of the decoded kinds, for test fixtures and round trips
 * (not part of the public API; the server never answers in protobuf). Field numbers are those of
 * k8s.io/api `core/v1/generated.proto` and apimachinery `meta/v1/generated.proto`, written out
 * independently of the decoder.
 *
 * @module
 */

/** Appends protobuf wire format to a growing byte list. */
export class ProtoWriter {
  readonly #bytes: number[] = [];

  /** Appends a base-128 varint (negative numbers as 64-bit two's complement, 10 bytes). */
  varint(value: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(value));
    do {
      const low = Number(v & 0x7fn);
      v >>= 7n;
      this.#bytes.push(v === 0n ? low : low | 0x80);
    } while (v !== 0n);
    return this;
  }

  tag(field: number, wire: number): this {
    return this.varint((BigInt(field) << 3n) | BigInt(wire));
  }

  raw(bytes: Iterable<number>): this {
    for (const b of bytes) this.#bytes.push(b);
    return this;
  }

  bytes(field: number, bytes: Uint8Array): this {
    return this.tag(field, 2).varint(bytes.length).raw(bytes);
  }

  string(field: number, text: string): this {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  int64(field: number, value: number | bigint): this {
    return this.tag(field, 0).varint(value);
  }

  bool(field: number, value: boolean): this {
    return this.tag(field, 0).varint(value ? 1 : 0);
  }

  /** One `map<string, string|bytes>` entry (key = 1, value = 2). */
  mapEntry(field: number, key: string, value: string | Uint8Array): this {
    return this.message(field, (e) => {
      e.string(1, key);
      if (typeof value === 'string') e.string(2, value);
      else e.bytes(2, value);
    });
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
}

/** The `k8s\0` magic followed by a runtime.Unknown carrying `raw`. */
export function envelope(
  apiVersion: string,
  kind: string,
  raw: Uint8Array,
  extra: { contentEncoding?: string; contentType?: string } = {},
): Uint8Array {
  const w = new ProtoWriter().raw([0x6b, 0x38, 0x73, 0x00]);
  w.message(1, (t) => t.string(1, apiVersion).string(2, kind));
  w.bytes(2, raw);
  if (extra.contentEncoding !== undefined) w.string(3, extra.contentEncoding);
  if (extra.contentType !== undefined) w.string(4, extra.contentType);
  return w.finish();
}

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function seconds(rfc3339: unknown): number {
  return Math.floor(Date.parse(str(rfc3339)) / 1000);
}

function time(w: ProtoWriter, field: number, value: unknown): void {
  if (typeof value === 'string') w.message(field, (t) => t.int64(1, seconds(value)));
}

/** Writes an ObjectMeta (field numbers of apimachinery's meta/v1 generated.proto). */
export function writeObjectMeta(w: ProtoWriter, meta: Json): void {
  const strings: [number, string][] = [
    [1, 'name'],
    [2, 'generateName'],
    [3, 'namespace'],
    [4, 'selfLink'],
    [5, 'uid'],
    [6, 'resourceVersion'],
  ];
  for (const [field, key] of strings) if (typeof meta[key] === 'string') w.string(field, meta[key]);
  if (typeof meta.generation === 'number') w.int64(7, meta.generation);
  time(w, 8, meta.creationTimestamp);
  time(w, 9, meta.deletionTimestamp);
  if (typeof meta.deletionGracePeriodSeconds === 'number') w.int64(10, meta.deletionGracePeriodSeconds);
  for (const [k, v] of Object.entries(obj(meta.labels))) w.mapEntry(11, k, str(v));
  for (const [k, v] of Object.entries(obj(meta.annotations))) w.mapEntry(12, k, str(v));
  for (const ref of list(meta.ownerReferences).map(obj)) {
    w.message(13, (r) => {
      r.string(1, str(ref.kind))
        .string(3, str(ref.name))
        .string(4, str(ref.uid))
        .string(5, str(ref.apiVersion));
      if (typeof ref.controller === 'boolean') r.bool(6, ref.controller);
      if (typeof ref.blockOwnerDeletion === 'boolean') r.bool(7, ref.blockOwnerDeletion);
    });
  }
  for (const f of list(meta.finalizers)) w.string(14, str(f));
  for (const entry of list(meta.managedFields).map(obj)) {
    w.message(17, (e) => {
      if (typeof entry.manager === 'string') e.string(1, entry.manager);
      if (typeof entry.operation === 'string') e.string(2, entry.operation);
      if (typeof entry.apiVersion === 'string') e.string(3, entry.apiVersion);
      time(e, 4, entry.time);
      if (typeof entry.fieldsType === 'string') e.string(6, entry.fieldsType);
      if (entry.fieldsV1 !== undefined) e.message(7, (f) => f.string(1, JSON.stringify(entry.fieldsV1)));
      if (typeof entry.subresource === 'string') e.string(8, entry.subresource);
    });
  }
}

const fromBase64 = (v: unknown): Uint8Array => Uint8Array.from(Buffer.from(str(v), 'base64'));

/** Encodes a core/v1 Namespace, ConfigMap, Secret or ServiceAccount (JSON form) as a protobuf body. */
export function encodeProtobufObject(object: Json): Uint8Array {
  const w = new ProtoWriter();
  w.message(1, (m) => writeObjectMeta(m, obj(object.metadata)));
  switch (object.kind) {
    case 'Namespace': {
      const spec = obj(object.spec);
      const status = obj(object.status);
      w.message(2, (s) => {
        for (const f of list(spec.finalizers)) s.string(1, str(f));
      });
      w.message(3, (s) => {
        if (typeof status.phase === 'string') s.string(1, status.phase);
        for (const c of list(status.conditions).map(obj)) {
          s.message(2, (cw) => {
            cw.string(1, str(c.type)).string(2, str(c.status));
            time(cw, 4, c.lastTransitionTime);
            if (typeof c.reason === 'string') cw.string(5, c.reason);
            if (typeof c.message === 'string') cw.string(6, c.message);
          });
        }
      });
      break;
    }
    case 'ConfigMap':
      for (const [k, v] of Object.entries(obj(object.data))) w.mapEntry(2, k, str(v));
      for (const [k, v] of Object.entries(obj(object.binaryData))) w.mapEntry(3, k, fromBase64(v));
      if (typeof object.immutable === 'boolean') w.bool(4, object.immutable);
      break;
    case 'Secret':
      for (const [k, v] of Object.entries(obj(object.data))) w.mapEntry(2, k, fromBase64(v));
      if (typeof object.type === 'string') w.string(3, object.type);
      for (const [k, v] of Object.entries(obj(object.stringData))) w.mapEntry(4, k, str(v));
      if (typeof object.immutable === 'boolean') w.bool(5, object.immutable);
      break;
    case 'ServiceAccount': {
      const refFields = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];
      for (const ref of list(object.secrets).map(obj)) {
        w.message(2, (r) => {
          refFields.forEach((key, i) => {
            if (typeof ref[key] === 'string') r.string(i + 1, ref[key]);
          });
        });
      }
      for (const ref of list(object.imagePullSecrets).map(obj))
        w.message(3, (r) => r.string(1, str(ref.name)));
      if (typeof object.automountServiceAccountToken === 'boolean')
        w.bool(4, object.automountServiceAccountToken);
      break;
    }
    default:
      throw new Error(`encodeProtobufObject: no encoder for kind ${String(object.kind)}`);
  }
  return envelope(str(object.apiVersion), str(object.kind), w.finish());
}
