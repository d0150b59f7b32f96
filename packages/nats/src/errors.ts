import { ConvergeError, statusError } from '@converge/runtime';

/**
 * Stable error codes of the NATS package (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === NatsErrorCodes.MALFORMED_VALUE) console.warn(error);
 */
export const NatsErrorCodes = {
  /** A KV entry in a backend's bucket is not an object of the bucket's type. */
  MALFORMED_VALUE: 'CONVERGE_ERR_NATS_MALFORMED_VALUE',
} as const;

/**
 * A value in a bucket is not an object of the bucket's type: not JSON, not a JSON object, another
 * apiVersion or kind, no `metadata`, a name or namespace that differs from its key, or a key this
 * backend cannot decode. Someone else wrote it. Lists and watches skip such entries (logged and
 * counted in `stats().malformedValues`); `get`, `update` and `patch` of the key report an
 * `InternalError` with this error as its `cause`. `delete` removes the entry.
 *
 * @example
 * try {
 *   await backend.get(widgets, { namespace: 'default', name: 'w' });
 * } catch (error) {
 *   if (error instanceof InternalError && error.cause instanceof MalformedValueError) {
 *     console.error(error.cause.bucket, error.cause.key, error.cause.reason);
 *   }
 * }
 */
export class MalformedValueError extends ConvergeError {
  readonly bucket: string;
  readonly key: string;
  readonly revision: number;
  readonly reason: string;

  constructor(bucket: string, key: string, revision: number, reason: string) {
    super(
      NatsErrorCodes.MALFORMED_VALUE,
      `bucket ${bucket}: the value of key ${JSON.stringify(key)} at revision ${revision} is malformed: ${reason}`,
    );
    this.bucket = bucket;
    this.key = key;
    this.revision = revision;
    this.reason = reason;
  }
}

/** The errors of one object, worded as kube-apiserver words them: the runtime's `statusError`. */
export const { notFound, alreadyExists, conflict, forbidden, invalid } = statusError;
