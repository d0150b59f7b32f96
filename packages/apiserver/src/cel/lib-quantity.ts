/**
 * Kubernetes' CEL quantity library (`k8s.io/apiserver/pkg/cel/library/quantity.go`):
 * `quantity("1.5Gi")`, `isQuantity`, and on a quantity `sign`, `isInteger`, `asInteger`,
 * `asApproximateFloat`, `add`, `sub`, `compareTo`, `isLessThan`, `isGreaterThan`; `==` compares
 * values (`quantity("1Gi") == quantity("1024Mi")`). Values are exact rationals.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { charge } from './cost.ts';
import type { CelEquatable } from './values.ts';

const FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const SUFFIX_WRONG = "unable to parse quantity's suffix";
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const BINARY: Record<string, bigint> = { Ki: 1n, Mi: 2n, Gi: 3n, Ti: 4n, Pi: 5n, Ei: 6n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x === 0n ? 1n : x;
}

/** A Kubernetes resource quantity as an exact fraction `num / den` (den > 0). */
export class Quantity implements CelEquatable {
  readonly num: bigint;
  readonly den: bigint;

  constructor(num: bigint, den = 1n) {
    const g = gcd(num, den);
    this.num = num / g;
    this.den = den / g;
  }

  compare(other: Quantity): number {
    const l = this.num * other.den;
    const r = other.num * this.den;
    return l < r ? -1 : l > r ? 1 : 0;
  }

  celEquals(other: unknown): boolean {
    return other instanceof Quantity && this.compare(other) === 0;
  }

  add(other: Quantity): Quantity {
    return new Quantity(this.num * other.den + other.num * this.den, this.den * other.den);
  }

  negate(): Quantity {
    return new Quantity(-this.num, this.den);
  }
}

/** Parses `1.5Gi`, `100m`, `1e3` as kube's `resource.ParseQuantity` does; an Error says why not. */
export function parseQuantity(text: string): Quantity | Error {
  const m = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/.exec(text);
  if (m === null) return new Error(FORMAT_WRONG);
  const number = m[1] ?? '';
  const suffix = m[2] ?? '';
  const n = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(number);
  if (n === null || `${n[2]}${n[3] ?? ''}` === '') return new Error(FORMAT_WRONG);
  const negative = n[1] === '-';
  const fraction = n[3] ?? '';
  let num = BigInt(`${n[2] || '0'}${fraction}`);
  let den = 10n ** BigInt(fraction.length);
  if (suffix in BINARY) {
    num *= 1024n ** (BINARY[suffix] as bigint);
  } else {
    let exponent: number;
    if (suffix in DECIMAL) exponent = DECIMAL[suffix] as number;
    else {
      const e = /^[eE]([-+]?\d+)$/.exec(suffix);
      if (e === null) return new Error(SUFFIX_WRONG);
      exponent = Number(e[1]);
      if (Math.abs(exponent) > 1000) return new Error(SUFFIX_WRONG);
    }
    if (exponent >= 0) num *= 10n ** BigInt(exponent);
    else den *= 10n ** BigInt(-exponent);
  }
  return new Quantity(negative ? -num : num, den);
}

function quantity(text: string): Quantity {
  charge(Math.ceil(text.length * 0.1));
  const q = parseQuantity(text);
  if (q instanceof Error) throw new EvaluationError(q.message);
  return q;
}

const fromInt = (n: bigint): Quantity => new Quantity(n);

function asInteger(q: Quantity): bigint {
  if (q.den !== 1n || q.num > INT64_MAX || q.num < INT64_MIN) {
    throw new EvaluationError('cannot convert value to integer');
  }
  return q.num;
}

/** Registers the quantity library on `env` (type `kubernetes.Quantity`). */
export function registerQuantityLibrary(env: Environment): void {
  const T = 'kubernetes.Quantity';
  env.registerType(T, Quantity);
  env.registerFunction(`quantity(string): ${T}`, quantity);
  env.registerFunction('isQuantity(string): bool', (s: string) => !(parseQuantity(s) instanceof Error));
  env.registerFunction(`${T}.sign(): int`, (q: Quantity) => BigInt(q.num > 0n ? 1 : q.num < 0n ? -1 : 0));
  env.registerFunction(
    `${T}.isInteger(): bool`,
    (q: Quantity) => q.den === 1n && q.num <= INT64_MAX && q.num >= INT64_MIN,
  );
  env.registerFunction(`${T}.asInteger(): int`, asInteger);
  env.registerFunction(`${T}.asApproximateFloat(): double`, (q: Quantity) => Number(q.num) / Number(q.den));
  env.registerFunction(`${T}.add(${T}): ${T}`, (a: Quantity, b: Quantity) => a.add(b));
  env.registerFunction(`${T}.add(int): ${T}`, (a: Quantity, b: bigint) => a.add(fromInt(b)));
  env.registerFunction(`${T}.sub(${T}): ${T}`, (a: Quantity, b: Quantity) => a.add(b.negate()));
  env.registerFunction(`${T}.sub(int): ${T}`, (a: Quantity, b: bigint) => a.add(fromInt(-b)));
  env.registerFunction(`${T}.compareTo(${T}): int`, (a: Quantity, b: Quantity) => BigInt(a.compare(b)));
  env.registerFunction(`${T}.isLessThan(${T}): bool`, (a: Quantity, b: Quantity) => a.compare(b) < 0);
  env.registerFunction(`${T}.isGreaterThan(${T}): bool`, (a: Quantity, b: Quantity) => a.compare(b) > 0);
  env.registerOperator(`${T} == ${T}`, (a: Quantity, b: Quantity) => a.compare(b) === 0);
}
