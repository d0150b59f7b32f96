/**
 * Structured logging: the pino-shaped {@link Logger} interface, a no-op default and an in-memory
 * logger for tests.
 *
 * @module
 */
export {
  type LogFields,
  type Logger,
  type LogLevel,
  type LogRecord,
  MemoryLogger,
  noopLogger,
} from './logger.ts';
