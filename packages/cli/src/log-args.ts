/**
 * `--log-level` and `--log-format` of `serve`, `dev` and `run`, with `LOG_LEVEL` and
 * `CONVERGE_LOG_FORMAT` as defaults (a flag wins over its variable).
 */
import { quote, UsageError } from './errors.ts';

/** pino's levels, from the most verbose; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** `json`: one JSON object a line; `pretty`: one short coloured line for a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const LOG_LEVEL_ENV = 'LOG_LEVEL';
export const LOG_FORMAT_ENV = 'CONVERGE_LOG_FORMAT';

export interface LogArgs {
  /** Default `info`. */
  readonly logLevel: LogLevelName;
  /** Undefined: pretty when the log stream (stderr) is a terminal, JSON otherwise. */
  readonly logFormat: LogFormat | undefined;
}

/** The option specs to spread into a command's. */
export const LOG_SPECS = {
  'log-level': { type: 'string', value: LOG_LEVELS.join(', ') },
  'log-format': { type: 'string', value: 'json or pretty' },
} as const;

/** Lines for a command's help. */
export const LOG_HELP = `  --log-level LEVEL        trace, debug, info, warn, error, fatal or silent (default: $${LOG_LEVEL_ENV},
                           else info)
  --log-format FORMAT      json (a JSON object a line) or pretty (default: $${LOG_FORMAT_ENV}, else
                           pretty when stderr is a terminal, json otherwise)`;

/**
 * The log flags of `command`, checked: a flag, else its environment variable, else the default.
 * A value that is not one of the names (case-insensitive, surrounding blanks ignored in a
 * variable) is a {@link UsageError} naming the flag or the variable.
 */
export function logArgsOf(
  command: string,
  values: { readonly 'log-level'?: string | undefined; readonly 'log-format'?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): LogArgs {
  return {
    logLevel: pick(command, LOG_LEVELS, '--log-level', values['log-level'], LOG_LEVEL_ENV, env) ?? 'info',
    logFormat: pick(command, LOG_FORMATS, '--log-format', values['log-format'], LOG_FORMAT_ENV, env),
  };
}

function pick<T extends string>(
  command: string,
  names: readonly T[],
  flag: string,
  value: string | undefined,
  variable: string,
  env: Readonly<Record<string, string | undefined>>,
): T | undefined {
  const fromEnv = env[variable];
  const [where, raw] =
    value !== undefined
      ? [flag, value]
      : fromEnv === undefined || fromEnv.trim() === ''
        ? [undefined, undefined]
        : [`$${variable}`, fromEnv.trim()];
  if (where === undefined || raw === undefined) return undefined;
  const name = raw.toLowerCase();
  if (!(names as readonly string[]).includes(name))
    throw new UsageError(command, `${where} must be one of ${names.join(', ')}, got ${quote(raw)}`);
  return name as T;
}
