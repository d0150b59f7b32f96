/**
 * Go's `fmt` renderings of decoded JSON values, so messages read exactly as kube-apiserver prints
 * them. Integral numbers below 2^63 are int64 (as Kubernetes' unstructured JSON decoder makes them);
 * everything else is float64.
 */
import { isInt64, isObject } from './json.ts';

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** `strconv.Quote`: a double-quoted Go string literal. */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= 0xd800 && code <= 0xdfff) out += '\uFFFD';
    else if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (PRINTABLE.test(ch)) out += ch;
    else out += escapeCode(code);
  }
  return `${out}"`;
}

function escapeCode(code: number): string {
  switch (code) {
    case 7:
      return '\\a';
    case 8:
      return '\\b';
    case 12:
      return '\\f';
    case 10:
      return '\\n';
    case 13:
      return '\\r';
    case 9:
      return '\\t';
    case 11:
      return '\\v';
    default:
      if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
      if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
      return `\\U${code.toString(16).padStart(8, '0')}`;
  }
}

/** `%v` of a float64 (shortest digits; exponent form below 1e-4 and from 1e6, as `%g`). */
export function goFloat(value: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = negative ? '-' : '';
  if (exponent < -4 || exponent >= 6) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const expAbs = Math.abs(exponent).toString().padStart(2, '0');
    return `${sign}${digits[0]}${frac}e${exponent < 0 ? '-' : '+'}${expAbs}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const frac = digits.slice(exponent + 1);
  return `${sign}${whole}${frac === '' ? '' : `.${frac}`}`;
}

/** `%v` of a number as decoded JSON: int64 when integral (and in range), else float64. */
export function goNumber(value: number): string {
  return isInt64(value) ? BigInt(value).toString() : goFloat(value);
}

/** `%v` of a decoded JSON value (`map[a:1 b:[x y]]`, `<nil>`). */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => goValue(v)).join(' ')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goValue(value[k])}`).join(' ')}]`;
  }
  return String(value);
}

/** `%#v` of a decoded JSON value (`map[string]interface {}{"a":1}`), as in field errors. */
export function goSyntax(value: unknown, nested = false): string {
  if (value === null || value === undefined) return nested ? 'interface {}(nil)' : '<nil>';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map((v) => goSyntax(v, true)).join(', ')}}`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    const entries = keys.map((k) => `${goQuote(k)}:${goSyntax(value[k], true)}`);
    return `map[string]interface {}{${entries.join(', ')}}`;
  }
  return String(value);
}

/** Go's `json.Marshal` of a decoded JSON value: sorted keys, `<`, `>`, `&` escaped. */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(
      /[<>&\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  if (typeof value === 'number') return isInt64(value) ? BigInt(value).toString() : JSON.stringify(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => goJson(v)).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${goJson(k)}:${goJson(value[k])}`).join(',')}}`;
  }
  return 'null';
}
