/** Writing JSON values as TypeScript source: single-quoted strings, bare keys where they can be. */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const WIDTH = 100;

/** A string as a TypeScript literal: single-quoted, double-quoted when that saves escapes. */
export function quote(text: string): string {
  if (text.includes("'") && !text.includes('"')) return JSON.stringify(text);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes.
  const escaped = text.replace(/[\\'\n\r\t\u2028\u2029\0-\x1f\x7f]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case "'":
        return "\\'";
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  });
  return `'${escaped}'`;
}

/** An object key: bare when it is an identifier, quoted otherwise. */
export function key(name: string): string {
  return IDENTIFIER.test(name) ? name : quote(name);
}

/** The entries of an object literal, inline when short, else one per line at `indent`. */
export function objectLiteral(entries: readonly (readonly [string, string])[], indent: string): string {
  if (entries.length === 0) return '{}';
  const inline = `{ ${entries.map(([k, v]) => `${key(k)}: ${v}`).join(', ')} }`;
  if (inline.length + indent.length <= WIDTH && !inline.includes('\n')) return inline;
  const inner = `${indent}  `;
  return `{\n${entries.map(([k, v]) => `${inner}${key(k)}: ${v},`).join('\n')}\n${indent}}`;
}

/** A list literal, inline when short, else one item per line at `indent`. */
export function listLiteral(items: readonly string[], indent: string): string {
  const inline = `[${items.join(', ')}]`;
  if (inline.length + indent.length <= WIDTH && !inline.includes('\n')) return inline;
  const inner = `${indent}  `;
  return `[\n${items.map((item) => `${inner}${item},`).join('\n')}\n${indent}]`;
}

/** A JSON value as a TypeScript expression. */
export function literal(value: unknown, indent: string): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value))
    return listLiteral(
      value.map((v) => literal(v, inner)),
      indent,
    );
  if (typeof value === 'object') {
    return objectLiteral(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, literal(v, inner)] as const),
      indent,
    );
  }
  return 'undefined';
}

/** A one-line doc comment from a description: its first sentence, at most about 100 characters. */
export function docComment(description: unknown, indent: string): string {
  if (typeof description !== 'string') return '';
  const flat = description.replace(/\s+/g, ' ').trim();
  if (flat === '') return '';
  const sentence = /^(.+?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  const short = sentence.length > 100 ? `${sentence.slice(0, 97).trimEnd()}…` : sentence;
  return `${indent}/** ${short.replace(/\*\//g, '*\\/')} */\n`;
}
