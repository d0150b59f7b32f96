/**
 * JSON Pointer (RFC 6901) parsing for JSON patch. Internal to the patch module.
 */

/** The reference tokens of a pointer (`''` → `[]`), or why the pointer is malformed. */
export function parseJsonPointer(pointer: string): string[] | { readonly problem: string } {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return { problem: 'a JSON pointer must be "" or start with "/"' };
  if (/~(?![01])/.test(pointer)) return { problem: 'in a JSON pointer "~" must be followed by 0 or 1' };
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * The array index a reference token denotes, or undefined: decimal digits without leading zeros.
 * `-` (past the end) is handled by the caller.
 */
export function arrayIndex(token: string): number | undefined {
  return ARRAY_INDEX.test(token) ? Number(token) : undefined;
}

/** True when `prefix` is a proper prefix of `tokens` (a location strictly inside it). */
export function isProperPrefix(prefix: readonly string[], tokens: readonly string[]): boolean {
  return prefix.length < tokens.length && prefix.every((token, i) => tokens[i] === token);
}
