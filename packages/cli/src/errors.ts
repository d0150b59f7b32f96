import { ConvergeError, isConvergeError } from '@converge/runtime';

/**
 * Stable error codes of the command line (never reused).
 *
 * @example
 * if ((error as { code?: string }).code === CliErrorCodes.NATS_UNREACHABLE) process.exitCode = 3;
 */
export const CliErrorCodes = {
  /** `converge kv`: a file could not be read or parsed, or a document in it is not an object. */
  KV_FILE_INVALID: 'CONVERGE_ERR_CLI_KV_FILE_INVALID',
  /** `converge kv get`/`delete`: no bucket holds the named type (nothing of it was ever applied). */
  KV_UNKNOWN_KIND: 'CONVERGE_ERR_CLI_KV_UNKNOWN_KIND',
  /** `converge kv`, or `converge run --lease-backend nats`: nothing answered at the NATS URL. */
  NATS_UNREACHABLE: 'CONVERGE_ERR_CLI_NATS_UNREACHABLE',
} as const;

/**
 * A file given to `converge kv` could not be used: unreadable, not YAML or JSON, or a document
 * without `apiVersion`, `kind` or `metadata.name`. Nothing from the file was written.
 */
export class KvFileError extends ConvergeError {
  readonly file: string;
  readonly reason: string;

  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(CliErrorCodes.KV_FILE_INVALID, `${file}: ${reason}`, options);
    this.file = file;
    this.reason = reason;
  }
}

/**
 * `converge kv get` or `delete` named a type whose bucket does not exist: nothing of that type
 * was ever stored under this bucket prefix (or the type, `--plural` or `--bucket-prefix` is wrong).
 */
export class UnknownKindError extends ConvergeError {
  readonly resource: string;
  readonly bucket: string;

  constructor(resource: string, bucket: string, url: string) {
    super(
      CliErrorCodes.KV_UNKNOWN_KIND,
      `the server doesn't have a resource type "${resource}": no bucket ${bucket} at ${url} (check the type, --plural and --bucket-prefix)`,
    );
    this.resource = resource;
    this.bucket = bucket;
  }
}

/** Nothing answered at the NATS URL; the message says how to get a server. */
export class NatsUnreachableError extends ConvergeError {
  readonly url: string;

  constructor(url: string, options?: { cause?: unknown }) {
    super(
      CliErrorCodes.NATS_UNREACHABLE,
      `NATS is not reachable at ${url}: start one with \`nats-server -js\` (Debian: apt-get install nats-server) or set NATS_URL`,
      options,
    );
    this.url = url;
  }
}

/** One line for an error the command stops on: its message, and its code if it has one. */
export function describeError(error: unknown): string {
  if (isConvergeError(error)) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
