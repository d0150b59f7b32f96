/**
 * Protobuf, `application/vnd.kubernetes.protobuf`, for every built-in kind of Kubernetes 1.32:
 * the bodies kubectl's generator commands (`kubectl create deployment|service|job|…`) and Go
 * clients send, and the objects, lists and watch events they ask for. {@link decodeProtobufObject}
 * reads the `k8s\0` envelope and the message into the same JSON form a JSON body parses to;
 * {@link encodeProtobufObject} and {@link encodeProtobufWatchEvent} write them. Field numbers come
 * from the generated tables (`../builtin/`). No protobuf library: the wire reader is {@link ProtoReader}.
 *
 * @example
 * if (mediaType(request.headers['content-type']) === PROTOBUF_CONTENT_TYPE) {
 *   const { object } = decodeProtobufObject(body, { apiVersion: 'v1', kind: 'ConfigMap' });
 * }
 *
 * @module
 */
export {
  type DecodedObject,
  decodeProtobufObject,
  PROTOBUF_CONTENT_TYPE,
  PROTOBUF_DECODED_TYPES,
  type ProtobufDefaults,
} from './decode.ts';
export {
  canEncodeProtobuf,
  encodeProtobufObject,
  encodeProtobufWatchEvent,
  PROTOBUF_WATCH_CONTENT_TYPE,
} from './encode.ts';
export {
  ProtobufDecodeError,
  type ProtobufDecodeErrorCode,
  ProtobufErrorCodes,
  ProtobufUnsupportedKindError,
} from './errors.ts';
export { ProtoBuffer } from './message-encode.ts';
export { ProtoReader, type Tag, WireType } from './wire.ts';
