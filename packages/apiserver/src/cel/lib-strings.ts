/**
 * The parts of cel-go's strings extension (version 2, as kube-apiserver enables it) the evaluator
 * does not bring: `charAt`, `replace`, `format` and `strings.quote`. `indexOf`, `lastIndexOf`,
 * `lowerAscii`, `upperAscii`, `split`, `substring`, `trim` and `join` are built in.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { chargeSize } from './cost.ts';

function charAt(text: string, index: bigint): string {
  chargeSize(text.length);
  const points = Array.from(text);
  if (index < 0n || index > BigInt(points.length)) throw new EvaluationError(`index out of range: ${index}`);
  return points[Number(index)] ?? '';
}

/** Go's `strings.Replace`: at most `limit` replacements (all when negative). */
function replace(text: string, from: string, to: string, limit: bigint): string {
  chargeSize(text.length + to.length);
  if (from === '') {
    // an empty pattern matches before every code point and at the end
    const points = Array.from(text);
    const slots = BigInt(points.length + 1);
    const max = Number(limit < 0n || limit > slots ? slots : limit);
    return points.map((p, i) => (i < max ? to : '') + p).join('') + (points.length < max ? to : '');
  }
  if (limit < 0n) return text.split(from).join(to);
  let out = '';
  let rest = text;
  for (let n = 0n; n < limit; n++) {
    const at = rest.indexOf(from);
    if (at < 0) break;
    out += rest.slice(0, at) + to;
    rest = rest.slice(at + from.length);
  }
  return out + rest;
}

function quote(text: string): string {
  chargeSize(text.length);
  const escapes: Record<string, string> = {
    '\u0007': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  return `"${Array.from(text, (ch) => escapes[ch] ?? ch).join('')}"`;
}

function formatValue(verb: string, precision: number | undefined, value: unknown): string {
  switch (verb) {
    case 's':
      return stringOf(value);
    case 'd':
      if (typeof value === 'bigint' || value instanceof UnsignedInt) return String(value.valueOf());
      if (typeof value === 'number' && Number.isInteger(value)) return String(value);
      throw new EvaluationError(
        `error during formatting: decimal clause can only be used on integers, was given ${typeName(value)}`,
      );
    case 'f':
    case 'e':
      if (typeof value !== 'number' && typeof value !== 'bigint') {
        throw new EvaluationError(
          `error during formatting: fixed-point clause can only be used on doubles, was given ${typeName(value)}`,
        );
      }
      if (verb === 'f') return Number(value).toFixed(precision ?? 6);
      return Number(value)
        .toExponential(precision ?? 6)
        .replace(/e([+-])(\d)$/, (_m, sign: string, digit: string) => `e${sign}0${digit}`);
    case 'x':
    case 'X':
    case 'o':
    case 'b': {
      const radix = verb === 'o' ? 8 : verb === 'b' ? 2 : 16;
      let text: string;
      if (typeof value === 'bigint' || value instanceof UnsignedInt) text = value.valueOf().toString(radix);
      else if (typeof value === 'string')
        text = Array.from(new TextEncoder().encode(value), (b) => b.toString(16).padStart(2, '0')).join('');
      else if (value instanceof Uint8Array)
        text = Array.from(value, (b) => b.toString(16).padStart(2, '0')).join('');
      else
        throw new EvaluationError(
          `error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(value)}`,
        );
      return verb === 'X' ? text.toUpperCase() : text;
    }
    default:
      throw new EvaluationError(
        `could not parse formatting clause: unrecognized formatting clause "${verb}"`,
      );
  }
}

function typeName(value: unknown): string {
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (value === null) return 'null_type';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Map) return 'map';
  return 'dyn';
}

function stringOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  if (value instanceof UnsignedInt) return String(value.valueOf());
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (value instanceof Duration) return value.toString();
  if (Array.isArray(value)) return `[${value.map(stringOf).join(', ')}]`;
  if (value instanceof Map)
    return `{${[...value].map(([k, v]) => `${stringOf(k)}: ${stringOf(v)}`).join(', ')}}`;
  return String(value);
}

/** `"%s of %d".format([a, b])`: the clauses cel-go's `format` supports (`%s %d %f %e %x %X %o %b %%`). */
function format(template: string, args: readonly unknown[]): string {
  chargeSize(template.length);
  let out = '';
  let next = 0;
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if (ch !== '%') {
      out += ch;
      continue;
    }
    if (template[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    const m = /^(?:\.(\d+))?([a-zA-Z])/.exec(template.slice(i + 1));
    if (m === null) throw new EvaluationError('could not parse formatting clause: unexpected end of string');
    if (next >= args.length) {
      throw new EvaluationError(`index ${next} out of range`);
    }
    out += formatValue(m[2] ?? '', m[1] === undefined ? undefined : Number(m[1]), args[next++]);
    i += m[0].length;
  }
  return out;
}

class StringsNamespace {}

/** Registers `charAt`, `replace`, `format` and `strings.quote` on `env`. */
export function registerStringLibrary(env: Environment): void {
  env.registerFunction('string.charAt(int): string', charAt);
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
    replace(s, a, b, -1n),
  );
  env.registerFunction('string.replace(string, string, int): string', replace);
  env.registerFunction('string.format(list<dyn>): string', format);
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  env.registerFunction('StringsNamespace.quote(string): string', (_ns: unknown, s: string) => quote(s));
}

export { stringOf };
