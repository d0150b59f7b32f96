/**
 * The logger of `converge serve`, `dev` and `run`: pino, writing one JSON line per message, or the
 * same lines laid out for a terminal ({@link prettyLine}). Levels are names (`"level":"error"`),
 * times ISO 8601, errors in `err` are serialized with their type, message, code, stack and causes.
 */
import { type Logger as PinoLogger, pino, stdSerializers, stdTimeFunctions } from 'pino';
import type { LogArgs, LogFormat, LogLevelName } from './log-args.ts';
import { prettyLine } from './pretty.ts';
import type { RunIo } from './process-io.ts';

export interface CliLoggerOptions {
  /** Default `info`. */
  readonly level?: LogLevelName;
  /** Default `json`. */
  readonly format?: LogFormat;
  /** Writes one log line (without its newline; a pretty line with an error spans several). */
  readonly write: (line: string) => void;
  /** Colours in pretty lines. Default false. */
  readonly colour?: boolean;
}

/**
 * A pino logger writing synchronously through `write`. It is the runtime's `Logger` as it is
 * (pino's shape is the one the runtime defines), with `trace` and `fatal` besides.
 *
 * @example
 * const logger = cliLogger({ level: 'debug', write: (line) => process.stderr.write(`${line}\n`) });
 * new Manager({ backend, logger });
 */
export function cliLogger(options: CliLoggerOptions): PinoLogger {
  const pretty = options.format === 'pretty';
  const colour = options.colour === true;
  const { write } = options;
  const destination = {
    write(chunk: string): void {
      const line = chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk;
      write(pretty ? prettyLine(line, colour) : line);
    },
  };
  return pino(
    {
      level: options.level ?? 'info',
      base: null,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: stdSerializers.errWithCause },
    },
    destination,
  );
}

/**
 * The logger of a command: to `io.err` (stderr), at the level asked for, pretty when asked or when
 * stderr is a terminal (coloured unless `NO_COLOR` is set), JSON lines otherwise.
 */
export function commandLogger(
  args: LogArgs,
  io: RunIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): PinoLogger {
  const terminal = io.errIsTerminal === true;
  const format = args.logFormat ?? (terminal ? 'pretty' : 'json');
  const noColour = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return cliLogger({ level: args.logLevel, format, write: io.err, colour: terminal && !noColour });
}
