import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../backend/index.ts';
import { escapeFieldSelectorValue } from './field-escape.ts';
import { parseFieldSelector } from './field-selector.ts';

function values(entries: Record<string, string>): (path: string) => string | undefined {
  return (path) => (Object.hasOwn(entries, path) ? entries[path] : undefined);
}

function rejection(text: string, allowed?: readonly string[]): BadRequestError {
  try {
    parseFieldSelector(text, allowed);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return error as BadRequestError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parseFieldSelector', () => {
  it('an empty or blank selector is empty, mentions no field and matches everything', () => {
    for (const text of ['', '  ', ',', ' , ']) {
      const selector = parseFieldSelector(text);
      expect(selector.empty).toBe(true);
      expect(selector.fields).toEqual([]);
      expect(selector.toString()).toBe('');
      expect(selector.matches(() => undefined)).toBe(true);
    }
  });

  it('= and == need the value; != needs another value', () => {
    for (const text of ['metadata.name=web', 'metadata.name==web']) {
      const selector = parseFieldSelector(text);
      expect(selector.matches(values({ 'metadata.name': 'web' }))).toBe(true);
      expect(selector.matches(values({ 'metadata.name': 'api' }))).toBe(false);
    }
    const not = parseFieldSelector('metadata.name!=web');
    expect(not.matches(values({ 'metadata.name': 'api' }))).toBe(true);
    expect(not.matches(values({ 'metadata.name': 'web' }))).toBe(false);
  });

  it('an absent field value counts as empty', () => {
    expect(parseFieldSelector('metadata.namespace=').matches(values({}))).toBe(true);
    expect(parseFieldSelector('metadata.namespace!=').matches(values({}))).toBe(false);
    expect(parseFieldSelector('metadata.namespace!=default').matches(values({}))).toBe(true);
  });

  it('commas are AND; whitespace around fields and values and empty terms are ignored', () => {
    const selector = parseFieldSelector(' metadata.namespace = default ,, metadata.name != web ,');
    expect(selector.fields).toEqual(['metadata.name', 'metadata.namespace']);
    expect(selector.toString()).toBe('metadata.name!=web,metadata.namespace=default');
    expect(selector.matches(values({ 'metadata.namespace': 'default', 'metadata.name': 'api' }))).toBe(true);
    expect(selector.matches(values({ 'metadata.namespace': 'default', 'metadata.name': 'web' }))).toBe(false);
    expect(selector.matches(values({ 'metadata.namespace': 'other', 'metadata.name': 'api' }))).toBe(false);
  });

  it('unescapes \\\\, \\, and \\= in values and escapes them again when printed', () => {
    const selector = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d');
    expect(selector.matches(values({ 'metadata.name': 'a,b=c\\d' }))).toBe(true);
    expect(selector.fields).toEqual(['metadata.name']);
    expect(selector.toString()).toBe('metadata.name=a\\,b\\=c\\\\d');
  });

  it('only the first unescaped operator splits a term', () => {
    const selector = parseFieldSelector('metadata.name=a!b');
    expect(selector.matches(values({ 'metadata.name': 'a!b' }))).toBe(true);
    expect(rejection('metadata.name=a=b').message).toContain(
      'a bare "=" in a value must be escaped as "\\="',
    );
  });

  it('rejects a field outside the allowed ones with `field label not supported`', () => {
    const error = rejection('spec.nodeName=n1');
    expect(error.status).toBe(400);
    expect(error.message).toBe('field label not supported: spec.nodeName');
  });

  it('selects on exactly the allowed fields when they are given', () => {
    const allowed = ['spec.nodeName', 'status.phase'];
    const selector = parseFieldSelector('spec.nodeName=n1,status.phase!=Failed', allowed);
    expect(selector.fields).toEqual(['spec.nodeName', 'status.phase']);
    expect(selector.matches(values({ 'spec.nodeName': 'n1', 'status.phase': 'Running' }))).toBe(true);
    expect(rejection('metadata.name=x', allowed).message).toBe('field label not supported: metadata.name');
  });

  it.each([
    [
      'metadata.name',
      'cannot understand "metadata.name"; expected field=value, field==value or field!=value',
    ],
    ['=web', 'names no field'],
    ['metadata.name=a\\x', 'invalid escape sequence "\\x"'],
    ['metadata.name=a\\', 'a value must not end with a single "\\"'],
    ['metadata.name\\=x', 'cannot understand'],
  ])('rejects %j with a 400 saying %j', (text, problem) => {
    const error = rejection(text);
    expect(error.status).toBe(400);
    expect(error.message).toContain(`invalid field selector ${JSON.stringify(text)}`);
    expect(error.message).toContain(problem);
  });

  it('rejects a selector that is not a string with a 400', () => {
    expect(() => parseFieldSelector(null as unknown as string)).toThrow(/expected a string, got null/);
  });
});

const fieldArb = fc.constantFrom('metadata.name', 'metadata.namespace');
const valueArb = fc.oneof(
  fc.constantFrom('', 'web', 'default', 'a,b', 'a=b', 'x\\y', '\\', ',=', 'kube-system'),
  fc.string({ maxLength: 8 }).filter((s) => s.trim() === s),
);
const termArb = fc.record({ field: fieldArb, operator: fc.constantFrom('=', '==', '!='), value: valueArb });
const termsArb = fc.array(termArb, { maxLength: 5 });
const objectArb = fc.record(
  { 'metadata.name': valueArb, 'metadata.namespace': valueArb },
  { requiredKeys: [] },
);

function render(terms: readonly { field: string; operator: string; value: string }[]): string {
  return terms.map((t) => `${t.field} ${t.operator} ${escapeFieldSelectorValue(t.value)}`).join(' , ');
}

function parsesOrRejects(text: string): void {
  try {
    const selector = parseFieldSelector(text);
    expect(typeof selector.matches(() => 'x')).toBe('boolean');
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
  }
}

describe('field selector properties', () => {
  it('matching agrees with the reference semantics for escaped values of any content', () => {
    fc.assert(
      fc.property(termsArb, objectArb, (terms, object) => {
        const expected = terms.every(({ field, operator, value }) => {
          const actual = (object as Record<string, string | undefined>)[field] ?? '';
          return operator === '!=' ? actual !== value : actual === value;
        });
        expect(parseFieldSelector(render(terms)).matches(values(object))).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('parsing the canonical string form gives an equivalent selector with the same string form', () => {
    fc.assert(
      fc.property(termsArb, fc.array(objectArb, { maxLength: 8 }), (terms, objects) => {
        const selector = parseFieldSelector(render(terms));
        const again = parseFieldSelector(selector.toString());
        expect(again.toString()).toBe(selector.toString());
        expect(again.fields).toEqual(selector.fields);
        for (const object of objects)
          expect(again.matches(values(object))).toBe(selector.matches(values(object)));
      }),
      { numRuns: 1000 },
    );
  });

  it('any string either parses or is rejected with a BadRequestError', () => {
    const nearSyntax = fc
      .array(
        fc.constantFrom(
          'metadata.name',
          'metadata.namespace',
          'x',
          '=',
          '==',
          '!=',
          '!',
          ',',
          '\\',
          ' ',
          'a',
        ),
        {
          maxLength: 12,
        },
      )
      .map((parts) => parts.join(''));
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), parsesOrRejects), { numRuns: 2000 });
    fc.assert(fc.property(nearSyntax, parsesOrRejects), { numRuns: 3000 });
  });
});
