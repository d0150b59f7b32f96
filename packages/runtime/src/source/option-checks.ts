import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { type Logger, noopLogger } from '../log/index.ts';

/** A Logger (anything with debug/info/warn/error methods), or the no-op logger. */
export function loggerOption(field: string, value: Logger | undefined): Logger {
  if (value === undefined) return noopLogger;
  const methods = ['debug', 'info', 'warn', 'error'] as const;
  if (typeof value !== 'object' || value === null || methods.some((m) => typeof value[m] !== 'function')) {
    throw new OptionsError(field, value, 'a logger with debug, info, warn and error methods');
  }
  return value;
}

/** A Clock (now, setTimer, sleep, random), or the real clock. */
export function clockOption(field: string, value: Clock | undefined): Clock {
  if (value === undefined) return realClock;
  const methods = ['now', 'setTimer', 'sleep', 'random'] as const;
  if (typeof value !== 'object' || value === null || methods.some((m) => typeof value[m] !== 'function')) {
    throw new OptionsError(field, value, 'a Clock with now, setTimer, sleep and random');
  }
  return value;
}

/** A boolean, or `fallback`. */
export function booleanOption(field: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new OptionsError(field, value, 'a boolean');
  return value;
}
