import type { LogFields, Logger } from '@converge/runtime';

/** How deep a chain of causes is followed in a logged error. */
const MAX_CAUSES = 5;

/**
 * An error as a log field, the way pino's serializer writes it: its class, message, code, stack
 * and, if it has one, its cause (the same way, a few levels deep).
 */
function serializeError(error: Error, depth = 0): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  const cause = (error as { cause?: unknown }).cause;
  return {
    type: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(cause === undefined || depth >= MAX_CAUSES
      ? {}
      : { cause: cause instanceof Error ? serializeError(cause, depth + 1) : cause }),
  };
}

/** A JSON replacer for log lines: errors anywhere are serialized, bigints become strings, cycles are cut. */
function safeReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, raw) {
    const value = raw instanceof Error ? serializeError(raw) : raw;
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    // `this` is the object holding `value`: drop the ancestors that are not on its path.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    return value;
  };
}

/**
 * A logger writing one JSON line per message (info and above) to `write`. An error in a field
 * (`err`, the runtime's convention) is written with its class, message, code, stack and cause, so
 * a "Reconciler error" line says where the reconciler threw.
 */
export function consoleLogger(write: (line: string) => void, bindings: LogFields = {}): Logger {
  const emit = (level: string) => (fields: LogFields, message: string) => {
    const record = { level, time: new Date().toISOString(), msg: message, ...bindings, ...fields };
    let line: string;
    try {
      line = JSON.stringify(record, safeReplacer());
    } catch (error) {
      // A getter that throws, say: still say what happened.
      line = JSON.stringify({ level, time: record.time, msg: message, logError: String(error) });
    }
    write(line);
  };
  return {
    debug: () => {},
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (more) => consoleLogger(write, { ...bindings, ...more }),
  };
}
