import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../backend/index.ts';
import { parseLabelSelector } from './label-parser.ts';

function badRequest(text: string): BadRequestError {
  try {
    parseLabelSelector(text);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return error as BadRequestError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseLabelSelector', () => {
  it('an empty or blank selector is empty and matches every label set, including none', () => {
    for (const text of ['', '   ', '\t\n\r ']) {
      const selector = parseLabelSelector(text);
      expect(selector.empty).toBe(true);
      expect(selector.toString()).toBe('');
      expect(selector.matches(undefined)).toBe(true);
      expect(selector.matches({ any: 'thing' })).toBe(true);
    }
  });

  it('key=value and key==value need the label with exactly that value', () => {
    for (const text of ['app=web', 'app==web']) {
      const selector = parseLabelSelector(text);
      expect(selector.empty).toBe(false);
      expect(selector.matches({ app: 'web', other: 'x' })).toBe(true);
      expect(selector.matches({ app: 'api' })).toBe(false);
      expect(selector.matches({})).toBe(false);
      expect(selector.matches(undefined)).toBe(false);
    }
  });

  it('key!=value matches objects without the label and objects with another value', () => {
    const selector = parseLabelSelector('app!=web');
    expect(selector.matches({})).toBe(true);
    expect(selector.matches(undefined)).toBe(true);
    expect(selector.matches({ app: 'api' })).toBe(true);
    expect(selector.matches({ app: 'web' })).toBe(false);
  });

  it('in needs the label with one of the values', () => {
    const selector = parseLabelSelector('tier in (web, api)');
    expect(selector.matches({ tier: 'api' })).toBe(true);
    expect(selector.matches({ tier: 'db' })).toBe(false);
    expect(selector.matches({})).toBe(false);
  });

  it('notin matches objects without the label and objects with none of the values', () => {
    const selector = parseLabelSelector('tier notin (web,api)');
    expect(selector.matches({})).toBe(true);
    expect(selector.matches({ tier: 'db' })).toBe(true);
    expect(selector.matches({ tier: 'web' })).toBe(false);
  });

  it('a bare key needs the label, whatever its value; !key needs it absent', () => {
    const exists = parseLabelSelector('canary');
    expect(exists.matches({ canary: '' })).toBe(true);
    expect(exists.matches({})).toBe(false);
    const absent = parseLabelSelector('!canary');
    expect(absent.matches({})).toBe(true);
    expect(absent.matches({ canary: '' })).toBe(false);
  });

  it('key>n and key<n need the label to be an integer beyond the bound', () => {
    const greater = parseLabelSelector('replicas > 2');
    expect(greater.matches({ replicas: '3' })).toBe(true);
    expect(greater.matches({ replicas: '003' })).toBe(true);
    expect(greater.matches({ replicas: '2' })).toBe(false);
    expect(greater.matches({ replicas: 'three' })).toBe(false);
    expect(greater.matches({})).toBe(false);
    const less = parseLabelSelector('replicas<10');
    expect(less.matches({ replicas: '9' })).toBe(true);
    expect(less.matches({ replicas: '-5' })).toBe(true);
    expect(less.matches({ replicas: '10' })).toBe(false);
    expect(less.matches({ replicas: '' })).toBe(false);
    expect(less.toString()).toBe('replicas<10');
  });

  it('compares 64-bit integers exactly and ignores label values outside that range', () => {
    expect(parseLabelSelector('n>9007199254740992').matches({ n: '9007199254740993' })).toBe(true);
    expect(parseLabelSelector('n<9223372036854775807').matches({ n: '9223372036854775806' })).toBe(true);
    expect(parseLabelSelector('n>1').matches({ n: '9223372036854775808' })).toBe(false);
  });

  it('commas are AND', () => {
    const selector = parseLabelSelector('app=web,tier!=db,!canary');
    expect(selector.matches({ app: 'web' })).toBe(true);
    expect(selector.matches({ app: 'web', tier: 'db' })).toBe(false);
    expect(selector.matches({ app: 'web', canary: 'yes' })).toBe(false);
    expect(selector.matches({ tier: 'x' })).toBe(false);
  });

  it('an empty value is a value: key= needs the label present and empty', () => {
    const selector = parseLabelSelector('flag=,app=web');
    expect(selector.matches({ flag: '', app: 'web' })).toBe(true);
    expect(selector.matches({ app: 'web' })).toBe(false);
    expect(selector.matches({ flag: 'x', app: 'web' })).toBe(false);
  });

  it('empty items in a value set stand for the empty value', () => {
    for (const text of ['k in (a,)', 'k in (,a)', 'k in (a,,)']) {
      const selector = parseLabelSelector(text);
      expect(selector.matches({ k: '' })).toBe(true);
      expect(selector.matches({ k: 'a' })).toBe(true);
      expect(selector.matches({ k: 'b' })).toBe(false);
    }
    expect(parseLabelSelector('k in (,)').matches({ k: '' })).toBe(true);
    expect(parseLabelSelector('k in (,)').matches({ k: 'a' })).toBe(false);
  });

  it('whitespace between tokens does not change the meaning', () => {
    const spaced = parseLabelSelector('  app =  web ,\ttier  in ( a ,  b ) ,\n! canary , x != y ');
    expect(spaced.toString()).toBe(parseLabelSelector('app=web,tier in (a,b),!canary,x!=y').toString());
    expect(spaced.matches({ app: 'web', tier: 'b' })).toBe(true);
  });

  it('in and notin are ordinary words as keys and as values', () => {
    expect(parseLabelSelector('in in (in, notin)').matches({ in: 'notin' })).toBe(true);
    expect(parseLabelSelector('notin=in').matches({ notin: 'in' })).toBe(true);
    expect(parseLabelSelector('!in').matches({ notin: 'x' })).toBe(true);
  });

  it('accepts qualified keys with a DNS subdomain prefix and names of 63 characters', () => {
    const name = 'a'.repeat(63);
    const selector = parseLabelSelector(`app.kubernetes.io/${name}=${'v'.repeat(63)}`);
    expect(selector.matches({ [`app.kubernetes.io/${name}`]: 'v'.repeat(63) })).toBe(true);
    expect(parseLabelSelector('A.b_c-D=x.Y_z-1').matches({ 'A.b_c-D': 'x.Y_z-1' })).toBe(true);
  });

  it('prints a canonical form: sorted by key, values sorted and unique, == written =, duplicates once', () => {
    expect(parseLabelSelector('z==1, b notin (y,x,y), a in (c,a,b), !m, k, a in (c,a,b)').toString()).toBe(
      'a in (a,b,c),b notin (x,y),k,!m,z=1',
    );
    expect(parseLabelSelector('k in (,)').toString()).toBe('k in (,)');
    expect(parseLabelSelector('k in (b,)').toString()).toBe('k in (,b)');
  });

  it('only own labels count, so prototype names are not labels', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
    expect(parseLabelSelector('toString!=x').matches({})).toBe(true);
    expect(parseLabelSelector('hasOwnProperty=x').matches({ hasOwnProperty: 'x' })).toBe(true);
    expect(parseLabelSelector('valueOf in (a)').matches(Object.create(null) as Record<string, string>)).toBe(
      false,
    );
  });

  it.each([
    ['a,', "found the end of the selector, expected a requirement after ','"],
    [',a', "found ',', expected a label key or '!'"],
    ['a b', "found 'b', expected '=', '==', '!=', 'in', 'notin', '>', '<', ',' or the end of the selector"],
    ['a=b c', "found 'c', expected ',' or the end of the selector"],
    ['a=b=c', "found '=', expected ',' or the end of the selector"],
    ['a=(b)', "found '(', expected a label value"],
    ['a in b', "found 'b', expected '(' after 'in'"],
    ['a in (b', "found the end of the selector, expected ',' or ')'"],
    ['a in (b c)', "found 'c', expected ',' or ')'"],
    ['a in (=)', "found '=', expected a label value, ',' or ')'"],
    ['a in ()', "the values of 'in' must not be empty"],
    ['a notin ( )', "the values of 'notin' must not be empty"],
    ['!a=b', "found '=', expected ',' or the end of the selector"],
    ['!', "found the end of the selector, expected a label key after '!'"],
    ['!=a', "found '!=', expected a label key or '!'"],
    ['a>x', `the value of '>' must be an integer, got "x"`],
    ['a<', `the value of '<' must be an integer, got ""`],
    ['a>99999999999999999999', "the value of '>' must be an integer"],
    ['a>-1', 'invalid label value "-1"'],
    ['a>(1)', "found '(', expected a label value"],
    ['a (b)', "found '(', expected '=', '==', '!=', 'in', 'notin', '>', '<', ',' or the end of the selector"],
    ['a !b', "found '!', expected '=', '==', '!=', 'in', 'notin', '>', '<', ',' or the end of the selector"],
    ['-a', 'invalid label key "-a"'],
    ['a/b/c', 'invalid label key "a/b/c"'],
    ['/a', 'invalid label key "/a": the prefix before "/" must not be empty'],
    ['a/', 'invalid label key "a/": the name part must not be empty'],
    ['Example.com/a', 'invalid label key "Example.com/a": the prefix must be a DNS subdomain'],
    [`${'a'.repeat(64)}`, 'the name part must be at most 63 characters'],
    [`${'a'.repeat(254)}/b`, 'the prefix must be at most 253 characters'],
    ['a:b', 'invalid label key "a:b"'],
    [`a=${'b'.repeat(64)}`, 'a value must be at most 63 characters'],
    ['a=-b', 'invalid label value "-b"'],
    ['a=b/c', 'invalid label value "b/c"'],
    ['a in (x, y_)', 'invalid label value "y_"'],
  ])('rejects %j with a 400 saying %j', (text, problem) => {
    const error = badRequest(text);
    expect(error.status).toBe(400);
    expect(error.message).toContain(`invalid label selector ${JSON.stringify(text)}`);
    expect(error.message).toContain(problem);
  });

  it('names the offset of the offending token', () => {
    expect(badRequest('app=web, tier==db zone').message).toContain('at offset 18');
  });

  it('rejects a selector that is not a string with a 400', () => {
    expect(() => parseLabelSelector(42 as unknown as string)).toThrow(BadRequestError);
    expect(() => parseLabelSelector(undefined as unknown as string)).toThrow(
      /expected a string, got undefined/,
    );
  });
});
