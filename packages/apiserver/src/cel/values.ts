/**
 * Equality and ordering of CEL runtime values as the evaluator represents them: `bigint` (int),
 * `number` (double), `UnsignedInt`, `string`, `boolean`, `null`, `Uint8Array` (bytes), arrays
 * (lists), `Map`s (maps and objects), `Date` (timestamp), `Duration`, and library objects with an
 * `equals` method (quantities, URLs).
 */
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';

/** A library value that defines its own CEL equality. */
export interface CelEquatable {
  celEquals(other: unknown): boolean;
}

function isEquatable(value: unknown): value is CelEquatable {
  return (
    typeof value === 'object' && value !== null && typeof (value as CelEquatable).celEquals === 'function'
  );
}

function numeric(value: unknown): number | bigint | undefined {
  if (typeof value === 'bigint' || typeof value === 'number') return value;
  if (value instanceof UnsignedInt) return value.valueOf();
  return undefined;
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.NaN;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** CEL's `==` on runtime values (heterogeneous numeric equality, deep lists and maps). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined)
    return na !== undefined && nb !== undefined && compareNumbers(na, nb) === 0;
  if (isEquatable(a)) return a.celEquals(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Duration && b instanceof Duration) return a.seconds === b.seconds && a.nanos === b.nanos;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.constructor !== b.constructor || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v, b.get(k))) return false;
    return true;
  }
  return false;
}

/** CEL's ordering (`<`): negative, zero or positive; NaN when the values do not order. */
export function celCompare(a: unknown, b: unknown): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return compareNumbers(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
    }
    return a.length - b.length;
  }
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a instanceof Duration && b instanceof Duration) {
    return a.seconds !== b.seconds ? (a.seconds < b.seconds ? -1 : 1) : a.nanos - b.nanos;
  }
  return Number.NaN;
}
