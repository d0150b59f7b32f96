import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RegexSyntaxError } from './errors.ts';
import { codePoints, compileRegex } from './regex-vm.ts';

function find(pattern: string, text: string): string | undefined {
  const cps = codePoints(text);
  const m = compileRegex(pattern).search(cps, 0);
  return m === undefined ? undefined : String.fromCodePoint(...cps.slice(m[0], m[1]));
}

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
    ['[^a-c]+', 'abcdef', 'def'],
    ['😀+', 'x😀😀y', '😀😀'],
  ])('%s in %j matches %j', (pattern, text, expected) => {
    expect(find(pattern, text)).toBe(expected);
  });

  it("anchors `$` at the end of the text only (Go's, not Perl's, end)", () => {
    expect(find('a$', 'a\n')).toBeUndefined();
  });

  it('matches a pattern that makes backtracking engines exponential in linear steps', () => {
    const text = `${'a'.repeat(30_000)}!`;
    expect(find('(a+)+$', text)).toBeUndefined();
    expect(find('(a|aa)*b', text)).toBeUndefined();
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
  ])("refuses %j with Go's message", (pattern, message) => {
    expect(syntaxError(pattern)).toBe(message);
  });

  it('refuses a pattern that compiles to an enormous program', () => {
    expect(syntaxError('(a{1000}){1000}')).toBe('error parsing regexp: expression too large');
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
