/**
 * Small helpers every benchmark script shares: environment-sized parameters, forced GC, medians,
 * number formatting.
 */

/** A positive integer from the environment variable `name` (so a run can be made smaller), else `fallback`. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** A non-negative integer from the environment variable `name`, else `fallback`. */
export function nonNegativeInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
}

/** Runs the garbage collector `times` times; the script must run with `node --expose-gc`. */
export function collectGarbage(times: number): void {
  if (globalThis.gc === undefined) throw new Error('run with node --expose-gc');
  for (let i = 0; i < times; i++) globalThis.gc();
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A number with a fixed count of decimals and thousands separators. */
export function fmt(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
