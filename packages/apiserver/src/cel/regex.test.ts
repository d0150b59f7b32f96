import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RegexSyntaxError } from './errors.ts';
import { codePointLength, compileRegex } from './regex.ts';

const find = (pattern: string, text: string): string | undefined => compileRegex(pattern).find(text);

function syntaxError(pattern: string): string {
  try {
    compileRegex(pattern);
  } catch (error) {
    if (error instanceof RegexSyntaxError) return error.message;
    throw error;
  }
  throw new Error(`no error for ${pattern}`);
}

describe('the RE2 matcher finds what Go finds', () => {
  it.each([
    ['a+', 'xaaay', 'aaa'],
    ['a+?', 'xaaay', 'a'],
    ['(a|ab)(c|bcd)', 'abcd', 'abcd'],
    ['^abc$', 'abc', 'abc'],
    ['\\bfoo\\b', 'a foo b', 'foo'],
    ['[[:alpha:]]+', '12ab3', 'ab'],
    ['[[:^digit:]]+', '12ab3', 'ab'],
    ['\\pL+', '12héllo3', 'héllo'],
    ['\\p{Greek}+', 'abc αβγ', 'αβγ'],
    ['(?i)HELLO', 'say hello', 'hello'],
    ['(?i:A)b', 'Ab', 'Ab'],
    ['a{2,3}', 'aaaa', 'aaa'],
    ['a{2}', 'aaaa', 'aa'],
    ['x*', 'abc', ''],
    ['\\d+\\.\\d+', 'v1.25.3', '1.25'],
    ['\\Qa.b\\E', 'axb a.b', 'a.b'],
    ['(?s).+', 'a\nb', 'a\nb'],
    ['.+', 'a\nb', 'a'],
    ['(?m)^b$', 'a\nb\nc', 'b'],
    ['\\x41\\x{42}', 'xAB', 'AB'],
    ['(?P<word>\\w+)', '!hi!', 'hi'],
    ['(?<word>\\w+)', '!hi!', 'hi'],
    ['[^a-c]+', 'abcdef', 'def'],
    ['😀+', 'x😀😀y', '😀😀'],
    ['.', '😀', '😀'],
    ['\\d', '٣', undefined],
    ['\\pN', '٣', '٣'],
  ])('%s in %j matches %j', (pattern, text, expected) => {
    expect(find(pattern, text)).toBe(expected);
  });

  it("anchors `$` at the end of the text only (Go's, not Perl's, end)", () => {
    expect(find('a$', 'a\n')).toBeUndefined();
  });

  it('finds all matches as Go does, an empty match right after a match skipped', () => {
    expect(compileRegex('[0-9]+').findAll('a1b22c333', -1)).toEqual(['1', '22', '333']);
    expect(compileRegex('[0-9]+').findAll('a1b22c333', 2)).toEqual(['1', '22']);
    expect(compileRegex('[0-9]+').findAll('a1b22', 0)).toEqual([]);
    expect(compileRegex('x*').findAll('a😀b', -1)).toEqual(['', '', '', '']);
    expect(compileRegex('a*').findAll('baaab', -1)).toEqual(['', 'aaa', '']);
    expect(compileRegex('z').findAll('abc', -1)).toEqual([]);
  });

  it('matches patterns that make backtracking engines exponential in linear steps', () => {
    const text = `${'a'.repeat(30_000)}!`;
    expect(find('(a+)+$', text)).toBeUndefined();
    expect(find('(a|aa)*b', text)).toBeUndefined();
    expect(compileRegex('^([a-z]+)+[0-9]$').test(text)).toBe(false);
  });

  it.each([
    ['[a', 'error parsing regexp: missing closing ]: `[a`'],
    ['(a', 'error parsing regexp: missing closing ): `(a`'],
    ['a)', 'error parsing regexp: unexpected ): `a)`'],
    ['*', 'error parsing regexp: missing argument to repetition operator: `*`'],
    ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
    ['\\q', 'error parsing regexp: invalid escape sequence: `\\q`'],
    ['x{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
    ['\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
    ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
    ['(?<n', 'error parsing regexp: invalid named capture: `(?<n`'],
    ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['(?<=a)b', 'error parsing regexp: invalid named capture: `(?<=a)b`'],
    ['\\C', 'error parsing regexp: invalid escape sequence: `\\C`'],
    ['\\pX', 'error parsing regexp: invalid character class range: `\\pX`'],
    ['[[:foo:]]', 'error parsing regexp: invalid character class range: `[:foo:]`'],
  ])("refuses %j with Go's message", (pattern, message) => {
    expect(syntaxError(pattern)).toBe(message);
  });

  it('refuses nesting deeper than Go allows', () => {
    expect(syntaxError(`${'('.repeat(1001)}a${')'.repeat(1001)}`)).toBe(
      'error parsing regexp: expression nests too deeply',
    );
  });

  it('refuses a pattern again from the cache, with the same error', () => {
    expect(() => compileRegex('[a')).toThrow(RegexSyntaxError);
    expect(syntaxError('[a')).toBe('error parsing regexp: missing closing ]: `[a`');
  });

  it('counts code points as Go counts runes', () => {
    expect(codePointLength('a😀é')).toBe(3);
    expect(codePointLength('\ud800x')).toBe(2);
  });
});

/**
 * Each case below is a class of difference a differential fuzz (20 000 random patterns and inputs)
 * found between the hand-written engine Converge had before and re2js. Every expected answer is
 * Go's, read off Go's regexp/syntax (parse.go, compile.go); where re2js alone was wrong, `regex.ts`
 * mends it and the case says so.
 */
describe('RE2 cases where engines differ, answered as Go answers them', () => {
  it.each([
    // (?i) folds Perl classes too: \w gains ſ (U+017F) and K (U+212A), \W loses them
    ['(?i)\\w', 'ſ', 'ſ'],
    ['(?i)\\w', '\u212a', '\u212a'],
    ['(?i)\\W', 'ſ', undefined],
    ['\\W', 'ſ', 'ſ'],
    // a flag set in one alternative holds to the end of the group, across `|`
    ['-(?i-s)|\\w', 'ſB', 'ſ'],
    // a negated class is negated after folding, not folded after negating
    ['(?i)[\\W]', '\u212a', undefined],
    ['(?i)[^aα-ω\\W]', 'SKα', 'S'],
    ['(?i)[^\\w]', 'ſ', undefined],
    // folding follows Unicode's whole simple-fold orbit
    ['(?i)σ', 'ς', 'ς'],
    ['(?i)Σ+', 'σςΣ', 'σςΣ'],
    ['(?i)ß', 'ẞ', 'ẞ'],
    // x* over an x that can match empty is (x+)?, so an empty x keeps its priority (Go issue 46123)
    ['(|a)*', 'aa', ''],
    ['(a|)*', 'aa', 'aa'],
    ['(a*?)*', 'aa', ''],
    ['[^\\w[:punct:]\\s]?($*|\\pL{1,3})*', 'ςx.-k', 'ς'],
    // a flag group pushes nothing: a repetition after it repeats what came before
    ['a(?i)*', 'aaa', 'aaa'],
    // `{01}` is not a repeat count (no leading zeros): it is literal text
    ['x{01}', 'x{01}', 'x{01}'],
    ['x{01}', 'x', undefined],
    // an empty flag group is allowed
    ['(?)', 'a', ''],
    // groups of the same name are allowed (re2js alone refuses them; mended)
    ['(?P<x>a)(?<x>b)', 'ab', 'ab'],
    ['(?P<x>a)\\Q(?P<x>\\E(?P<x>b)', 'a(?P<x>b', 'a(?P<x>b'],
    ['(?P<x>a)[(?P<x>]', 'a(', 'a('],
  ])('%s in %j matches %j', (pattern, text, expected) => {
    expect(find(pattern, text)).toBe(expected);
  });

  it.each([
    // a bad repeat count is reported before the missing argument, and before later errors
    ['{2,1}', 'invalid repeat count: `{2,1}`'],
    ['({2,1})', 'invalid repeat count: `{2,1}`'],
    ['{2,1}|\\q', 'invalid repeat count: `{2,1}`'],
    ['{2}', 'missing argument to repetition operator: `{2}`'],
    // nested counts multiply: past 1000 copies is a bad repeat count, not "expression too large"
    ['(a{1000}){1000}', 'invalid repeat count: `{1000}`'],
    ['\\x{110000}', 'invalid escape sequence: `\\x{110000`'],
    ['a(?i)**', 'invalid nested repetition operator: `**`'],
    ['(?i)*', 'missing argument to repetition operator: `*`'],
    ['[a-\\d]', 'invalid escape sequence: `\\d`'],
    ['(?', 'invalid or unsupported Perl syntax: `(?`'],
    // re2js leaves the empty expression off (mended)
    ['\\', 'trailing backslash at end of expression: ``'],
    // same-named groups are no error, so the next error is the one reported (mended)
    ['(?P<g>(?P<g>\\1))', 'invalid escape sequence: `\\1`'],
    ['(?P<x>a)(?P<x>b)(', 'missing closing ): `(?P<x>a)(?P<x>b)(`'],
    // Go 1.23 knows general categories and scripts only, by their exact names
    ['\\p{Letter}', 'invalid character class range: `\\p{Letter}`'],
    ['\\p{latin}', 'invalid character class range: `\\p{latin}`'],
    // re2js knows these binary properties and aliases; Go does not (mended)
    ['\\p{Emoji}', 'invalid character class range: `\\p{Emoji}`'],
    ['[\\P{^Alphabetic}]', 'invalid character class range: `\\P{^Alphabetic}`'],
    ['\\p{Ascii}', 'invalid character class range: `\\p{Ascii}`'],
  ])("refuses %j with Go's message", (pattern, message) => {
    expect(syntaxError(pattern)).toBe(`error parsing regexp: ${message}`);
  });

  it('reads an escaped backslash or quoted text before a property name as Go does', () => {
    expect(find('\\\\p{Emoji}', '\\p{Emoji}')).toBe('\\p{Emoji}');
    expect(find('\\Q\\p{Emoji}\\E', '\\p{Emoji}')).toBe('\\p{Emoji}');
  });
});

/**
 * Patterns whose meaning JavaScript and RE2 share. Quantifiers apply to single characters only:
 * JavaScript refuses an empty iteration of a quantified group (`(a*|b)?`), RE2 does not.
 */
const char = fc.constantFrom('a', 'b', 'c', '.', '[ab]', '[^a]', '\\d', '\\w', '\\s');
const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    char,
    tie('re').map((r) => `(${r})`),
    tie('re').map((r) => `(?:${r})`),
  ),
  re: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('atom'),
    fc
      .tuple(char, fc.constantFrom('*', '+', '?', '*?', '+?', '??', '{1,2}', '{2}'))
      .map(([a, q]) => `${a}${q}`),
    fc.tuple(tie('re'), tie('re')).map(([a, b]) => `${a}${b}`),
    fc.tuple(tie('re'), tie('re')).map(([a, b]) => `${a}|${b}`),
  ),
})).re;

describe('the RE2 matcher agrees with leftmost-first matching', () => {
  it('finds the same first match as a backtracking engine for patterns both read alike', () => {
    fc.assert(
      fc.property(pattern, fc.stringMatching(/^[abc1 _]{0,12}$/), (re, text) => {
        const js = new RegExp(re, 'u').exec(text);
        expect(find(re, text)).toBe(js === null ? undefined : js[0]);
      }),
      { numRuns: 500 },
    );
  });
});

/** RE2 syntax at large, with mistakes mixed in: what the differential fuzz generated. */
const re2Pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; atom: string; piece: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', 'A', 'é', 'σ', '😀', '-', '\\.', '.', '^', '$', '\\b', '\\A', '\\z'),
    fc.constantFrom(
      '\\d',
      '\\W',
      '\\s',
      '\\pL',
      '\\p{Greek}',
      '\\P{^Lu}',
      '[[:alpha:]]',
      '[^a-c\\d]',
      '[]a]',
    ),
    tie('re').map((r) => `(${r})`),
    tie('re').map((r) => `(?:${r})`),
    tie('re').map((r) => `(?P<g>${r})`),
    fc.tuple(fc.constantFrom('i', 's', 'm', 'U', '-i'), tie('re')).map(([f, r]) => `(?${f}:${r})`),
  ),
  piece: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('atom'),
    fc.tuple(tie('atom'), fc.constantFrom('*', '+?', '?', '{2}', '{1,3}?')).map(([a, q]) => `${a}${q}`),
    fc.constantFrom('(?i)', '(?s)', '(?m)', '(?U)', ')', '(', '[', '**', '{2,1}', '\\q', '\\', '\\p{Emoji}'),
  ),
  re: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('piece'),
    fc.tuple(tie('piece'), tie('re')).map(([a, b]) => `${a}${b}`),
    fc.tuple(tie('re'), tie('re')).map(([a, b]) => `${a}|${b}`),
  ),
})).re;

describe('the RE2 matcher on any pattern', () => {
  it("compiles or refuses with Go's wording, and its answers agree with each other", () => {
    const text = fc.array(
      fc.constantFrom('a', 'b', 'A', 'ſ', '\u212a', 'é', 'σ', 'ς', '😀', ' ', '\n', '-'),
      {
        maxLength: 10,
      },
    );
    fc.assert(
      fc.property(re2Pattern, text, (p, chars) => {
        const t = chars.join('');
        let re: ReturnType<typeof compileRegex>;
        try {
          re = compileRegex(p);
        } catch (error) {
          expect(error).toBeInstanceOf(RegexSyntaxError);
          expect((error as Error).message).toMatch(/^error parsing regexp: [a-z ]+[)\]]?(: `[\s\S]*`)?$/);
          return;
        }
        const first = re.find(t);
        const all = re.findAll(t, -1);
        expect(re.test(t)).toBe(first !== undefined);
        expect(all[0]).toBe(first);
        for (const m of all) expect(t).toContain(m);
        expect(re.findAll(t, 1)).toEqual(all.slice(0, 1));
      }),
      { numRuns: 300 },
    );
  });
});
