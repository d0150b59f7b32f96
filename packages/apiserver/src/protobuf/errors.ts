import { type BackendErrorOptions, BadRequestError, UnsupportedError } from '@converge/runtime';

/**
 * Stable codes of protobuf request-body errors (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === ProtobufErrorCodes.UNSUPPORTED_KIND) sendAsJson();
 */
export const ProtobufErrorCodes = {
  /** The body is empty or does not start with the `k8s\0` magic of Kubernetes' protobuf envelope. */
  NOT_PROTOBUF: 'CONVERGE_ERR_APISERVER_PROTOBUF_NOT_PROTOBUF',
  /** The bytes break the protobuf wire format (truncated, bad wire type, overflowing varint, …). */
  MALFORMED: 'CONVERGE_ERR_APISERVER_PROTOBUF_MALFORMED',
  /** The `runtime.Unknown` envelope names no kind or no apiVersion (and no default was given). */
  MISSING_KIND: 'CONVERGE_ERR_APISERVER_PROTOBUF_MISSING_KIND',
  /** The envelope declares a `contentEncoding` or a non-protobuf `contentType` for its raw bytes. */
  UNSUPPORTED_ENCODING: 'CONVERGE_ERR_APISERVER_PROTOBUF_UNSUPPORTED_ENCODING',
  /** The envelope holds a kind whose protobuf message this server does not decode (415). */
  UNSUPPORTED_KIND: 'CONVERGE_ERR_APISERVER_PROTOBUF_UNSUPPORTED_KIND',
} as const;

/** The codes a {@link ProtobufDecodeError} carries (all but `UNSUPPORTED_KIND`). */
export type ProtobufDecodeErrorCode = Exclude<
  (typeof ProtobufErrorCodes)[keyof typeof ProtobufErrorCodes],
  typeof ProtobufErrorCodes.UNSUPPORTED_KIND
>;

/**
 * A protobuf request body could not be decoded: a 400 BadRequest (it is a
 * {@link BadRequestError}) with a specific `code`. `offset` is the byte offset in the body where
 * decoding failed, when known.
 *
 * @example
 * try { decodeProtobufObject(body); } catch (e) { if (e instanceof ProtobufDecodeError) log.info('bad body', { offset: e.offset }); }
 */
export class ProtobufDecodeError extends BadRequestError {
  override readonly code: ProtobufDecodeErrorCode;
  /** Byte offset in the request body where decoding failed, if known. */
  readonly offset: number | undefined;

  constructor(
    code: ProtobufDecodeErrorCode,
    message: string,
    offset?: number,
    options?: BackendErrorOptions,
  ) {
    super(message, options);
    this.code = code;
    this.offset = offset;
  }
}

/**
 * The protobuf envelope is well formed but holds a kind this server cannot decode from protobuf:
 * a 415 UnsupportedMediaType (it is an {@link UnsupportedError}). The client should send JSON.
 *
 * @example
 * catch (e) { if (e instanceof ProtobufUnsupportedKindError) console.error(e.apiVersion, e.kind); }
 */
export class ProtobufUnsupportedKindError extends UnsupportedError {
  override readonly code: typeof ProtobufErrorCodes.UNSUPPORTED_KIND = ProtobufErrorCodes.UNSUPPORTED_KIND;
  readonly apiVersion: string;
  readonly kind: string;

  constructor(apiVersion: string, kind: string, supported: readonly string[]) {
    super(
      `the body of the request was in an unknown format: protobuf is decoded for ${supported.join(', ')}; ` +
        `send ${apiVersion}, Kind=${kind} as application/json`,
    );
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}
