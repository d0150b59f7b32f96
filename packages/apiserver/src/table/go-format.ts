/**
 * How kube-apiserver's Go code prints decoded JSON values in Table cells. Kubernetes' unstructured
 * JSON decoder makes integral numbers `int64` and the rest `float64`; this module treats a JS
 * number the same way (integral and within int64 → int64).
 */

const INT64_LIMIT = 2 ** 63;

/** Whether a JSON number would decode as Go's `int64` (else `float64`). */
export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT;
}

/**
 * `fmt.Sprint` of a float64: `%g` with the shortest digits, in exponent form when the decimal
 * exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`, `123456.5`), as strconv decides for the
 * shortest precision.
 */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa = '0', exp = '0'] = value.toExponential().split('e');
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(value);
}

/** `fmt.Sprint` of a JSON number as decoded by Kubernetes (int64 or float64). */
export function goNumber(value: number): string {
  return isInt64(value) ? BigInt(value).toString() : goFloat(value);
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;

/**
 * `json.Marshal` of a decoded JSON value: object keys sorted, `<`, `>`, `&`, U+2028 and U+2029
 * escaped as `\u003c`-style sequences (Go's HTML-safe default).
 */
export function goJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(
    HTML_UNSAFE,
    (ch) => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(compareUtf8)) {
    Object.defineProperty(out, key, {
      value: sortKeys((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Orders strings by their UTF-8 bytes, as Go compares strings. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
