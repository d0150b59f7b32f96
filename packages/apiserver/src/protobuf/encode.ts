import { protoMessageOfKind } from '../builtin/index.ts';
import { ProtobufUnsupportedKindError } from './errors.ts';
import { encodeMessageView, ProtoBuffer } from './message-encode.ts';

/** `k8s\0`, the prefix of every Kubernetes protobuf body. */
const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** The `Content-Type` of a watch stream of protobuf events (each frame: 4-byte big-endian length). */
export const PROTOBUF_WATCH_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/** Whether {@link encodeProtobufObject} can encode objects of `apiVersion`/`kind`. */
export function canEncodeProtobuf(apiVersion: string, kind: string): boolean {
  return protoMessageOfKind(apiVersion, kind) !== undefined;
}

/** `k8s\0` + runtime.Unknown { typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4 }, copying `raw` once. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const head = new ProtoBuffer();
  const typeMeta = new ProtoBuffer();
  typeMeta.string(1, apiVersion);
  typeMeta.string(2, kind);
  head.bytes(1, typeMeta.view());
  head.tag(2, 2);
  head.varint(raw.length);
  const tail = Uint8Array.of(0x1a, 0x00, 0x22, 0x00); // contentEncoding = "", contentType = ""
  const out = new Uint8Array(MAGIC.length + head.length + raw.length + tail.length);
  out.set(MAGIC);
  out.set(head.view(), MAGIC.length);
  out.set(raw, MAGIC.length + head.length);
  out.set(tail, MAGIC.length + head.length + raw.length);
  return out;
}

/**
 * Encodes an object or a list (its JSON form, `apiVersion` and `kind` set) as kube-apiserver's
 * protobuf serializer writes it: `k8s\0` and a `runtime.Unknown` whose `raw` is the message of the
 * kind, by the generated 1.32 field tables.
 *
 * @throws {ProtobufUnsupportedKindError} (415) for a kind without a protobuf message (custom resources).
 *
 * @example
 * res.setHeader('Content-Type', PROTOBUF_CONTENT_TYPE);
 * res.end(encodeProtobufObject(pod));
 */
export function encodeProtobufObject(object: Readonly<Record<string, unknown>>): Uint8Array {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const message = protoMessageOfKind(apiVersion, kind);
  if (message === undefined) throw new ProtobufUnsupportedKindError(apiVersion, kind, ['built-in kinds']);
  return envelope(apiVersion, kind, encodeMessageView(message, object));
}

/**
 * One frame of a protobuf watch stream: a 4-byte big-endian length, then `k8s\0` and a
 * `runtime.Unknown` of a `meta.k8s.io/v1 WatchEvent` (`type = 1`, `object = 2` whose raw is the
 * enveloped object, as client-go's streaming decoder expects).
 */
export function encodeProtobufWatchEvent(
  type: string,
  object: Readonly<Record<string, unknown>>,
): Uint8Array {
  const event = new ProtoBuffer();
  event.string(1, type);
  const raw = new ProtoBuffer();
  raw.bytes(1, encodeProtobufObject(object));
  event.bytes(2, raw.view());
  const body = envelope('v1', 'WatchEvent', event.view());
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setUint32(0, body.length);
  frame.set(body, 4);
  return frame;
}
