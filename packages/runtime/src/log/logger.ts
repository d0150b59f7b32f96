/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The logger Converge writes to. Its shape is pino's (`logger.info(fields, message)` and
 * `child(bindings)`), so a pino logger can be passed as is; the runtime depends on no logging
 * library, and without a logger it logs nothing ({@link noopLogger}). Messages are constant
 * strings; variable data goes in fields (`controller`, `kind`, `namespace`, `name`,
 * `reconcileId`), an error in `err`. See docs/guide/logging.md for the fields and what each level
 * shows.
 *
 * @example
 * import { pino } from 'pino';
 * const manager = new Manager({ backend, logger: pino() });
 */
export interface Logger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
  child(bindings: LogFields): Logger;
}

/** A logger that drops everything. The default wherever no logger is given. */
export const noopLogger: Logger = Object.freeze({
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => noopLogger,
});

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One captured line of a {@link MemoryLogger}. */
export interface LogRecord {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields;
}

/** A logger that keeps every line in memory, for tests and diagnostics. */
export class MemoryLogger implements Logger {
  readonly records: LogRecord[];
  readonly #bindings: LogFields;

  constructor(bindings: LogFields = {}, records: LogRecord[] = []) {
    this.#bindings = bindings;
    this.records = records;
  }

  debug(fields: LogFields, message: string): void {
    this.#push('debug', fields, message);
  }
  info(fields: LogFields, message: string): void {
    this.#push('info', fields, message);
  }
  warn(fields: LogFields, message: string): void {
    this.#push('warn', fields, message);
  }
  error(fields: LogFields, message: string): void {
    this.#push('error', fields, message);
  }
  child(bindings: LogFields): Logger {
    return new MemoryLogger({ ...this.#bindings, ...bindings }, this.records);
  }

  #push(level: LogLevel, fields: LogFields, message: string): void {
    this.records.push({ level, message, fields: { ...this.#bindings, ...fields } });
  }
}
