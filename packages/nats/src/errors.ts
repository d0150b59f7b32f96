import {
  AlreadyExistsError,
  ConflictError,
  ConvergeError,
  InvalidError,
  NotFoundError,
  qualifiedResource,
  type ResourceType,
  type StatusCause,
} from '@converge/runtime';

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

/** Kubernetes' message when a resource is not served. */
export const UNKNOWN_RESOURCE = 'the server could not find the requested resource';

const MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

/** `configmaps "x" not found`. */
export function notFound(type: ResourceType, name: string): NotFoundError {
  return new NotFoundError(`${qualifiedResource(type)} "${name}" not found`, {
    details: { name, group: type.group, kind: type.plural },
  });
}

/** `configmaps "x" already exists`, prefixed `object is being deleted: ` when terminating. */
export function alreadyExists(type: ResourceType, name: string, terminating: boolean): AlreadyExistsError {
  const prefix = terminating ? 'object is being deleted: ' : '';
  return new AlreadyExistsError(`${prefix}${qualifiedResource(type)} "${name}" already exists`, {
    details: { name, group: type.group, kind: type.plural },
  });
}

/** `Operation cannot be fulfilled on configmaps "x": <detail>`. */
export function conflict(type: ResourceType, name: string, detail: string = MODIFIED): ConflictError {
  return new ConflictError(
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${detail}`,
    { details: { name, group: type.group, kind: type.plural } },
  );
}

/** `ConfigMap "x" is invalid: <field errors>`, with one cause per field error. */
export function invalid(type: ResourceType, name: string, causes: readonly StatusCause[]): InvalidError {
  const parts = causes.map((c) => `${c.field}: ${c.message}`);
  const summary = parts.length === 1 ? (parts[0] as string) : `[${parts.join(', ')}]`;
  return new InvalidError(`${type.kind} "${name}" is invalid: ${summary}`, {
    details: { name, group: type.group, kind: type.kind, causes },
  });
}
