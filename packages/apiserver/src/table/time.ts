/**
 * Time as kubectl's printers show it: Go's `time.Parse(time.RFC3339, …)` and apimachinery's
 * `duration.HumanDuration`.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-](\d{2}):(\d{2}))$/;
/** 0001-01-01T00:00:00Z, Go's zero `time.Time`. */
const ZERO_MS = -62_135_596_800_000;

/** A parsed timestamp: its instant, or the zero time, or not a timestamp at all. */
export type ParsedTime =
  | { readonly kind: 'time'; readonly ms: number }
  | { readonly kind: 'zero' }
  | { readonly kind: 'invalid' };

/**
 * Parses RFC 3339 as Go's `time.Parse(time.RFC3339, s)` does: four-digit year, two-digit fields,
 * optional fractional seconds, `Z` or `±hh:mm`, every field range-checked (no leap seconds, real
 * month lengths). The zero instant (0001-01-01T00:00:00Z) is reported as `zero`, as Go's `IsZero`.
 */
export function parseRfc3339(text: string): ParsedTime {
  const m = RFC3339.exec(text);
  if (m === null) return { kind: 'invalid' };
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] ?? '';
  const zone = m[8] ?? 'Z';
  const offsetHours = Number(m[9] ?? 0);
  const offsetMinutes = Number(m[10] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return { kind: 'invalid' };
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59)
    return { kind: 'invalid' };
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, '0').slice(0, 3)));
  const sign = zone.startsWith('-') ? -1 : 1;
  const ms = date.getTime() - (zone === 'Z' ? 0 : sign * (offsetHours * 60 + offsetMinutes) * 60_000);
  return ms === ZERO_MS ? { kind: 'zero' } : { kind: 'time', ms };
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * apimachinery's `duration.HumanDuration`: ~2–3 significant figures (`45s`, `3m2s`, `15m`, `4h30m`,
 * `20h`, `2d3h`, `40d`, `2y10d`, `9y`). Up to two seconds in the future counts as now (`0s`);
 * further is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds <= 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/**
 * kubectl's `translateTimestampSince`: the age of an RFC 3339 timestamp at `nowMs`, or `<unknown>`
 * when there is none (absent, null, the zero time). Typed Go objects cannot hold an unparseable
 * timestamp; here one also reads `<unknown>`.
 */
export function ageSince(timestamp: unknown, nowMs: number): string {
  const ms = instant(timestamp);
  return ms === undefined ? '<unknown>' : humanDuration(nowMs - ms);
}

/** The instant of an RFC 3339 timestamp in ms, or undefined for absent, zero or invalid values. */
export function instant(timestamp: unknown): number | undefined {
  if (typeof timestamp !== 'string') return undefined;
  const parsed = parseRfc3339(timestamp);
  return parsed.kind === 'time' ? parsed.ms : undefined;
}

/** `t.UTC().Format(time.RFC3339)` at second precision; the zero time when absent. */
export function formatRfc3339(timestamp: unknown): string {
  const ms = instant(timestamp) ?? ZERO_MS;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
