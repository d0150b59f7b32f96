/**
 * Go RE2 patterns (what CEL's `matches` and Kubernetes' `find` / `findAll` accept) on `re2js`, a
 * port of RE2/J: linear-time matching, so no pattern can make the server spend exponential time —
 * the property Go's `regexp` (and so kube-apiserver) has and JavaScript's backtracking RegExp lacks.
 * Matching is leftmost-first on code points, like Go's.
 *
 * re2js follows Go's syntax and error wording except in three places, mended here: it refuses two
 * groups of the same name (RE2 C++ does, Go does not); it knows Unicode classes Go 1.23 (the Go of
 * kube-apiserver 1.32) does not, binary properties like `\p{Emoji}` and `\p{Ascii}`; and it leaves
 * the empty expression off `trailing backslash at end of expression: ``.
 */
import { RE2JS, RE2JSException } from 're2js';
import { RegexSyntaxError } from './errors.ts';

/** A compiled RE2 pattern. */
export interface Regex {
  /** The pattern's length in code points (what the cost model charges per character). */
  readonly size: number;
  /** Whether the pattern matches anywhere in `text` (Go's `MatchString`). */
  test(text: string): boolean;
  /** The leftmost-first match in `text`, or undefined when there is none (Go's `FindString`). */
  find(text: string): string | undefined;
  /** Go's `FindAllString(text, limit)`: successive non-overlapping matches; a negative limit means all. */
  findAll(text: string, limit: number): string[];
}

/**
 * Compiled patterns (and refusals) kept, least recently used dropped first: a rule's literal
 * pattern is compiled on its first call only; the bound matters for patterns a rule computes or
 * reads from the object. Each entry's lazy DFA is bounded by re2js (8 MiB of states).
 */
const CACHE_SIZE = 500;
const cache = new Map<string, Regex | RegexSyntaxError>();

/**
 * Compiles a Go RE2 pattern (cached per pattern, bounded).
 *
 * @throws RegexSyntaxError with Go's message for a pattern Go refuses.
 * @example
 * compileRegex('[0-9]+').findAll('a1b22', -1); // ['1', '22']
 */
export function compileRegex(pattern: string): Regex {
  let hit = cache.get(pattern);
  if (hit === undefined) {
    hit = build(pattern);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  } else {
    cache.delete(pattern);
  }
  cache.set(pattern, hit);
  if (hit instanceof RegexSyntaxError) throw hit;
  return hit;
}

/** The number of code points in `text` (Go's rune count, what CEL's `size()` gives). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function build(pattern: string): Regex | RegexSyntaxError {
  let re: RE2JS;
  try {
    re = compileGo(pattern);
  } catch (error) {
    if (error instanceof RE2JSException) return new RegexSyntaxError(goMessage(error.message));
    throw error;
  }
  const unknown = unknownUnicodeClass(pattern);
  if (unknown !== undefined) {
    return new RegexSyntaxError(`error parsing regexp: invalid character class range: \`${unknown}\``);
  }
  const re2 = re.re2();
  return {
    size: codePointLength(pattern),
    test: (text) => re.test(text),
    find: (text) => {
      const m = re.matcher(text);
      return m.find() ? (m.group() ?? '') : undefined;
    },
    findAll: (text, limit) => (limit === 0 ? [] : ((re2.findAll(text, limit) as string[] | null) ?? [])),
  };
}

/** Compiles as Go does: groups of the same name are allowed (they are renamed apart for re2js). */
function compileGo(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    if (!(error instanceof RE2JSException) || !error.message.includes('duplicate capture group name')) {
      throw error;
    }
    const renamed = renameGroups(pattern);
    try {
      return RE2JS.compile(renamed);
    } catch (retry) {
      if (retry instanceof RE2JSException) retry.message = retry.message.replaceAll(renamed, pattern);
      throw retry;
    }
  }
}

/** Names re2js accepts in `\p{…}` that Go 1.23's `regexp` refuses (it knows categories and scripts). */
const NOT_IN_GO = new Set([
  'Ascii',
  'Assigned',
  'ASCII_Hex_Digit',
  'Alphabetic',
  'Dash',
  'Emoji',
  'Emoji_Component',
  'Emoji_Modifier',
  'Emoji_Modifier_Base',
  'Emoji_Presentation',
  'Extended_Pictographic',
  'Hex_Digit',
  'Lowercase',
  'Math',
  'Quotation_Mark',
  'Terminal_Punctuation',
  'Uppercase',
  'White_Space',
]);

/** Escapes one at a time (a `\Q…\E` literal whole), capturing the name of a `\p{name}` class. */
const ESCAPE = /\\(?:Q[\s\S]*?(?:\\E|$)|[pP]\{\^?([A-Za-z_]+)\}|[\s\S])/g;

/** The first `\p{name}` of `pattern` naming a class Go does not have, or undefined. */
function unknownUnicodeClass(pattern: string): string | undefined {
  if (!pattern.includes('{')) return undefined;
  for (const m of pattern.matchAll(ESCAPE)) {
    if (m[1] !== undefined && NOT_IN_GO.has(m[1])) return m[0];
  }
  return undefined;
}

function goMessage(message: string): string {
  // Go prints every parse error as `code: `expr``, the trailing backslash's expr being empty
  return message.endsWith('trailing backslash at end of expression') ? `${message}: \`\`` : message;
}

const NAMED_GROUP = /\(\?P?<[A-Za-z0-9_]+>/y;

/**
 * Gives every named group (`(?P<name>`, `(?<name>`) a name of its own, outside character classes,
 * escapes and `\Q…\E` literals: `g0_name`, `g1_name`… (the number before the first `_` keeps
 * them apart). Names are never read back, so the names chosen do not matter otherwise.
 */
function renameGroups(pattern: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? pattern.length : end + 2;
        out += pattern.slice(i, stop);
        i = stop;
      } else {
        out += pattern.slice(i, i + 2);
        i += 2;
      }
    } else if (c === '[') {
      const stop = classEnd(pattern, i);
      out += pattern.slice(i, stop);
      i = stop;
    } else {
      NAMED_GROUP.lastIndex = i;
      const named = NAMED_GROUP.exec(pattern);
      if (named !== null) {
        out += `(?P<g${n++}_${named[0].slice(named[0].indexOf('<') + 1)}`;
        i += named[0].length;
      } else {
        out += c;
        i++;
      }
    }
  }
  return out;
}

/** The index just past the bracket expression that opens at `start` (or the end of the pattern). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++; // a leading ] is a literal
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === ']') return i + 1;
    if (c === '\\') i += 2;
    else if (c === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      i = close < 0 ? i + 1 : close + 2;
    } else i++;
  }
  return i;
}
