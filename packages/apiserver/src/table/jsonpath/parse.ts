/**
 * The parser of client-go's `util/jsonpath` for one template action — the `{…}` kube-apiserver
 * wraps a CRD printer column's `jsonPath` in. Same grammar and quirks: `.field` with `\.`
 * escapes, `..` recursive descent, `*`, `[n]`, `[start:end:step]`, `['key']`, unions `[a,b]`,
 * filters `[?(@.x == "y")]` and existence filters `[?(@.x)]`, quoted strings, numbers, booleans.
 */

/** One `[start:end:step]` bound. `derived` marks an end implied by a single index (`[n]` → n+1). */
export interface SliceParam {
  readonly known: boolean;
  readonly value: number;
  readonly derived: boolean;
}

/** A parsed JSONPath node, as client-go's parser builds them. */
export type PathNode =
  | { readonly type: 'field'; readonly name: string }
  | { readonly type: 'wildcard' }
  | { readonly type: 'recursive' }
  | { readonly type: 'array'; readonly params: readonly [SliceParam, SliceParam, SliceParam] }
  | { readonly type: 'union'; readonly lists: readonly (readonly PathNode[])[] }
  | {
      readonly type: 'filter';
      readonly left: readonly PathNode[];
      readonly right: readonly PathNode[];
      readonly op: string;
    }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'identifier'; readonly name: string };

/** A JSONPath that client-go's parser rejects. */
export class JsonPathSyntaxError extends Error {
  override readonly name = 'JsonPathSyntaxError';
}

const TERMINATORS = new Set([' ', '\t', '\r', '\n', '.', ',', '[', ']', '$', '@', '{', '}']);
const isTerminator = (ch: string | undefined) => ch === undefined || TERMINATORS.has(ch);
const isAlphaNumeric = (ch: string | undefined) => ch !== undefined && /^[_\p{L}\p{Nd}]$/u.test(ch);
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/;

/**
 * Parses the inside of one action (`.status.conditions[?(@.type=="Ready")].status`). Text after
 * the action's closing `}` is rejected (client-go would print it as literal text; a printer column
 * never needs it).
 *
 * @throws {JsonPathSyntaxError} where client-go's parser reports an error.
 */
export function parseJsonPath(path: string): readonly PathNode[] {
  const parser = new ActionParser(`${path}}`);
  const nodes = parser.action();
  if (!parser.atEnd)
    throw new JsonPathSyntaxError(`unexpected text after the action in ${JSON.stringify(path)}`);
  return nodes;
}

class ActionParser {
  readonly #chars: readonly string[];
  #pos = 0;

  constructor(text: string) {
    this.#chars = [...text];
  }

  get atEnd(): boolean {
    return this.#pos >= this.#chars.length;
  }

  #startsWith(prefix: string): boolean {
    return this.#chars.slice(this.#pos, this.#pos + prefix.length).join('') === prefix;
  }

  /** Nodes up to and including the closing `}`. */
  action(): PathNode[] {
    const nodes: PathNode[] = [];
    for (;;) {
      if (this.#startsWith('}')) {
        this.#pos++;
        return nodes;
      }
      if (this.#startsWith('[?(')) {
        nodes.push(this.#filter());
        continue;
      }
      if (this.#startsWith('..')) {
        if (nodes.at(-1)?.type === 'recursive')
          throw new JsonPathSyntaxError('invalid multiple recursive descent');
        this.#pos += 2;
        nodes.push({ type: 'recursive' });
        if (isAlphaNumeric(this.#chars[this.#pos])) nodes.push(this.#field());
        continue;
      }
      const ch = this.#chars[this.#pos];
      if (ch === undefined || ch === '\r' || ch === '\n') throw new JsonPathSyntaxError('unclosed action');
      if (ch === ' ' || ch === '@' || ch === '$') this.#pos++;
      else if (ch === '[') nodes.push(...this.#array());
      else if (ch === '"' || ch === "'") nodes.push(this.#quote(ch));
      else if (ch === '.') {
        this.#pos++;
        nodes.push(this.#field());
      } else if (ch === '+' || ch === '-' || /^\p{Nd}$/u.test(ch)) nodes.push(this.#number());
      else if (isAlphaNumeric(ch)) nodes.push(this.#identifier());
      else throw new JsonPathSyntaxError(`unrecognized character in action: ${JSON.stringify(ch)}`);
    }
  }

  /** A field name up to a terminator; `\x` takes x literally and backslashes are dropped. */
  #field(): PathNode {
    const start = this.#pos;
    while (!this.atEnd) {
      const ch = this.#chars[this.#pos];
      if (ch === '\\') this.#pos += 2;
      else if (isTerminator(ch)) break;
      else this.#pos++;
    }
    const value = this.#chars.slice(start, Math.min(this.#pos, this.#chars.length)).join('');
    return value === '*' ? { type: 'wildcard' } : { type: 'field', name: value.replaceAll('\\', '') };
  }

  #identifier(): PathNode {
    const start = this.#pos;
    while (!isTerminator(this.#chars[this.#pos])) this.#pos++;
    const value = this.#chars.slice(start, this.#pos).join('');
    if (value === 'true' || value === 'false') return { type: 'bool', value: value === 'true' };
    return { type: 'identifier', name: value };
  }

  #number(): PathNode {
    const start = this.#pos;
    if (this.#chars[this.#pos] === '+' || this.#chars[this.#pos] === '-') this.#pos++;
    while (this.#chars[this.#pos] === '.' || /^\p{Nd}$/u.test(this.#chars[this.#pos] ?? '')) this.#pos++;
    const text = this.#chars.slice(start, this.#pos).join('');
    if (/^[+-]?[0-9]+$/.test(text)) {
      const value = Number(text);
      if (Math.abs(value) < 2 ** 63) return { type: 'int', value };
    }
    if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text)) return { type: 'float', value: Number(text) };
    throw new JsonPathSyntaxError(`cannot parse number ${text}`);
  }

  #array(): PathNode[] {
    const start = this.#pos;
    for (;;) {
      const ch = this.#chars[this.#pos++];
      if (ch === undefined || ch === '\n') throw new JsonPathSyntaxError('unterminated array');
      if (ch === ']') break;
    }
    let text = this.#chars.slice(start + 1, this.#pos - 1).join('');
    if (text === '*') text = ':';
    const parts = text.split(',');
    if (parts.length > 1)
      return [{ type: 'union', lists: parts.map((part) => subAction(`[${part.trim()}]`)) }];
    const key = /^'([^']*)'$/.exec(text);
    if (key !== null) return subAction(`.${key[1] ?? ''}`);
    const slice = SLICE.exec(text);
    if (slice === null) throw new JsonPathSyntaxError(`invalid array index ${text}`);
    return [{ type: 'array', params: sliceParams(slice) }];
  }

  #filter(): PathNode {
    this.#pos += 3;
    const start = this.#pos;
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const ch = this.#chars[this.#pos++];
      if (ch === undefined || ch === '\n') throw new JsonPathSyntaxError('unterminated filter');
      if (ch === '"' || ch === "'") {
        if (!begin) {
          begin = true;
          pair = ch;
        } else if (this.#chars[this.#pos - 2] !== '\\' && ch === pair) {
          end = true;
        }
      } else if (ch === ')' && begin === end) {
        break;
      }
    }
    if (this.#chars[this.#pos++] !== ']') throw new JsonPathSyntaxError('unclosed array expect ]');
    const text = this.#chars.slice(start, this.#pos - 2).join('');
    const match = FILTER.exec(text);
    if (match === null) return { type: 'filter', left: subAction(text), right: [], op: 'exists' };
    return {
      type: 'filter',
      left: subAction(match[1] ?? ''),
      right: subAction(match[3] ?? ''),
      op: match[2] ?? '',
    };
  }

  #quote(quote: string): PathNode {
    const start = this.#pos++;
    for (;;) {
      const ch = this.#chars[this.#pos++];
      if (ch === undefined || ch === '\n') throw new JsonPathSyntaxError('unterminated quoted string');
      if (ch === quote && this.#chars[this.#pos - 2] !== '\\') break;
    }
    return { type: 'text', text: unquote(this.#chars.slice(start + 1, this.#pos - 1).join(''), quote) };
  }
}

/** client-go's `parseAction`: the nodes of one more action over `text`. */
function subAction(text: string): PathNode[] {
  return new ActionParser(`${text}}`).action();
}

function sliceParams(match: RegExpExecArray): readonly [SliceParam, SliceParam, SliceParam] {
  const params: SliceParam[] = [];
  for (let i = 0; i < 3; i++) {
    const raw = match[i + 1] ?? '';
    if (raw !== '') {
      const digits = i > 0 ? raw.slice(1) : raw;
      if (i > 0 && digits === '') params.push({ known: false, value: 0, derived: false });
      else if (digits === '-') throw new JsonPathSyntaxError(`array index ${digits} is not a number`);
      else params.push({ known: true, value: Number(digits), derived: false });
    } else if (i === 1) {
      params.push({ known: true, value: (params[0]?.value ?? 0) + 1, derived: true });
    } else {
      params.push({ known: false, value: 0, derived: false });
    }
  }
  return params as unknown as readonly [SliceParam, SliceParam, SliceParam];
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** Go's `strconv.Unquote` rules for the body of a '…' or "…" string. */
function unquote(body: string, quote: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] ?? '';
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = body[++i];
    if (next === undefined) throw new JsonPathSyntaxError('invalid syntax');
    if (next in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[next];
    else if (next === "'" || next === '"') {
      if (next !== quote) throw new JsonPathSyntaxError('invalid syntax');
      out += next;
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const length = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + length);
      if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(hex)) throw new JsonPathSyntaxError('invalid syntax');
      const code = Number.parseInt(hex, 16);
      if (next !== 'x' && (code > 0x10ffff || (code >= 0xd800 && code < 0xe000))) {
        throw new JsonPathSyntaxError('invalid syntax');
      }
      out += next === 'x' ? Buffer.from([code]).toString('latin1') : String.fromCodePoint(code);
      i += length;
    } else if (/^[0-7]$/.test(next)) {
      const octal = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(octal) || Number.parseInt(octal, 8) > 255)
        throw new JsonPathSyntaxError('invalid syntax');
      out += String.fromCharCode(Number.parseInt(octal, 8));
      i += 2;
    } else {
      throw new JsonPathSyntaxError('invalid syntax');
    }
  }
  return out;
}
