const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The members a watch line's `managedFields` sits under: the event's object, then its metadata. */
const PATH = ['"object"', '"metadata"'] as const;
const MANAGED_FIELDS = '"managedFields"';
const KEYS = [...PATH, MANAGED_FIELDS];

/** Whether `code` is JSON whitespace. */
function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string opening at `at` (a quote), or -1 when it never closes. */
function skipString(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const close = text.indexOf('"', from);
    if (close < 0) return -1;
    let slashes = 0;
    for (let j = close - 1; text.charCodeAt(j) === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return close + 1;
    from = close + 1;
  }
}

/** A number, `true`, `false` or `null`, spelled as JSON spells them. */
const SCALAR = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null/y;

/** The index after the scalar at `at`, or -1 when there is none there. */
function skipScalar(text: string, at: number): number {
  SCALAR.lastIndex = at;
  if (!SCALAR.test(text)) return -1;
  const end = SCALAR.lastIndex;
  const next = text.charCodeAt(end);
  if (end < text.length && next !== COMMA && next !== CLOSE_OBJECT && next !== CLOSE_ARRAY && !isSpace(next))
    return -1;
  return end;
}

/**
 * The index after the value starting at `at` (whitespace skipped first), or -1 when it is not
 * JSON there: objects, arrays and scalars follow the grammar; strings are jumped over with
 * `indexOf` (their escapes are not checked), so a value costs about one step per token, not one
 * per character.
 */
function skipValue(text: string, at: number): number {
  const i = skipSpace(text, at);
  const first = text.charCodeAt(i);
  if (first === QUOTE) return skipString(text, i);
  if (first === OPEN_OBJECT) return skipObject(text, i);
  if (first === OPEN_ARRAY) return skipArray(text, i);
  return skipScalar(text, i);
}

function skipObject(text: string, at: number): number {
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    i = skipString(text, i);
    if (i < 0) return -1;
    i = skipSpace(text, i);
    if (text.charCodeAt(i) !== COLON) return -1;
    i = skipValue(text, i + 1);
    if (i < 0) return -1;
    i = skipSpace(text, i);
    const next = text.charCodeAt(i);
    if (next === CLOSE_OBJECT) return i + 1;
    if (next !== COMMA) return -1;
    i = skipSpace(text, i + 1);
  }
}

function skipArray(text: string, at: number): number {
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === CLOSE_ARRAY) return i + 1;
  for (;;) {
    i = skipValue(text, i);
    if (i < 0) return -1;
    i = skipSpace(text, i);
    const next = text.charCodeAt(i);
    if (next === CLOSE_ARRAY) return i + 1;
    if (next !== COMMA) return -1;
    i += 1;
  }
}

/** Where a member was found: the text to cut for it, commas included. */
interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * In the object opening at `at` (`{`), the span of the member named `keys[depth]` when it is the
 * last key of the path, or the search one level down when its value is an object (`found`), and
 * the index after the object (`end`); undefined when the object is not well-formed. Every member of a level is walked, so with a
 * duplicated key the last one (the one `JSON.parse` keeps) is the one found.
 */
function findMember(
  text: string,
  at: number,
  keys: readonly string[],
  depth: number,
): { readonly found: Span | undefined; readonly end: number } | undefined {
  const wanted = keys[depth] as string;
  const last = depth === keys.length - 1;
  let found: Span | undefined;
  /** After the previous member's value: a member after it is cut from there (its comma included). */
  let previousEnd = -1;
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return { found: undefined, end: i + 1 };
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyStart = i;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const valueStart = skipSpace(text, i + 1);
    const valueEnd = skipValue(text, valueStart);
    if (valueEnd < 0) return undefined;
    const matches = keyEnd - keyStart === wanted.length && text.startsWith(wanted, keyStart);
    i = skipSpace(text, valueEnd);
    const next = text.charCodeAt(i);
    if (next !== COMMA && next !== CLOSE_OBJECT) return undefined;
    if (matches) {
      if (!last) {
        found =
          text.charCodeAt(valueStart) === OPEN_OBJECT
            ? findMember(text, valueStart, keys, depth + 1)?.found
            : undefined;
      } else if (previousEnd >= 0) {
        found = { start: previousEnd, end: valueEnd };
      } else {
        // The first member: cut through the comma after it (if any) and the space before the next.
        found = { start: keyStart, end: next === COMMA ? skipSpace(text, i + 1) : valueEnd };
      }
    }
    if (next === CLOSE_OBJECT) return { found, end: i + 1 };
    previousEnd = valueEnd;
    i = skipSpace(text, i + 1);
  }
}

/**
 * A watch event line (`{"type": …, "object": {…}}`) without its object's
 * `metadata.managedFields`, cut out of the text so that `JSON.parse` never builds them: on a Pod
 * they are a third of the bytes and most of its objects, and an informer with the default
 * transform drops them on arrival anyway. The line comes back unchanged when it has none, or
 * when it is not well-formed where the walk goes (`JSON.parse` then reports it as before). Only
 * that one member is removed; the walk jumps over strings with `indexOf`, so it costs a step per
 * member on the way and per string and bracket inside the managedFields, not one per character.
 *
 * @example
 * withoutManagedFields('{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"k"}]}}}');
 * // '{"type":"ADDED","object":{"metadata":{"name":"a"}}}'
 */
export function withoutManagedFields(line: string): string {
  if (!line.includes(MANAGED_FIELDS)) return line;
  const at = skipSpace(line, 0);
  if (line.charCodeAt(at) !== OPEN_OBJECT) return line;
  let walked: ReturnType<typeof findMember>;
  try {
    walked = findMember(line, at, KEYS, 0);
  } catch {
    return line; // nested too deep for the stack: JSON.parse decides
  }
  const span = walked?.found;
  if (span === undefined || skipSpace(line, (walked as { end: number }).end) !== line.length) return line;
  return line.slice(0, span.start) + line.slice(span.end);
}
