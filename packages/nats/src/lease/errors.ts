import {
  AlreadyExistsError,
  type BackendError,
  BadRequestError,
  ConflictError,
  type ConvergeErrorOptions,
  ForbiddenError,
  InternalError,
  isConvergeError,
  LeaderRecordInvalidError,
  NotFoundError,
  UnavailableError,
} from '@converge/runtime';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';

/** Where a lease entry lives: its bucket, key and (when read) revision. */
export interface KvLeaseLocation {
  readonly bucket: string;
  readonly key: string;
  /** The entry's revision, when the problem is about one stored entry. */
  readonly revision?: number;
}

/**
 * The entry under a {@link KvLeaseLock}'s key is not a lease document this lock can read (not
 * JSON, another `apiVersion` or `kind`, a field of the wrong type): something else wrote it. It
 * is a {@link LeaderRecordInvalidError} (`CONVERGE_ERR_LEADER_RECORD_INVALID`): the elector keeps
 * retrying and never overwrites it, since it cannot tell whether a live leader of another version
 * wrote it. Delete the entry (`nats kv del <bucket> <key>`) and an elector creates a fresh one.
 *
 * @example
 * const error = await lock.get(signal).catch((e: unknown) => e);
 * if (error instanceof KvLeaseInvalidError) logger.error({ bucket: error.bucket, key: error.key }, error.message);
 */
export class KvLeaseInvalidError extends LeaderRecordInvalidError {
  readonly bucket: string;
  readonly key: string;
  /** The revision of the invalid entry. */
  readonly revision: number | undefined;

  constructor(where: KvLeaseLocation, problem: string, options?: ConvergeErrorOptions) {
    const at = where.revision === undefined ? '' : ` (revision ${where.revision})`;
    super(`nats:${where.bucket}/${where.key}`, `${problem}${at}`, options);
    this.bucket = where.bucket;
    this.key = where.key;
    this.revision = where.revision;
  }
}

/** A lock call, for error messages and for what a wrong last sequence means. */
export type KvLeaseOperation = 'get' | 'create' | 'update' | 'open';

const CONNECTION_ERRORS = new Set([
  'ClosedConnectionError',
  'DrainingConnectionError',
  'ConnectionError',
  'TimeoutError',
  'NoResponders',
  'NoRespondersError',
  'RequestError',
  'JetStreamNotEnabled',
]);
const PERMISSION_ERRORS = new Set([
  'PermissionViolationError',
  'AuthorizationError',
  'UserAuthenticationExpiredError',
]);

/**
 * Maps an error from the NATS client to the backend error a {@link LeaderLock} reports, with the
 * NATS error as `cause`:
 * - a wrong last sequence (the entry changed since `version`) → ConflictError on update,
 *   AlreadyExistsError on create;
 * - the bucket's stream does not exist → NotFoundError;
 * - timeouts, a closed or draining connection, no responders, JetStream not enabled or
 *   temporarily unavailable (503) → UnavailableError (retryable);
 * - permission and authorization errors → ForbiddenError;
 * - any other JetStream API error → BadRequestError (400) or InternalError.
 *
 * Errors that are already Converge errors pass through.
 *
 * @internal
 */
export function fromNatsError(error: unknown, op: KvLeaseOperation, where: KvLeaseLocation): Error {
  if (isConvergeError(error)) return error;
  const lock = `nats:${where.bucket}/${where.key}`;
  const options = { cause: error };
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof JetStreamApiError) {
    const detail = `${message} (JetStream error ${error.code}, status ${error.status})`;
    switch (error.code) {
      case JetStreamApiCodes.StreamWrongLastSequence:
      case JetStreamApiCodes.StreamWrongLastSequenceUnknown:
        return op === 'create'
          ? new AlreadyExistsError(`leader lease ${lock} already exists`, options)
          : new ConflictError(`leader lease ${lock} changed since it was read: ${detail}`, options);
      case JetStreamApiCodes.StreamNotFound:
        return new NotFoundError(`KV bucket ${where.bucket} does not exist (${op} ${lock})`, options);
      case JetStreamApiCodes.JetStreamNotEnabledForAccount:
        return unavailable(op, lock, detail, options);
    }
    if (error.status === 503) return unavailable(op, lock, detail, options);
    if (error.status === 400) return new BadRequestError(`${op} ${lock} rejected: ${detail}`, options);
    return new InternalError(`${op} ${lock} failed: ${detail}`, options);
  }
  // A RequestError wraps what happened to the request (a timeout, no responders, a permission violation).
  const inner =
    error instanceof Error && error.name === 'RequestError' && error.cause instanceof Error
      ? error.cause
      : error;
  const name = inner instanceof Error ? inner.name : '';
  if (CONNECTION_ERRORS.has(name)) return unavailable(op, lock, message, options);
  if (PERMISSION_ERRORS.has(name))
    return new ForbiddenError(`${op} ${lock} not permitted: ${message}`, options);
  return new InternalError(`${op} ${lock} failed: ${message}`, options);
}

function unavailable(op: string, lock: string, detail: string, options: { cause: unknown }): BackendError {
  return new UnavailableError(`${op} ${lock}: NATS JetStream unavailable: ${detail}`, options);
}
