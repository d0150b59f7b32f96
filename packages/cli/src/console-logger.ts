import type { LogFields, Logger } from '@converge/runtime';

/** A logger writing one JSON line per message (info and above) to `write`. */
export function consoleLogger(write: (line: string) => void, bindings: LogFields = {}): Logger {
  const emit = (level: string) => (fields: LogFields, message: string) => {
    const err =
      fields.err instanceof Error
        ? { err: { message: fields.err.message, code: (fields.err as { code?: unknown }).code } }
        : {};
    write(
      JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...bindings, ...fields, ...err }),
    );
  };
  return {
    debug: () => {},
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (more) => consoleLogger(write, { ...bindings, ...more }),
  };
}
