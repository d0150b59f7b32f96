/**
 * A parser for Go's RE2 regular expression syntax (what CEL's `matches` and Kubernetes' `find` /
 * `findAll` accept), producing a small tree the linear-time matcher in `regex-vm.ts` compiles.
 * Errors read as Go's `regexp.Compile` prints them: `error parsing regexp: missing closing ]: `[a``.
 */

import { RegexSyntaxError } from './errors.ts';

/** Tests one code point. */
export type CodePointTest = (cp: number) => boolean;

export type RegexNode =
  | { readonly kind: 'empty' }
  | { readonly kind: 'char'; readonly test: CodePointTest }
  | { readonly kind: 'concat'; readonly items: readonly RegexNode[] }
  | { readonly kind: 'alt'; readonly items: readonly RegexNode[] }
  | {
      readonly kind: 'repeat';
      readonly item: RegexNode;
      readonly min: number;
      /** -1: unbounded. */
      readonly max: number;
      readonly greedy: boolean;
    }
  | { readonly kind: 'assert'; readonly what: 'bol' | 'eol' | 'bot' | 'eot' | 'word' | 'notWord' };

interface Flags {
  readonly i: boolean;
  readonly m: boolean;
  readonly s: boolean;
  readonly U: boolean;
}

const MAX_REPEAT = 1000;
const MAX_DEPTH = 1000;

const isWordChar = (cp: number): boolean =>
  (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95;
const isDigit = (cp: number): boolean => cp >= 48 && cp <= 57;
const isSpace = (cp: number): boolean => cp === 9 || cp === 10 || cp === 12 || cp === 13 || cp === 32;

export { isWordChar };

const POSIX: Record<string, CodePointTest> = {
  alnum: (c) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122),
  alpha: (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122),
  ascii: (c) => c <= 0x7f,
  blank: (c) => c === 9 || c === 32,
  cntrl: (c) => c <= 0x1f || c === 0x7f,
  digit: isDigit,
  graph: (c) => c >= 0x21 && c <= 0x7e,
  lower: (c) => c >= 97 && c <= 122,
  print: (c) => c >= 0x20 && c <= 0x7e,
  punct: (c) =>
    (c >= 0x21 && c <= 0x2f) ||
    (c >= 0x3a && c <= 0x40) ||
    (c >= 0x5b && c <= 0x60) ||
    (c >= 0x7b && c <= 0x7e),
  space: (c) => isSpace(c) || c === 11,
  upper: (c) => c >= 65 && c <= 90,
  word: isWordChar,
  xdigit: (c) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102),
};

const unicodeClasses = new Map<string, CodePointTest | undefined>();

/** `\pL`, `\p{Greek}`: a Unicode general category or script, tested with a one-character JS RegExp. */
function unicodeClass(name: string): CodePointTest | undefined {
  if (unicodeClasses.has(name)) return unicodeClasses.get(name);
  let test: CodePointTest | undefined;
  if (name === 'Any') test = () => true;
  else {
    for (const source of [`^\\p{${name}}$`, `^\\p{Script=${name}}$`]) {
      try {
        const re = new RegExp(source, 'u');
        test = (cp) => re.test(String.fromCodePoint(cp));
        break;
      } catch {
        // not this kind of class
      }
    }
  }
  unicodeClasses.set(name, test);
  return test;
}

/** Simple case folding as Go's `(?i)` applies it: the code point and its upper/lower variants. */
function foldVariants(cp: number): number[] {
  const s = String.fromCodePoint(cp);
  const out = new Set<number>([cp]);
  for (const v of [s.toLowerCase(), s.toUpperCase()]) {
    const points = Array.from(v);
    if (points.length === 1) out.add(points[0]?.codePointAt(0) ?? cp);
  }
  if (cp === 0x212a) out.add(107); // KELVIN SIGN folds to k
  if (cp === 107 || cp === 75) out.add(0x212a);
  if (cp === 0x17f) out.add(115); // LONG S folds to s
  if (cp === 115 || cp === 83) out.add(0x17f);
  return [...out];
}

function folded(test: CodePointTest): CodePointTest {
  return (cp) => foldVariants(cp).some(test);
}

class Parser {
  readonly #src: readonly string[];
  readonly #text: string;
  #pos = 0;
  #depth = 0;

  constructor(text: string) {
    this.#text = text;
    this.#src = Array.from(text);
  }

  fail(code: string, what: string): never {
    throw new RegexSyntaxError(`error parsing regexp: ${code}: \`${what}\``);
  }

  parse(): RegexNode {
    const node = this.#alternation({ i: false, m: false, s: false, U: false });
    if (this.#pos < this.#src.length) this.fail('unexpected )', this.#text);
    return node;
  }

  #peek(offset = 0): string | undefined {
    return this.#src[this.#pos + offset];
  }

  #alternation(flags: Flags): RegexNode {
    if (++this.#depth > MAX_DEPTH) this.fail('expression nests too deeply', this.#text);
    const items: RegexNode[] = [];
    let current = flags;
    for (;;) {
      const [node, after] = this.#concat(current);
      items.push(node);
      current = after;
      if (this.#peek() !== '|') break;
      this.#pos++;
    }
    this.#depth--;
    return items.length === 1 ? (items[0] as RegexNode) : { kind: 'alt', items };
  }

  /** A run of atoms; `(?i)` inside changes the flags for the rest of the enclosing group. */
  #concat(flags: Flags): [RegexNode, Flags] {
    const items: RegexNode[] = [];
    let current = flags;
    for (;;) {
      const c = this.#peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '(' && this.#peek(1) === '?') {
        const changed = this.#flagGroup(current);
        if (changed !== undefined) {
          current = changed;
          continue;
        }
      }
      const start = this.#pos;
      const atom = this.#atom(current);
      items.push(this.#repetitions(atom, current, start));
    }
    const node: RegexNode =
      items.length === 0
        ? { kind: 'empty' }
        : items.length === 1
          ? (items[0] as RegexNode)
          : { kind: 'concat', items };
    return [node, current];
  }

  /** `(?flags)` alone returns the new flags; `(?flags:…)`, `(?:…)` and named groups return undefined. */
  #flagGroup(flags: Flags): Flags | undefined {
    const rest = this.#src.slice(this.#pos + 2, this.#pos + 3).join('');
    if (rest === 'P' || rest === '<') return undefined;
    let j = this.#pos + 2;
    let negate = false;
    const next = { ...flags };
    let sawFlag = false;
    for (;;) {
      const c = this.#src[j];
      if (c === undefined) this.fail('missing closing )', this.#text);
      if (c === ')' || c === ':') {
        if (c === ')' && !sawFlag) this.fail('missing argument to repetition operator', '(?)');
        if (negate && !sawFlag)
          this.fail('invalid or unsupported Perl syntax', this.#src.slice(this.#pos, j + 1).join(''));
        if (c === ':') return undefined;
        this.#pos = j + 1;
        return next;
      }
      if (c === '-') {
        if (negate)
          this.fail('invalid or unsupported Perl syntax', this.#src.slice(this.#pos, j + 1).join(''));
        negate = true;
        sawFlag = false;
      } else if (c === 'i' || c === 'm' || c === 's' || c === 'U') {
        next[c] = !negate;
        sawFlag = true;
      } else {
        this.fail('invalid or unsupported Perl syntax', this.#src.slice(this.#pos, j + 1).join(''));
      }
      j++;
    }
  }

  #repetitions(atom: RegexNode, flags: Flags, start: number): RegexNode {
    let node = atom;
    let previousOp = -1;
    for (;;) {
      const c = this.#peek();
      const opStart = this.#pos;
      let min: number;
      let max: number;
      if (c === '*' || c === '+' || c === '?') {
        this.#pos++;
        [min, max] = c === '*' ? [0, -1] : c === '+' ? [1, -1] : [0, 1];
      } else if (c === '{') {
        const counts = this.#counts();
        if (counts === undefined) return node;
        [min, max] = counts;
      } else {
        return node;
      }
      let greedy = true;
      if (this.#peek() === '?') {
        this.#pos++;
        greedy = false;
      }
      if (flags.U) greedy = !greedy;
      const op = this.#src.slice(opStart, this.#pos).join('');
      if (atom.kind === 'empty' && start === opStart)
        this.fail('missing argument to repetition operator', op);
      if (previousOp >= 0)
        this.fail('invalid nested repetition operator', this.#src.slice(previousOp, this.#pos).join(''));
      previousOp = opStart;
      node = { kind: 'repeat', item: node, min, max, greedy };
    }
  }

  /** `{n}`, `{n,}`, `{n,m}`; undefined when the brace is a literal. */
  #counts(): [number, number] | undefined {
    const rest = this.#src.slice(this.#pos).join('');
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (m === null) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
    if (min > MAX_REPEAT || max > MAX_REPEAT || (max !== -1 && max < min))
      this.fail('invalid repeat count', m[0]);
    this.#pos += Array.from(m[0]).length;
    return [min, max];
  }

  #atom(flags: Flags): RegexNode {
    const c = this.#peek() as string;
    switch (c) {
      case '(':
        return this.#group(flags);
      case '[':
        return this.#charClass(flags);
      case '.':
        this.#pos++;
        return { kind: 'char', test: flags.s ? () => true : (cp) => cp !== 10 };
      case '^':
        this.#pos++;
        return { kind: 'assert', what: flags.m ? 'bol' : 'bot' };
      case '$':
        this.#pos++;
        return { kind: 'assert', what: flags.m ? 'eol' : 'eot' };
      case '\\':
        return this.#escapeAtom(flags);
      case '*':
      case '+':
      case '?':
        this.fail('missing argument to repetition operator', c);
        break;
      default:
        break;
    }
    this.#pos++;
    return this.#literal(c.codePointAt(0) ?? 0, flags);
  }

  #literal(cp: number, flags: Flags): RegexNode {
    if (flags.i) {
      const variants = foldVariants(cp);
      return { kind: 'char', test: (x) => variants.includes(x) };
    }
    return { kind: 'char', test: (x) => x === cp };
  }

  #group(flags: Flags): RegexNode {
    const open = this.#pos;
    this.#pos++;
    let inner = flags;
    if (this.#peek() === '?') {
      const named = this.#src.slice(this.#pos, this.#pos + 3).join('');
      if (named === '?P<' || named.startsWith('?<')) {
        this.#pos += named === '?P<' ? 3 : 2;
        const end = this.#src.indexOf('>', this.#pos);
        const name = end < 0 ? '' : this.#src.slice(this.#pos, end).join('');
        if (end < 0 || !/^[A-Za-z0-9_]+$/.test(name)) {
          this.fail('invalid named capture', this.#src.slice(open, end < 0 ? undefined : end + 1).join(''));
        }
        this.#pos = end + 1;
      } else {
        // (?flags:re) or (?:re)
        let j = this.#pos + 1;
        let negate = false;
        const next = { ...flags };
        for (;;) {
          const f = this.#src[j];
          if (f === undefined) this.fail('missing closing )', this.#text);
          if (f === ':') break;
          if (f === '-' && !negate) negate = true;
          else if (f === 'i' || f === 'm' || f === 's' || f === 'U') next[f] = !negate;
          else this.fail('invalid or unsupported Perl syntax', this.#src.slice(open, j + 1).join(''));
          j++;
        }
        this.#pos = j + 1;
        inner = next;
      }
    }
    const node = this.#alternation(inner);
    if (this.#peek() !== ')') this.fail('missing closing )', this.#text);
    this.#pos++;
    return node;
  }

  #escapeAtom(flags: Flags): RegexNode {
    const next = this.#peek(1);
    if (next === undefined) this.fail('trailing backslash at end of expression', '');
    switch (next) {
      case 'A':
        this.#pos += 2;
        return { kind: 'assert', what: 'bot' };
      case 'z':
        this.#pos += 2;
        return { kind: 'assert', what: 'eot' };
      case 'b':
        this.#pos += 2;
        return { kind: 'assert', what: 'word' };
      case 'B':
        this.#pos += 2;
        return { kind: 'assert', what: 'notWord' };
      case 'Q': {
        this.#pos += 2;
        const end = this.#src.slice(this.#pos).join('').indexOf('\\E');
        const body =
          end < 0
            ? this.#src.slice(this.#pos)
            : Array.from(this.#src.slice(this.#pos).join('').slice(0, end));
        this.#pos += body.length + (end < 0 ? 0 : 2);
        const items = body.map((ch) => this.#literal(ch.codePointAt(0) ?? 0, flags));
        return items.length === 0 ? { kind: 'empty' } : { kind: 'concat', items };
      }
      default: {
        const test = this.#escapeClass(flags);
        return { kind: 'char', test };
      }
    }
  }

  /** An escape that stands for one code point or a class: `\d`, `\pL`, `\x41`, `\.`. */
  #escapeClass(flags: Flags): CodePointTest {
    const start = this.#pos;
    this.#pos++; // the backslash
    const c = this.#src[this.#pos++] as string;
    const perl: Record<string, CodePointTest> = { d: isDigit, s: isSpace, w: isWordChar };
    const lower = c.toLowerCase();
    if (lower in perl && (c === lower || c === c.toUpperCase())) {
      const base = perl[lower] as CodePointTest;
      return c === lower ? base : (cp) => !base(cp);
    }
    if (c === 'p' || c === 'P') {
      let name: string;
      if (this.#peek() === '{') {
        const end = this.#src.indexOf('}', this.#pos);
        if (end < 0) this.fail('invalid character class range', this.#src.slice(start).join(''));
        name = this.#src.slice(this.#pos + 1, end).join('');
        this.#pos = end + 1;
      } else {
        name = this.#src[this.#pos++] ?? '';
      }
      let negate = c === 'P';
      if (name.startsWith('^')) {
        negate = !negate;
        name = name.slice(1);
      }
      const base = unicodeClass(name);
      if (base === undefined)
        this.fail('invalid character class range', this.#src.slice(start, this.#pos).join(''));
      const test = flags.i ? folded(base) : base;
      return negate ? (cp) => !test(cp) : test;
    }
    const cp = this.#escapedCodePoint(c, start);
    if (flags.i) {
      const variants = foldVariants(cp);
      return (x) => variants.includes(x);
    }
    return (x) => x === cp;
  }

  #escapedCodePoint(c: string, start: number): number {
    const simple: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };
    if (c in simple) return simple[c] as number;
    if (c >= '0' && c <= '7') {
      // \1..\7 alone would be a backreference, which RE2 does not support
      if (c !== '0' && !/[0-7]/.test(this.#peek() ?? '')) this.fail('invalid escape sequence', `\\${c}`);
      let digits = c;
      while (digits.length < 3 && /[0-7]/.test(this.#peek() ?? '')) digits += this.#src[this.#pos++];
      return Number.parseInt(digits, 8);
    }
    if (c === 'x') {
      if (this.#peek() === '{') {
        const end = this.#src.indexOf('}', this.#pos);
        const hex = end < 0 ? '' : this.#src.slice(this.#pos + 1, end).join('');
        if (!/^[0-9A-Fa-f]{1,8}$/.test(hex) || Number.parseInt(hex, 16) > 0x10ffff) {
          this.fail(
            'invalid escape sequence',
            this.#src.slice(start, end < 0 ? undefined : end + 1).join(''),
          );
        }
        this.#pos = end + 1;
        return Number.parseInt(hex, 16);
      }
      const hex = this.#src.slice(this.#pos, this.#pos + 2).join('');
      if (!/^[0-9A-Fa-f]{2}$/.test(hex))
        this.fail('invalid escape sequence', this.#src.slice(start, this.#pos + 2).join(''));
      this.#pos += 2;
      return Number.parseInt(hex, 16);
    }
    const cp = c.codePointAt(0) ?? 0;
    if (cp < 0x80 && !isWordChar(cp)) return cp;
    return this.fail('invalid escape sequence', `\\${c}`);
  }

  #charClass(flags: Flags): RegexNode {
    const start = this.#pos;
    this.#pos++;
    let negate = false;
    if (this.#peek() === '^') {
      negate = true;
      this.#pos++;
    }
    const tests: CodePointTest[] = [];
    let first = true;
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.fail('missing closing ]', this.#src.slice(start).join(''));
      if (c === ']' && !first) {
        this.#pos++;
        break;
      }
      first = false;
      if (c === '[' && this.#peek(1) === ':') {
        const rest = this.#src.slice(this.#pos).join('');
        const m = /^\[:(\^?)([a-z]+):\]/.exec(rest);
        if (m !== null) {
          const base = POSIX[m[2] ?? ''];
          if (base === undefined) this.fail('invalid character class range', m[0]);
          tests.push(m[1] === '^' ? (cp) => !base(cp) : base);
          this.#pos += m[0].length;
          continue;
        }
      }
      const lo = this.#classChar(flags, start);
      if (typeof lo === 'function') {
        tests.push(lo);
        continue;
      }
      if (this.#peek() === '-' && this.#peek(1) !== ']' && this.#peek(1) !== undefined) {
        const dash = this.#pos;
        this.#pos++;
        const hi = this.#classChar(flags, start);
        if (typeof hi === 'function' || hi < lo) {
          this.fail('invalid character class range', this.#src.slice(dash - 1, this.#pos).join(''));
        }
        tests.push((cp) => cp >= lo && cp <= hi);
      } else {
        tests.push((cp) => cp === lo);
      }
    }
    const any: CodePointTest = (cp) => tests.some((t) => t(cp));
    const test = flags.i ? folded(any) : any;
    return { kind: 'char', test: negate ? (cp) => !test(cp) : test };
  }

  /** One code point of a bracket expression, or a class escape (`\d`, `\pL`) inside it. */
  #classChar(flags: Flags, classStart: number): number | CodePointTest {
    const c = this.#peek();
    if (c === undefined) this.fail('missing closing ]', this.#src.slice(classStart).join(''));
    if (c !== '\\') {
      this.#pos++;
      return c.codePointAt(0) ?? 0;
    }
    const next = this.#peek(1);
    if (next !== undefined && 'dDsSwWpP'.includes(next)) return this.#escapeClass({ ...flags, i: false });
    if (next === undefined) this.fail('trailing backslash at end of expression', '');
    const start = this.#pos;
    this.#pos += 2;
    return this.#escapedCodePoint(next, start);
  }
}

/**
 * Parses a Go RE2 pattern.
 *
 * @throws RegexSyntaxError with Go's message for a pattern Go refuses.
 */
export function parseRegex(pattern: string): RegexNode {
  return new Parser(pattern).parse();
}
