/**
 * Escapes a value for a field selector: `\` → `\\`, `,` → `\,`, `=` → `\=` (apimachinery's
 * `fields.EscapeValue`). Use it when building a selector from data.
 *
 * @example
 * const fieldSelector = `metadata.name=${escapeFieldSelectorValue(name)}`;
 */
export function escapeFieldSelectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (ch) => `\\${ch}`);
}

/** Why a raw value cannot be unescaped. */
export interface UnescapeProblem {
  readonly problem: string;
}

/**
 * Reverses {@link escapeFieldSelectorValue}. Returns a problem for an unknown escape (`\x`), a
 * trailing `\`, or a bare `,` or `=`.
 */
export function unescapeFieldSelectorValue(raw: string): string | UnescapeProblem {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw.charAt(i);
    if (ch === '\\') {
      const next = raw.charAt(i + 1);
      if (next === '\\' || next === ',' || next === '=') {
        out += next;
        i++;
        continue;
      }
      return {
        problem:
          i + 1 >= raw.length
            ? 'a value must not end with a single "\\"'
            : `invalid escape sequence "\\${next}" (only \\\\, \\, and \\= are allowed)`,
      };
    }
    if (ch === ',' || ch === '=')
      return { problem: `a bare "${ch}" in a value must be escaped as "\\${ch}"` };
    out += ch;
  }
  return out;
}
