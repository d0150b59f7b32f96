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
  /** A command line the command does not accept: an unknown command or option, a bad value. */
  USAGE: 'CONVERGE_ERR_CLI_USAGE',
  /** `converge dev` or `run`: an operator module is missing, failed to import, or threw while wiring. */
  MODULE_FAILED: 'CONVERGE_ERR_CLI_MODULE_FAILED',
  /** `converge simulate`: the scenario module is missing, failed to import, or its default export is no scenario. */
  SCENARIO_FAILED: 'CONVERGE_ERR_CLI_SCENARIO_FAILED',
  /** `converge why`: no operator answered (none recorded, connection refused, timeout, no /debug/keys). */
  OPERATOR_UNREACHABLE: 'CONVERGE_ERR_CLI_OPERATOR_UNREACHABLE',
} as const;

/**
 * The command line is wrong. The message is one line that starts with the command
 * (`converge serve: --port must be a port number (0-65535), got "abc"`); `command` names the
 * subcommand whose usage applies (undefined: the global usage). The command exits with code 2.
 */
export class UsageError extends ConvergeError {
  readonly command: string | undefined;
  readonly problem: string;

  constructor(command: string | undefined, problem: string) {
    super(CliErrorCodes.USAGE, `converge${command === undefined ? '' : ` ${command}`}: ${problem}`);
    this.command = command;
    this.problem = problem;
  }
}

/**
 * An operator module given to `converge dev` or `converge run` could not be used: the file does
 * not exist, importing it threw (a syntax error, a missing package, a throw at its top level), it
 * has no default export function, or that function threw. The message names the module and the
 * cause; `cause` is the original error.
 */
export class OperatorModuleError extends ConvergeError {
  readonly module: string;
  readonly reason: string;

  constructor(module: string, reason: string, options?: { cause?: unknown }) {
    super(CliErrorCodes.MODULE_FAILED, `operator module ${module} ${reason}`, options);
    this.module = module;
    this.reason = reason;
  }
}

/**
 * The scenario module given to `converge simulate` could not be used: the file does not exist,
 * importing it threw (a syntax error, a missing package, a throw at its top level, a
 * `defineScenario` that refused a field), or its default export is missing or no scenario. The
 * message names the file and the cause; `cause` is the original error; `field` names the field of
 * the default export that is wrong, when that is the problem.
 */
export class ScenarioModuleError extends ConvergeError {
  readonly module: string;
  readonly reason: string;
  readonly field: string | undefined;

  constructor(module: string, reason: string, options?: { cause?: unknown; field?: string }) {
    super(CliErrorCodes.SCENARIO_FAILED, `scenario ${module} ${reason}`, options);
    this.module = module;
    this.reason = reason;
    this.field = options?.field;
  }
}

/**
 * `text` as it can be shown inside a one-line message: in double quotes, with line breaks and
 * other control characters escaped, cut after 120 characters.
 */
export function quote(text: string): string {
  const shown = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return JSON.stringify(shown).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

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

/**
 * `converge why` could not ask an operator: no address was given or recorded, nothing answered at
 * it (connection refused, no answer within the timeout), or what answered is no operations server
 * serving `/debug/keys`. The message says which, and how to start one or what to pass; `url` is
 * the address tried (undefined: none known); `cause` is the network error, if any.
 */
export class OperatorUnreachableError extends ConvergeError {
  readonly url: string | undefined;

  constructor(url: string | undefined, message: string, options?: { cause?: unknown }) {
    super(CliErrorCodes.OPERATOR_UNREACHABLE, message, options);
    this.url = url;
  }
}

/**
 * {@link describeError} followed by the causes' (a few deep), for an error that wraps the one that
 * says what happened: `runnable operations-server failed (…): could not listen on :8081
 * (EADDRINUSE) (…)`.
 */
export function describeWithCauses(error: unknown): string {
  const parts = [describeError(error)];
  let cause = (error as { cause?: unknown } | null)?.cause;
  for (let depth = 0; cause instanceof Error && depth < 3; depth++) {
    parts.push(describeError(cause));
    cause = (cause as { cause?: unknown }).cause;
  }
  return parts.join(': ');
}

/** One line for an error the command stops on: its message, and its code if it has one. */
export function describeError(error: unknown): string {
  if (isConvergeError(error)) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
