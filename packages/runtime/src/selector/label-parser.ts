import { BadRequestError } from '../backend/index.ts';
import { describe } from '../errors.ts';
import { type LabelRequirement, labelSelectorExpr, parseInt64 } from './label-expr.ts';
import { type LabelToken, tokenizeLabelSelector } from './label-lexer.ts';
import type { LabelSelectorExpr } from './label-selector-expr.ts';
import { labelKeyProblem, labelValueProblem } from './label-syntax.ts';

/**
 * Parses a label selector in Kubernetes' string syntax, as `kubectl -l` and the `labelSelector`
 * query parameter take it:
 *
 * - `key=value`, `key==value` — the label is present with that value;
 * - `key!=value` — the label is absent or has another value;
 * - `key in (a,b)` — the label is present with one of the values;
 * - `key notin (a,b)` — the label is absent or has none of the values;
 * - `key` — the label is present; `!key` — it is absent;
 * - `key>n`, `key<n` — the label is present and is an integer greater (less) than `n`;
 * - a comma between requirements means AND; whitespace between tokens is ignored; `''` matches
 *   everything. A value may be empty (`key=`, `key in (a,)`).
 *
 * Keys must be qualified names (`[dns-subdomain/]name`, name ≤ 63 characters of alphanumerics and
 * `-_.`, starting and ending alphanumeric); values ≤ 63 such characters, or empty; the bound of
 * `>`/`<` a non-negative 64-bit integer. Anything else throws a {@link BadRequestError} (a 400)
 * whose message quotes the selector and names the position.
 *
 * @example
 * const selector = parseLabelSelector('app in (web, api), !canary, tier!=db');
 * selector.matches({ app: 'web' }); // true
 * selector.matches({ app: 'web', canary: 'yes' }); // false
 * selector.toString(); // 'app in (api,web),!canary,tier!=db'
 */
export function parseLabelSelector(text: string): LabelSelectorExpr {
  if (typeof text !== 'string') {
    throw new BadRequestError(`invalid label selector: expected a string, got ${describe(text)}`);
  }
  return labelSelectorExpr(new LabelSelectorParser(text).parse());
}

/** A recursive-descent parser over the tokens of one selector. */
class LabelSelectorParser {
  readonly #text: string;
  readonly #tokens: readonly LabelToken[];
  #position = 0;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = tokenizeLabelSelector(text);
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    if (this.#peek().kind === 'end') return requirements;
    for (;;) {
      requirements.push(this.#requirement());
      const separator = this.#next();
      if (separator.kind === 'end') return requirements;
      if (separator.kind !== ',') throw this.#unexpected(separator, "',' or the end of the selector");
      const following = this.#peek();
      if (following.kind !== 'identifier' && following.kind !== '!') {
        throw this.#unexpected(following, "a requirement after ','");
      }
    }
  }

  #requirement(): LabelRequirement {
    const first = this.#next();
    if (first.kind === '!') {
      const key = this.#next();
      if (key.kind !== 'identifier') throw this.#unexpected(key, "a label key after '!'");
      return { key: this.#key(key), operator: '!', values: [] };
    }
    if (first.kind !== 'identifier') throw this.#unexpected(first, "a label key or '!'");
    const key = this.#key(first);
    const operator = this.#peek();
    switch (operator.kind) {
      case ',':
      case 'end':
        return { key, operator: 'exists', values: [] };
      case '=':
      case '==':
      case '!=':
        this.#next();
        return { key, operator: operator.kind === '!=' ? '!=' : '=', values: [this.#exactValue()] };
      case '>':
      case '<':
        this.#next();
        return { key, operator: operator.kind, values: [this.#integer(operator)] };
      case 'identifier':
        if (operator.text === 'in' || operator.text === 'notin') {
          this.#next();
          return { key, operator: operator.text, values: this.#valueSet(operator.text) };
        }
        break;
      case '!':
      case '(':
      case ')':
        break;
    }
    throw this.#unexpected(
      operator,
      "'=', '==', '!=', 'in', 'notin', '>', '<', ',' or the end of the selector",
    );
  }

  /** The value after `=`, `==` or `!=`; empty when a comma or the end follows at once. */
  #exactValue(): string {
    const token = this.#peek();
    if (token.kind === ',' || token.kind === 'end') return '';
    if (token.kind !== 'identifier') throw this.#unexpected(token, 'a label value');
    this.#next();
    return this.#value(token);
  }

  /** The bound after `>` or `<`: a label value that is a 64-bit integer. */
  #integer(operator: LabelToken): string {
    const token = this.#peek();
    const value = this.#exactValue();
    if (parseInt64(value) === undefined) {
      throw this.#error(
        token,
        `the value of '${operator.text}' must be an integer, got ${JSON.stringify(value)}`,
      );
    }
    return value;
  }

  /** `( [value] {, [value]} )`: items may be empty (`(a,)` holds `a` and `''`), the set may not. */
  #valueSet(operator: string): string[] {
    const open = this.#next();
    if (open.kind !== '(') throw this.#unexpected(open, `'(' after '${operator}'`);
    if (this.#peek().kind === ')') {
      throw this.#error(this.#peek(), `the values of '${operator}' must not be empty`);
    }
    const values: string[] = [];
    for (;;) {
      const item = this.#peek();
      if (item.kind === 'identifier') {
        this.#next();
        values.push(this.#value(item));
      } else if (item.kind === ',' || item.kind === ')') {
        values.push('');
      } else {
        throw this.#unexpected(item, "a label value, ',' or ')'");
      }
      const separator = this.#next();
      if (separator.kind === ')') return values;
      if (separator.kind !== ',') throw this.#unexpected(separator, "',' or ')'");
    }
  }

  #key(token: LabelToken): string {
    const problem = labelKeyProblem(token.text);
    if (problem !== undefined)
      throw this.#error(token, `invalid label key ${JSON.stringify(token.text)}: ${problem}`);
    return token.text;
  }

  #value(token: LabelToken): string {
    const problem = labelValueProblem(token.text);
    if (problem !== undefined) {
      throw this.#error(token, `invalid label value ${JSON.stringify(token.text)}: ${problem}`);
    }
    return token.text;
  }

  #peek(): LabelToken {
    return this.#tokens[this.#position] ?? this.#endToken();
  }

  #next(): LabelToken {
    const token = this.#peek();
    if (this.#position < this.#tokens.length) this.#position++;
    return token;
  }

  #endToken(): LabelToken {
    return { kind: 'end', text: '', offset: this.#text.length };
  }

  #unexpected(token: LabelToken, expected: string): BadRequestError {
    const found = token.kind === 'end' ? 'the end of the selector' : `'${token.text}'`;
    return this.#error(token, `found ${found}, expected ${expected}`);
  }

  #error(token: LabelToken, problem: string): BadRequestError {
    return new BadRequestError(
      `invalid label selector ${JSON.stringify(this.#text)}: ${problem} (at offset ${token.offset})`,
    );
  }
}
