/**
 * The subset of client-go's JSONPath that printer columns use, with missing keys allowed (as the
 * Table convertor sets): `.a.b`, `['a.b']`, `.a\.b`, `[0]`, `[-1]`, `[1:3]`, `[*]`, `.*`, `..name`,
 * and filters `[?(@.type=="Ready")]` with `==`, `!=`, `<`, `<=`, `>`, `>=` or a bare `@.path`.
 */
import { CrdJsonPathError } from './errors.ts';
import { isObject } from './json.ts';

type Step =
  | { readonly kind: 'field'; readonly names: readonly string[] }
  | { readonly kind: 'wildcard' }
  | { readonly kind: 'recursive' }
  | {
      readonly kind: 'slice';
      readonly start?: number;
      readonly end?: number;
      readonly step?: number;
      readonly index: boolean;
    }
  | {
      readonly kind: 'filter';
      readonly left: readonly Step[];
      readonly op?: string;
      readonly right?: unknown;
      readonly rightPath?: readonly Step[];
    };

/** A compiled JSONPath. */
export interface JsonPath {
  readonly source: string;
  readonly steps: readonly Step[];
}

const cache = new Map<string, JsonPath>();

class Parser {
  #text: string;
  #pos = 0;
  readonly #source: string;

  constructor(text: string, source: string) {
    this.#text = text;
    this.#source = source;
  }

  fail(problem: string): never {
    throw new CrdJsonPathError(this.#source, problem);
  }

  steps(stopAt?: string): Step[] {
    const steps: Step[] = [];
    while (this.#pos < this.#text.length) {
      const ch = this.#text[this.#pos];
      if (stopAt?.includes(ch ?? '')) break;
      if (ch === '.') {
        if (this.#text[this.#pos + 1] === '.') {
          this.#pos += 2;
          steps.push({ kind: 'recursive' });
          if (this.#text[this.#pos] === '[' || this.#pos >= this.#text.length) continue;
        } else {
          this.#pos++;
        }
        if (this.#text[this.#pos] === '*') {
          this.#pos++;
          steps.push({ kind: 'wildcard' });
        } else {
          const name = this.identifier();
          if (name !== '') steps.push({ kind: 'field', names: [name] });
        }
      } else if (ch === '[') {
        steps.push(this.bracket());
      } else if (ch === '@' && steps.length === 0) {
        this.#pos++;
      } else {
        this.fail(`unexpected ${JSON.stringify(ch)} at position ${this.#pos}`);
      }
    }
    return steps;
  }

  identifier(): string {
    let name = '';
    while (this.#pos < this.#text.length) {
      const ch = this.#text[this.#pos] ?? '';
      if (ch === '\\' && this.#pos + 1 < this.#text.length) {
        name += this.#text[this.#pos + 1];
        this.#pos += 2;
        continue;
      }
      if ('.[]()=!<>@ \'"?,'.includes(ch)) break;
      name += ch;
      this.#pos++;
    }
    return name;
  }

  quoted(): string {
    const quote = this.#text[this.#pos];
    let out = '';
    this.#pos++;
    while (this.#pos < this.#text.length && this.#text[this.#pos] !== quote) {
      if (this.#text[this.#pos] === '\\') this.#pos++;
      out += this.#text[this.#pos] ?? '';
      this.#pos++;
    }
    if (this.#pos >= this.#text.length) this.fail('unterminated string');
    this.#pos++;
    return out;
  }

  bracket(): Step {
    const close = this.#text.indexOf(']', this.#pos);
    if (close < 0) this.fail('unterminated [');
    this.#pos++;
    const ch = this.#text[this.#pos];
    if (ch === '?') return this.filter();
    if (ch === "'" || ch === '"') {
      const names = [this.quoted()];
      while (this.#text[this.#pos] === ',') {
        this.#pos++;
        while (this.#text[this.#pos] === ' ') this.#pos++;
        names.push(this.quoted());
      }
      this.expect(']');
      return { kind: 'field', names };
    }
    const end = this.#text.indexOf(']', this.#pos);
    const body = this.#text.slice(this.#pos, end).trim();
    this.#pos = end + 1;
    if (body === '*') return { kind: 'wildcard' };
    const parts = body.split(':');
    if (parts.length > 3 || !parts.every((p) => /^\s*(-?\d+)?\s*$/.test(p)))
      this.fail(`invalid array index ${JSON.stringify(body)}`);
    const num = (p: string | undefined): number | undefined =>
      p === undefined || p.trim() === '' ? undefined : Number(p);
    const [a, b, c] = parts;
    return {
      kind: 'slice',
      index: parts.length === 1,
      ...opt('start', num(a)),
      ...opt('end', num(b)),
      ...opt('step', num(c)),
    };
  }

  filter(): Step {
    this.#pos++;
    this.expect('(');
    while (this.#text[this.#pos] === ' ') this.#pos++;
    const left = this.steps(')=!<> ');
    while (this.#text[this.#pos] === ' ') this.#pos++;
    const op = /^(==|!=|<=|>=|<|>)/.exec(this.#text.slice(this.#pos))?.[0];
    let right: unknown;
    let rightPath: Step[] | undefined;
    if (op !== undefined) {
      this.#pos += op.length;
      while (this.#text[this.#pos] === ' ') this.#pos++;
      const ch = this.#text[this.#pos];
      if (ch === "'" || ch === '"') right = this.quoted();
      else if (ch === '@') rightPath = this.steps(') ');
      else {
        const literal = /^[^)\s]+/.exec(this.#text.slice(this.#pos))?.[0] ?? '';
        this.#pos += literal.length;
        if (literal === 'true' || literal === 'false') right = literal === 'true';
        else if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(literal)) right = Number(literal);
        else this.fail(`unrecognized filter value ${JSON.stringify(literal)}`);
      }
    }
    while (this.#text[this.#pos] === ' ') this.#pos++;
    this.expect(')');
    this.expect(']');
    return { kind: 'filter', left, ...opt('op', op), ...opt('right', right), ...opt('rightPath', rightPath) };
  }

  expect(ch: string): void {
    if (this.#text[this.#pos] !== ch) this.fail(`expected ${JSON.stringify(ch)} at position ${this.#pos}`);
    this.#pos++;
  }
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Parses a JSONPath (with or without the surrounding `{}`); throws {@link CrdJsonPathError}. */
export function parseJsonPath(source: string): JsonPath {
  const hit = cache.get(source);
  if (hit !== undefined) return hit;
  let text = source.trim();
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim();
  if (text.startsWith('$')) text = text.slice(1);
  const parsed: JsonPath = { source, steps: new Parser(text, source).steps() };
  if (cache.size > 1000) cache.clear();
  cache.set(source, parsed);
  return parsed;
}

function children(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isObject(value))
    return Object.keys(value)
      .sort()
      .map((k) => value[k]);
  return [];
}

function descendants(value: unknown, out: unknown[]): void {
  out.push(value);
  for (const child of children(value)) descendants(child, out);
}

function compare(left: unknown, op: string, right: unknown): boolean {
  if (op === '==') return left === right;
  if (op === '!=') return left !== right;
  if (typeof left !== typeof right || (typeof left !== 'number' && typeof left !== 'string')) return false;
  const [a, b] = [left as number | string, right as number | string];
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}

function apply(step: Step, values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const value of values) {
    switch (step.kind) {
      case 'field':
        if (isObject(value)) for (const n of step.names) if (Object.hasOwn(value, n)) out.push(value[n]);
        break;
      case 'wildcard':
        out.push(...children(value));
        break;
      case 'recursive':
        descendants(value, out);
        break;
      case 'slice': {
        if (!Array.isArray(value)) break;
        const len = value.length;
        const norm = (i: number): number => (i < 0 ? i + len : i);
        if (step.index) {
          const i = norm(step.start ?? 0);
          if (i >= 0 && i < len) out.push(value[i]);
          break;
        }
        const start = Math.max(0, norm(step.start ?? 0));
        const end = Math.min(len, norm(step.end ?? len));
        const by = step.step ?? 1;
        for (let i = start; i < end && by > 0; i += by) out.push(value[i]);
        break;
      }
      case 'filter':
        for (const item of children(value)) {
          const lefts = evaluate(step.left, item);
          if (step.op === undefined) {
            if (lefts.length > 0) out.push(item);
            continue;
          }
          const rights = step.rightPath === undefined ? [step.right] : evaluate(step.rightPath, item);
          if (lefts.some((l) => rights.some((r) => compare(l, step.op ?? '==', r)))) out.push(item);
        }
        break;
    }
  }
  return out;
}

function evaluate(steps: readonly Step[], root: unknown): unknown[] {
  let values: unknown[] = [root];
  for (const step of steps) values = apply(step, values);
  return values;
}

/** Every value `path` selects in `data` (missing keys select nothing). */
export function findResults(path: JsonPath, data: unknown): unknown[] {
  return evaluate(path.steps, data);
}
