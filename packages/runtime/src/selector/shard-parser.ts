/**
 * The parser of KEP-5866 shard selectors: the subset of CEL kube-apiserver accepts
 * (`k8s.io/apiserver/pkg/sharding.Parse`) — `shardRange(<field>, '<start>', '<end>')` calls joined
 * by `||`, optionally parenthesised. Its problems read like kube-apiserver's. Internal to the
 * selector module; {@link parseShardSelector} is the public entry.
 */

/** The metadata fields a shard selector may hash. */
export const SHARD_FIELDS = ['object.metadata.uid', 'object.metadata.namespace'] as const;

/** A field a shard selector hashes. */
export type ShardField = (typeof SHARD_FIELDS)[number];

/** A half-open range `[start, end)` of 64-bit hash values. */
export interface ShardRange {
  /** Inclusive lower bound, in `[0, 2^64)`. */
  readonly start: bigint;
  /** Exclusive upper bound, in `(start, 2^64]`. */
  readonly end: bigint;
}

/** What a parse found: the one field every range hashes, and the ranges (OR). */
export interface ParsedShardSelector {
  readonly field: ShardField;
  readonly ranges: readonly ShardRange[];
}

/** Why a selector was refused; the caller turns it into a typed error. */
export class ShardSyntaxError extends Error {}

type Token =
  | { readonly kind: 'ident'; readonly text: string; readonly at: number }
  | { readonly kind: 'string'; readonly text: string; readonly at: number }
  | { readonly kind: 'number'; readonly text: string; readonly at: number }
  | { readonly kind: '(' | ')' | ',' | '.' | '||' | 'end'; readonly text: string; readonly at: number };

const SPACE = /[ \t\n\r\f]/;
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;
const BINARY = ['&&', '==', '!=', '<=', '>=', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '['];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (SPACE.test(ch)) {
      i++;
    } else if (IDENT_START.test(ch)) {
      const at = i;
      while (i < text.length && IDENT_PART.test(text.charAt(i))) i++;
      tokens.push({ kind: 'ident', text: text.slice(at, i), at });
    } else if (/[0-9]/.test(ch)) {
      const at = i;
      while (i < text.length && /[0-9A-Za-z.]/.test(text.charAt(i))) i++;
      tokens.push({ kind: 'number', text: text.slice(at, i), at });
    } else if (ch === "'" || ch === '"') {
      const at = i;
      const close = text.indexOf(ch, i + 1);
      const body = close < 0 ? '' : text.slice(i + 1, close);
      if (close < 0 || /[\n\r]/.test(body)) {
        throw new ShardSyntaxError(`unterminated string literal at position ${at}`);
      }
      if (body.includes('\\')) {
        throw new ShardSyntaxError(`escape sequences are not supported in string literal at position ${at}`);
      }
      tokens.push({ kind: 'string', text: body, at });
      i = close + 1;
    } else if (ch === '|' && text.charAt(i + 1) === '|') {
      tokens.push({ kind: '||', text: '||', at: i });
      i += 2;
    } else if (ch === '(' || ch === ')' || ch === ',' || ch === '.') {
      tokens.push({ kind: ch, text: ch, at: i });
      i++;
    } else {
      const operator = BINARY.find((op) => text.startsWith(op, i));
      if (operator !== undefined) {
        throw new ShardSyntaxError(
          `unsupported operator "${operator}" at position ${i}; only shardRange() and || are allowed`,
        );
      }
      throw new ShardSyntaxError(`unexpected character ${JSON.stringify(ch)} at position ${i}`);
    }
  }
  tokens.push({ kind: 'end', text: '', at: text.length });
  return tokens;
}

/** One argument of a call, before it is checked. */
type Operand =
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'other'; readonly what: string };

interface RawRange {
  readonly field: ShardField;
  readonly range: ShardRange;
}

class Parser {
  readonly #tokens: Token[];
  #at = 0;

  constructor(text: string) {
    this.#tokens = tokenize(text);
  }

  parse(): RawRange[] {
    const ranges = this.#or();
    const rest = this.#peek();
    if (rest.kind !== 'end') throw this.#unexpected(rest, '"||" or the end');
    return ranges;
  }

  #peek(): Token {
    return this.#tokens[this.#at] as Token;
  }

  #next(): Token {
    const token = this.#peek();
    if (token.kind !== 'end') this.#at++;
    return token;
  }

  #expect(kind: Token['kind'], what: string): Token {
    const token = this.#next();
    if (token.kind !== kind) throw this.#unexpected(token, what);
    return token;
  }

  #unexpected(token: Token, expected: string): ShardSyntaxError {
    const found = token.kind === 'end' ? 'the end' : JSON.stringify(token.text);
    return new ShardSyntaxError(`expected ${expected} at position ${token.at}, found ${found}`);
  }

  #or(): RawRange[] {
    const ranges = this.#term();
    while (this.#peek().kind === '||') {
      this.#next();
      ranges.push(...this.#term());
    }
    return ranges;
  }

  #term(): RawRange[] {
    const token = this.#peek();
    if (token.kind === '(') {
      this.#next();
      const ranges = this.#or();
      this.#expect(')', '")"');
      return ranges;
    }
    if (token.kind !== 'ident') throw this.#unexpected(token, 'shardRange(');
    const callee = this.#path();
    if (this.#peek().kind !== '(') {
      throw new ShardSyntaxError(
        `unexpected expression ${JSON.stringify(callee)}; expected shardRange() call or || operator`,
      );
    }
    if (callee !== 'shardRange') {
      throw new ShardSyntaxError(
        `unsupported function ${JSON.stringify(callee)}; only shardRange() and || are allowed`,
      );
    }
    return [shardRange(this.#arguments())];
  }

  #path(): string {
    let path = this.#expect('ident', 'an identifier').text;
    while (this.#peek().kind === '.') {
      this.#next();
      path += `.${this.#expect('ident', 'a field name').text}`;
    }
    return path;
  }

  #arguments(): Operand[] {
    this.#expect('(', '"("');
    const operands: Operand[] = [];
    if (this.#peek().kind === ')') {
      this.#next();
      return operands;
    }
    for (;;) {
      operands.push(this.#operand());
      const token = this.#next();
      if (token.kind === ')') return operands;
      if (token.kind !== ',') throw this.#unexpected(token, '"," or ")"');
    }
  }

  #operand(): Operand {
    const token = this.#peek();
    if (token.kind === 'string') {
      this.#next();
      return { kind: 'string', value: token.text };
    }
    if (token.kind === 'number') {
      this.#next();
      return { kind: 'other', what: `the number ${token.text}` };
    }
    if (token.kind !== 'ident') throw this.#unexpected(token, 'an argument');
    const path = this.#path();
    if (this.#peek().kind !== '(') return { kind: 'path', path };
    this.#arguments();
    return { kind: 'other', what: `a call of ${path}()` };
  }
}

function shardRange(operands: readonly Operand[]): RawRange {
  if (operands.length !== 3) {
    throw new ShardSyntaxError(`shardRange() requires exactly 3 arguments, got ${operands.length}`);
  }
  const [first, second, third] = operands as [Operand, Operand, Operand];
  if (first.kind !== 'path') {
    const got = first.kind === 'string' ? 'a string literal' : first.what;
    throw new ShardSyntaxError(
      `shardRange() first argument: expected field path (e.g. object.metadata.uid), got ${got}`,
    );
  }
  if (!(SHARD_FIELDS as readonly string[]).includes(first.path)) {
    throw new ShardSyntaxError(
      `unsupported field path ${JSON.stringify(first.path)}; supported: ${SHARD_FIELDS.join(', ')}`,
    );
  }
  const start = bound(second, 'hexStart');
  const end = bound(third, 'hexEnd');
  if (start.value >= end.value) {
    throw new ShardSyntaxError(`shard range start ${start.text} must be less than end ${end.text}`);
  }
  return { field: first.path as ShardField, range: { start: start.value, end: end.value } };
}

const TWO_TO_64 = '0x10000000000000000';

/** A bound: `'0x'` and exactly 16 lower-case hex digits, or `'0x10000000000000000'` (2^64). */
function bound(operand: Operand, name: string): { text: string; value: bigint } {
  if (operand.kind !== 'string') {
    const got = operand.kind === 'path' ? `the field path ${operand.path}` : operand.what;
    throw new ShardSyntaxError(`${name} must be a string literal (e.g. '0xff'), got ${got}`);
  }
  const s = operand.value;
  if (!s.startsWith('0x'))
    throw new ShardSyntaxError(`${name} must have '0x' prefix, got ${JSON.stringify(s)}`);
  const hex = s.slice(2);
  if (hex === '') throw new ShardSyntaxError(`${name}: hex value is required after '0x'`);
  if (hex.length > 17) {
    throw new ShardSyntaxError(
      `${name}: hex value too long (${hex.length} chars, max 17): ${JSON.stringify(hex)}`,
    );
  }
  const bad = /[^0-9a-f]/.exec(hex);
  if (bad !== null) {
    throw new ShardSyntaxError(
      `${name}: invalid hex character ${JSON.stringify(bad[0])} in ${JSON.stringify(s)}`,
    );
  }
  if (hex.length === 17 && s !== TWO_TO_64) {
    throw new ShardSyntaxError(
      `${name}: 17-digit hex value must be '${TWO_TO_64}' (2^64), got ${JSON.stringify(s)}`,
    );
  }
  if (hex.length < 16) {
    const padded = `0x${hex.padStart(16, '0')}`;
    throw new ShardSyntaxError(
      `${name} must be a 0x-prefixed 16-digit hex value, got ${JSON.stringify(s)} (did you mean ${JSON.stringify(padded)}?)`,
    );
  }
  return { text: s, value: BigInt(s) };
}

/**
 * Parses a shard selector. Throws a {@link ShardSyntaxError} naming the first problem: an empty
 * selector, a syntax error, a function or operator other than `shardRange()` and `||`, a field
 * other than `object.metadata.uid` / `object.metadata.namespace`, a malformed bound, a range whose
 * start is not below its end, or ranges over different fields.
 */
export function parseShardText(text: string): ParsedShardSelector {
  if (text.trim() === '') {
    throw new ShardSyntaxError(
      'empty shard selector is not allowed; omit the parameter for unfiltered lists',
    );
  }
  const raw = new Parser(text).parse();
  const field = (raw[0] as RawRange).field;
  for (const r of raw) {
    if (r.field !== field) {
      throw new ShardSyntaxError(
        `all shard ranges must use the same field, got ${JSON.stringify(field)} and ${JSON.stringify(r.field)}`,
      );
    }
  }
  return { field, ranges: raw.map((r) => r.range) };
}
