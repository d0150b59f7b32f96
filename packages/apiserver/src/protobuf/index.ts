/**
 * Protobuf request bodies: the `application/vnd.kubernetes.protobuf` bodies that kubectl's
 * generator commands (`kubectl create namespace|configmap|secret|serviceaccount`) and Go clients
 * send for built-in kinds. {@link decodeProtobufObject} reads the `k8s\0` envelope and the
 * message, by the field numbers of the upstream `generated.proto` files, into the same JSON form
 * a JSON body parses to. No protobuf library: the wire reader is {@link ProtoReader}.
 *
 * Responses stay JSON: kubectl accepts `application/json` after the protobuf in its `Accept`.
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
  ProtobufDecodeError,
  type ProtobufDecodeErrorCode,
  ProtobufErrorCodes,
  ProtobufUnsupportedKindError,
} from './errors.ts';
export { ProtoReader, type Tag, WireType } from './wire.ts';
