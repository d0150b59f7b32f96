/**
 * The terminal form of a log line: `12:00:03.123 ERROR Reconciler error controller=websites
 * namespace=default name=home reconcileId=websites-1f`, then an error's stack indented below.
 * It reads the JSON line pino wrote, so the fields and the error serialization are the JSON
 * format's, only laid out for a person. (pino-pretty does this too, with 13 dependencies of its
 * own; the CLI's lines have a handful of known fields.)
 */

const LEVEL_COLOURS: Readonly<Record<string, string>> = {
  trace: '\x1b[90m',
  debug: '\x1b[36m',
  info: '\x1b[32m',
  warn: '\x1b[33m',
  error: '\x1b[31m',
  fatal: '\x1b[41m\x1b[97m',
};
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/** The fields shown first, in this order, when a line has them. */
const LEADING = ['controller', 'kind', 'namespace', 'name', 'reconcileId'];
/** Fields the layout itself shows. */
const SHOWN = new Set(['level', 'time', 'msg', 'err']);

interface SerializedError {
  readonly type?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly stack?: unknown;
  readonly cause?: unknown;
}

/**
 * Lays out one JSON log line (pino's, with `level` as a name and an ISO `time`). A line that is not
 * a JSON object is returned as it is.
 */
export function prettyLine(line: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return line;
    record = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof record.level === 'string' ? record.level : String(record.level ?? '');
  const paint = (code: string | undefined, text: string): string =>
    colour && code !== undefined ? `${code}${text}${RESET}` : text;
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const head = [
    ...(time === '' ? [] : [paint(DIM, time)]),
    paint(LEVEL_COLOURS[level], level.toUpperCase().padEnd(5)),
    String(record.msg ?? ''),
  ];
  const keys = [
    ...LEADING.filter((k) => k in record),
    ...Object.keys(record).filter((k) => !LEADING.includes(k) && !SHOWN.has(k)),
  ];
  const fields = keys.map((k) => paint(DIM, `${k}=`) + value(record[k]));
  const out = [[...head, ...fields].join(' ')];
  if (record.err !== undefined) out.push(...errorLines(record.err, '    '));
  return out.join('\n');
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === undefined) return 'undefined';
  return JSON.stringify(v) ?? String(v);
}

/** An error's stack (else its type and message), its code, and its causes, indented. */
function errorLines(err: unknown, indent: string, depth = 0): string[] {
  if (typeof err !== 'object' || err === null) return [`${indent}err=${value(err)}`];
  const e = err as SerializedError;
  const stack =
    typeof e.stack === 'string' ? e.stack : `${String(e.type ?? 'Error')}: ${String(e.message ?? '')}`;
  const lines = stack.split('\n').map((l) => `${indent}${l.trimStart() === l ? l : `  ${l.trimStart()}`}`);
  if (e.code !== undefined) lines.push(`${indent}  code: ${value(e.code)}`);
  if (e.cause !== undefined && depth < 5) {
    lines.push(`${indent}caused by:`);
    lines.push(...errorLines(e.cause, `${indent}  `, depth + 1));
  }
  return lines;
}
