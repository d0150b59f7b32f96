const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const MANAGED_FIELDS = '"managedFields"';
/** The path to the member cut, as the keys read in the text: the event's object, its metadata. */
const KEYS = ['"object"', '"metadata"', MANAGED_FIELDS];

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
 * The index after the object or array opening at `at`, matching brackets and jumping over strings
 * without checking the grammar between them: the cheapest way over a value that is cut out unread.
 * -1 when the brackets do not match or the text ends first.
 */
function skipBrackets(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) return skipValue(text, at);
  const closers: number[] = [];
  let i = at;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = skipString(text, i);
      if (i < 0) return -1;
      continue;
    }
    if (code === OPEN_OBJECT) closers.push(CLOSE_OBJECT);
    else if (code === OPEN_ARRAY) closers.push(CLOSE_ARRAY);
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      if (closers.pop() !== code) return -1;
      if (closers.length === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

/**
 * In the object opening at `at` (`{`), the span of the first member named `keys[depth]` when it is
 * the last key of the path, or the search in its value when that is an object; undefined when
 * there is none or the text is not JSON on the way. The walk stops there: what follows is left to
 * `JSON.parse`, and so is a duplicated key (the cut one is then dropped by the parse anyway, and
 * the one it keeps by the informer's transform).
 */
function findMember(text: string, at: number, keys: readonly string[], depth: number): Span | undefined {
  const wanted = keys[depth] as string;
  const last = depth === keys.length - 1;
  /** After the previous member's value: a member after it is cut from there (its comma included). */
  let previousEnd = -1;
  let i = skipSpace(text, at + 1);
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyStart = i;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    const valueStart = skipSpace(text, i + 1);
    const matches = keyEnd - keyStart === wanted.length && text.startsWith(wanted, keyStart);
    if (matches && !last) {
      return text.charCodeAt(valueStart) === OPEN_OBJECT
        ? findMember(text, valueStart, keys, depth + 1)
        : undefined;
    }
    const valueEnd = matches ? skipBrackets(text, valueStart) : skipValue(text, valueStart);
    if (valueEnd < 0) return undefined;
    i = skipSpace(text, valueEnd);
    const next = text.charCodeAt(i);
    if (next !== COMMA && next !== CLOSE_OBJECT) return undefined;
    if (matches) {
      // After another member: from the end of its value (the comma between goes too). The first
      // member: through the comma after it (if any) and the space before the next.
      if (previousEnd >= 0) return { start: previousEnd, end: valueEnd };
      if (next === CLOSE_OBJECT) return { start: keyStart, end: valueEnd };
      // A comma the cut takes must be followed by a member: `{"managedFields": […], }` stays
      // whole, so that JSON.parse refuses its trailing comma as it would without the cut.
      const following = skipSpace(text, i + 1);
      return text.charCodeAt(following) === QUOTE ? { start: keyStart, end: following } : undefined;
    }
    if (next === CLOSE_OBJECT) return undefined;
    previousEnd = valueEnd;
    i = skipSpace(text, i + 1);
  }
}

/**
 * A watch event line (`{"type": …, "object": {…}}`) without its object's
 * `metadata.managedFields`, cut out of the text so that `JSON.parse` never builds them: on a Pod
 * they are a third of the bytes and most of its objects, and an informer with the default
 * transform drops them on arrival anyway. The line comes back unchanged when it has none, or when
 * it is not JSON on the way there (`JSON.parse` then reports it as before).
 *
 * The walk reads the members before `object` and before `metadata` and `managedFields` by the
 * grammar, jumping over strings with `indexOf`, and stops at the member it cuts: the rest is
 * parsed as usual. The managedFields value itself is skipped by matching its brackets and strings
 * only, not read; so a line that `JSON.parse` would refuse only for something inside that value
 * (a bad escape, a missing colon) is accepted, with it dropped.
 *
 * @example
 * withoutManagedFields('{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"k"}]}}}');
 * // '{"type":"ADDED","object":{"metadata":{"name":"a"}}}'
 */
export function withoutManagedFields(line: string): string {
  if (!line.includes(MANAGED_FIELDS)) return line;
  const at = skipSpace(line, 0);
  if (line.charCodeAt(at) !== OPEN_OBJECT) return line;
  let span: Span | undefined;
  try {
    span = findMember(line, at, KEYS, 0);
  } catch {
    return line; // nested too deep for the stack: JSON.parse decides
  }
  if (span === undefined) return line;
  return line.slice(0, span.start) + line.slice(span.end);
}
