import type { UnstructuredObject } from '@converge/runtime';
import { protoMessageOfKind } from '../builtin/index.ts';
import { ProtobufDecodeError, ProtobufErrorCodes, ProtobufUnsupportedKindError } from './errors.ts';
import type { JsonObject } from './fields.ts';
import { decodeMessage } from './message-decode.ts';
import { ProtoReader } from './wire.ts';

/** The media type of Kubernetes protobuf bodies (request `Content-Type`). */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/** `k8s\0`: every Kubernetes protobuf body starts with these four bytes, then a runtime.Unknown. */
const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

/** A decoded protobuf body: its type (from the envelope) and the object as its JSON form. */
export interface DecodedObject {
  readonly apiVersion: string;
  readonly kind: string;
  /** The object exactly as the equivalent JSON request body would parse, `apiVersion` and `kind` set. */
  readonly object: UnstructuredObject;
}

/**
 * The type the endpoint expects, applied when the envelope leaves it out (what kube-apiserver's
 * decoder does with the endpoint's kind): a missing kind takes `kind`; a missing apiVersion takes
 * `apiVersion`.
 */
export interface ProtobufDefaults {
  readonly apiVersion?: string;
  readonly kind?: string;
}

/** What {@link decodeProtobufObject} decodes, for error messages. */
export const PROTOBUF_DECODED_TYPES: readonly string[] = ['the built-in kinds of Kubernetes 1.32'];

/**
 * Decodes a Kubernetes protobuf request body: the `k8s\0` magic, the `runtime.Unknown` envelope
 * (`typeMeta {apiVersion = 1, kind = 2} = 1`, `raw = 2`, `contentEncoding = 3`, `contentType = 4`),
 * then `raw` as the message of the named type: any built-in kind of Kubernetes 1.32, by the
 * generated field tables (`../builtin/`). Unknown fields are skipped, as Go's decoder does.
 * The result is the object's JSON form (byte fields as base64, timestamps as RFC 3339, empty
 * values omitted as Go's JSON encoder omits them), so the rest of the request pipeline treats
 * it exactly like a JSON body.
 *
 * @throws {ProtobufDecodeError} (400) for a body without the magic, broken wire format, or a
 *   missing kind/apiVersion.
 * @throws {ProtobufUnsupportedKindError} (415) for a well-formed envelope of another type.
 *
 * @example
 * if (contentType === PROTOBUF_CONTENT_TYPE) {
 *   const { object } = decodeProtobufObject(body, { apiVersion: 'v1', kind: 'ConfigMap' });
 *   await create(object);
 * }
 */
export function decodeProtobufObject(body: Uint8Array, defaults?: ProtobufDefaults): DecodedObject {
  checkMagic(body);
  const envelope = readUnknown(new ProtoReader(body, MAGIC.length));
  const { apiVersion, kind } = withDefaults(envelope.apiVersion, envelope.kind, defaults);
  if (kind === '' || apiVersion === '') {
    const missing = kind === '' ? 'Kind' : 'apiVersion';
    throw new ProtobufDecodeError(
      ProtobufErrorCodes.MISSING_KIND,
      `Object '${missing}' is missing in 'runtime.TypeMeta{APIVersion:${JSON.stringify(envelope.apiVersion)}, Kind:${JSON.stringify(envelope.kind)}}'`,
    );
  }
  if (
    envelope.contentEncoding !== '' ||
    (envelope.contentType !== '' && envelope.contentType !== PROTOBUF_CONTENT_TYPE)
  ) {
    throw new ProtobufDecodeError(
      ProtobufErrorCodes.UNSUPPORTED_ENCODING,
      `the protobuf envelope declares contentEncoding ${JSON.stringify(envelope.contentEncoding)} and contentType ` +
        `${JSON.stringify(envelope.contentType)}; only unencoded ${PROTOBUF_CONTENT_TYPE} is supported`,
    );
  }
  const message = protoMessageOfKind(apiVersion, kind);
  if (message === undefined) throw new ProtobufUnsupportedKindError(apiVersion, kind, PROTOBUF_DECODED_TYPES);
  const fields: JsonObject = decodeMessage(body, envelope.rawStart, envelope.rawEnd, message);
  // ObjectMeta is a struct in Go: its JSON is `{}` even when the message leaves it out.
  const object = { apiVersion, kind, metadata: {}, ...fields } as UnstructuredObject;
  return { apiVersion, kind, object };
}

function checkMagic(body: Uint8Array): void {
  if (body.length === 0) throw new ProtobufDecodeError(ProtobufErrorCodes.NOT_PROTOBUF, 'empty data', 0);
  if (body.length < MAGIC.length || MAGIC.some((byte, i) => body[i] !== byte)) {
    throw new ProtobufDecodeError(
      ProtobufErrorCodes.NOT_PROTOBUF,
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
      0,
    );
  }
  if (body.length === MAGIC.length)
    throw new ProtobufDecodeError(ProtobufErrorCodes.NOT_PROTOBUF, 'empty body', 0);
}

interface Envelope {
  apiVersion: string;
  kind: string;
  rawStart: number;
  rawEnd: number;
  contentEncoding: string;
  contentType: string;
}

/** runtime.Unknown; `raw` is kept as a window into the body, not copied. */
function readUnknown(r: ProtoReader): Envelope {
  const envelope: Envelope = {
    apiVersion: '',
    kind: '',
    rawStart: 0,
    rawEnd: 0,
    contentEncoding: '',
    contentType: '',
  };
  while (!r.done) {
    const t = r.tag('Unknown');
    if (t.field === 1) {
      const typeMeta = r.message(t, 'TypeMeta');
      while (!typeMeta.done) {
        const tt = typeMeta.tag('TypeMeta');
        if (tt.field === 1) envelope.apiVersion = typeMeta.string(tt, 'APIVersion');
        else if (tt.field === 2) envelope.kind = typeMeta.string(tt, 'Kind');
        else typeMeta.skip(tt);
      }
    } else if (t.field === 2) {
      const raw = r.message(t, 'Raw');
      envelope.rawStart = raw.offset;
      envelope.rawEnd = r.offset;
    } else if (t.field === 3) envelope.contentEncoding = r.string(t, 'ContentEncoding');
    else if (t.field === 4) envelope.contentType = r.string(t, 'ContentType');
    else r.skip(t);
  }
  return envelope;
}

/**
 * Applies endpoint defaults as apimachinery's `copyKindDefaults` does. An apiVersion that
 * `schema.ParseGroupVersion` rejects or that has no version (`a/b/c`, `g/`) counts as missing;
 * `/v1` is the core group's `v1`.
 */
function withDefaults(apiVersion: string, kind: string, defaults: ProtobufDefaults | undefined) {
  const parts = apiVersion.split('/');
  const [group = '', version = ''] = parts.length === 1 ? ['', parts[0]] : parts;
  const parsed = parts.length <= 2 && version !== '' ? (group === '' ? version : `${group}/${version}`) : '';
  return {
    apiVersion: parsed === '' ? (defaults?.apiVersion ?? '') : parsed,
    kind: kind === '' ? (defaults?.kind ?? '') : kind,
  };
}
