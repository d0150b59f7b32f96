/**
 * The error Go's `json.Unmarshal(text, &map[string]interface{}{})` returns, or undefined when it
 * succeeds: kube-apiserver puts that text in the field errors of docker config Secrets. Syntax is
 * checked first (Go's scanner messages), then the top-level type (`null` and objects decode).
 */
export function goJsonObjectError(text: string): string | undefined {
  const syntax = new GoScanner(text).check();
  if (syntax !== undefined) return syntax;
  const value: unknown = JSON.parse(text);
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) return undefined;
  const kind = Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value;
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`;
}

class SyntaxFailure extends Error {}

/** Go's `quoteChar`: the offending character as Go prints it. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return `'"'`;
  return `'${JSON.stringify(c).slice(1, -1)}'`;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** A recursive-descent validator that fails with the message of Go's `encoding/json` scanner. */
class GoScanner {
  #i = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  check(): string | undefined {
    try {
      this.#value('looking for beginning of value');
      this.#skipSpace();
      if (this.#i < this.#text.length) this.#fail('after top-level value');
      return undefined;
    } catch (error) {
      if (error instanceof SyntaxFailure) return error.message;
      throw error;
    }
  }

  #peek(): string | undefined {
    return this.#text[this.#i];
  }

  #fail(context: string): never {
    const c = this.#peek();
    if (c === undefined) throw new SyntaxFailure('unexpected end of JSON input');
    throw new SyntaxFailure(`invalid character ${quoteChar(c)} ${context}`);
  }

  #skipSpace(): void {
    while (WHITESPACE.has(this.#peek() ?? '')) this.#i++;
  }

  #value(context: string): void {
    this.#skipSpace();
    const c = this.#peek();
    if (c === '{') this.#object();
    else if (c === '[') this.#array();
    else if (c === '"') this.#string();
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) this.#number();
    else if (c === 't') this.#literal('true');
    else if (c === 'f') this.#literal('false');
    else if (c === 'n') this.#literal('null');
    else this.#fail(context);
  }

  #literal(word: string): void {
    for (let k = 0; k < word.length; k++, this.#i++) {
      if (this.#peek() !== word[k]) this.#fail(`in literal ${word} (expecting ${quoteChar(word[k] ?? '')})`);
    }
  }

  #object(): void {
    this.#i++;
    this.#skipSpace();
    if (this.#peek() === '}') {
      this.#i++;
      return;
    }
    for (;;) {
      this.#skipSpace();
      if (this.#peek() !== '"') this.#fail('looking for beginning of object key string');
      this.#string();
      this.#skipSpace();
      if (this.#peek() !== ':') this.#fail('after object key');
      this.#i++;
      this.#value('looking for beginning of value');
      this.#skipSpace();
      const c = this.#peek();
      this.#i++;
      if (c === '}') return;
      if (c !== ',') {
        this.#i--;
        this.#fail('after object key:value pair');
      }
    }
  }

  #array(): void {
    this.#i++;
    this.#skipSpace();
    if (this.#peek() === ']') {
      this.#i++;
      return;
    }
    for (;;) {
      this.#value('looking for beginning of value');
      this.#skipSpace();
      const c = this.#peek();
      this.#i++;
      if (c === ']') return;
      if (c !== ',') {
        this.#i--;
        this.#fail('after array element');
      }
    }
  }

  #string(): void {
    this.#i++;
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.#fail('in string literal');
      if (c === '"') {
        this.#i++;
        return;
      }
      if (c < ' ') this.#fail('in string literal');
      this.#i++;
      if (c === '\\') this.#escape();
    }
  }

  #escape(): void {
    const c = this.#peek();
    if (c !== undefined && 'bfnrt\\/"'.includes(c)) {
      this.#i++;
      return;
    }
    if (c !== 'u') this.#fail('in string escape code');
    this.#i++;
    for (let k = 0; k < 4; k++, this.#i++) {
      if (!/[0-9a-fA-F]/.test(this.#peek() ?? '')) this.#fail('in \\u hexadecimal character escape');
    }
  }

  #digits(context: string): void {
    if (!/[0-9]/.test(this.#peek() ?? '')) this.#fail(context);
    while (/[0-9]/.test(this.#peek() ?? '')) this.#i++;
  }

  #number(): void {
    if (this.#peek() === '-') this.#i++;
    if (this.#peek() === '0') this.#i++;
    else this.#digits('in numeric literal');
    if (this.#peek() === '.') {
      this.#i++;
      this.#digits('after decimal point in numeric literal');
    }
    if (this.#peek() === 'e' || this.#peek() === 'E') {
      this.#i++;
      if (this.#peek() === '+' || this.#peek() === '-') this.#i++;
      this.#digits('in exponent of numeric literal');
    }
  }
}
