import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { compileLabelSelector, type LabelSelector, type LabelSelectorRequirement } from './label-selector.ts';

type Labels = Record<string, string>;

/** The selector semantics written out plainly, as the Kubernetes docs state them. */
function reference(selector: LabelSelector, labels: Labels): boolean {
  const has = (key: string): boolean => Object.keys(labels).includes(key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(key) || labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    if (operator === 'In' && !(has(key) && values.includes(labels[key] as string))) return false;
    if (operator === 'NotIn' && has(key) && values.includes(labels[key] as string)) return false;
    if (operator === 'Exists' && !has(key)) return false;
    if (operator === 'DoesNotExist' && has(key)) return false;
  }
  return true;
}

const keys = fc.constantFrom('app', 'tier', 'example.com/team', 'a', 'z-1');
const values = fc.constantFrom('', 'web', 'db', 'prod', 'v1.2_3');
const labelsArb = fc.dictionary(keys, values, { maxKeys: 5 });
const requirementArb: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
  fc.record({
    key: keys,
    operator: fc.constantFrom('In' as const, 'NotIn' as const),
    values: fc.array(values, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ key: keys, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
  fc.record({
    key: keys,
    operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const),
    values: fc.constant([]),
  }),
);
const selectorArb: fc.Arbitrary<LabelSelector> = fc.record(
  {
    matchLabels: fc.dictionary(keys, values, { maxKeys: 3 }),
    matchExpressions: fc.array(requirementArb, { maxLength: 4 }),
  },
  { requiredKeys: [] },
);

describe('compileLabelSelector', () => {
  it('matches exactly like the reference semantics for any selector and label set', () => {
    fc.assert(
      fc.property(selectorArb, labelsArb, (selector, labels) => {
        expect(compileLabelSelector(selector)(labels)).toBe(reference(selector, labels));
      }),
      { numRuns: 2000 },
    );
  });

  it('an empty selector matches every label set, including none', () => {
    const matches = compileLabelSelector({});
    expect(matches(undefined)).toBe(true);
    expect(matches({ anything: 'goes' })).toBe(true);
  });

  it('matchLabels needs every pair', () => {
    const matches = compileLabelSelector({ matchLabels: { app: 'web', tier: 'prod' } });
    expect(matches({ app: 'web', tier: 'prod', extra: 'x' })).toBe(true);
    expect(matches({ app: 'web' })).toBe(false);
    expect(matches({ app: 'web', tier: 'dev' })).toBe(false);
  });

  it('a matchLabels value of "" needs the key with an empty value', () => {
    const matches = compileLabelSelector({ matchLabels: { flag: '' } });
    expect(matches({ flag: '' })).toBe(true);
    expect(matches({})).toBe(false);
  });

  it('In needs the key with one of the values', () => {
    const matches = compileLabelSelector({
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }],
    });
    expect(matches({ tier: 'b' })).toBe(true);
    expect(matches({ tier: 'c' })).toBe(false);
    expect(matches({})).toBe(false);
  });

  it('NotIn passes when the key is absent or has another value', () => {
    const matches = compileLabelSelector({
      matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['canary'] }],
    });
    expect(matches({})).toBe(true);
    expect(matches({ tier: 'prod' })).toBe(true);
    expect(matches({ tier: 'canary' })).toBe(false);
  });

  it('Exists and DoesNotExist look at the key only', () => {
    const exists = compileLabelSelector({ matchExpressions: [{ key: 'app', operator: 'Exists' }] });
    const absent = compileLabelSelector({
      matchExpressions: [{ key: 'app', operator: 'DoesNotExist', values: [] }],
    });
    expect(exists({ app: '' })).toBe(true);
    expect(exists({})).toBe(false);
    expect(absent({})).toBe(true);
    expect(absent({ app: 'x' })).toBe(false);
  });

  it('inherited properties of the label object are not labels', () => {
    const matches = compileLabelSelector({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] });
    expect(matches({})).toBe(false);
  });

  it.each<[string, unknown, string]>([
    ['a missing selector', undefined, 'selector'],
    ['an array', [], 'selector'],
    ['matchLabels that is not an object', { matchLabels: 'app=web' }, 'selector.matchLabels'],
    [
      'a matchLabels key with a space',
      { matchLabels: { 'bad key': 'x' } },
      'selector.matchLabels["bad key"]',
    ],
    [
      'a matchLabels value that is too long',
      { matchLabels: { app: 'x'.repeat(64) } },
      'selector.matchLabels["app"]',
    ],
    ['a matchLabels value that is not a string', { matchLabels: { app: 1 } }, 'selector.matchLabels["app"]'],
    ['a matchLabels value ending in a dash', { matchLabels: { app: 'web-' } }, 'selector.matchLabels["app"]'],
    ['matchExpressions that is not an array', { matchExpressions: {} }, 'selector.matchExpressions'],
    ['a requirement that is not an object', { matchExpressions: ['app'] }, 'selector.matchExpressions[0]'],
    [
      'an unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Equals', values: ['x'] }] },
      'selector.matchExpressions[0].operator',
    ],
    [
      'a lowercase operator',
      { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] },
      'selector.matchExpressions[0].operator',
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      'selector.matchExpressions[0].values',
    ],
    [
      'NotIn with values missing',
      { matchExpressions: [{ key: 'a', operator: 'NotIn' }] },
      'selector.matchExpressions[0].values',
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'selector.matchExpressions[0].values',
    ],
    [
      'DoesNotExist with values',
      { matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x'] }] },
      'selector.matchExpressions[0].values',
    ],
    [
      'values that are not an array',
      { matchExpressions: [{ key: 'a', operator: 'In', values: 'x' }] },
      'selector.matchExpressions[0].values',
    ],
    [
      'an invalid value',
      { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'not ok'] }] },
      'selector.matchExpressions[0].values[1]',
    ],
    [
      'an empty key',
      { matchExpressions: [{ key: '', operator: 'Exists' }] },
      'selector.matchExpressions[0].key',
    ],
    [
      'a key name over 63 characters',
      { matchExpressions: [{ key: 'k'.repeat(64), operator: 'Exists' }] },
      'selector.matchExpressions[0].key',
    ],
    [
      'a key with an empty prefix',
      { matchExpressions: [{ key: '/app', operator: 'Exists' }] },
      'selector.matchExpressions[0].key',
    ],
    [
      'a key with an uppercase prefix',
      { matchExpressions: [{ key: 'Example.com/app', operator: 'Exists' }] },
      'selector.matchExpressions[0].key',
    ],
    [
      'a key with two slashes',
      { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] },
      'selector.matchExpressions[0].key',
    ],
    [
      'a key with an empty name',
      { matchExpressions: [{ key: 'example.com/', operator: 'Exists' }] },
      'selector.matchExpressions[0].key',
    ],
  ])('%s is rejected with an OptionsError naming the field', (_, selector, field) => {
    let error: unknown;
    try {
      compileLabelSelector(selector as LabelSelector);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).field).toBe(field);
  });

  it('prefixed keys, 63-character names and values, and empty values are accepted', () => {
    const matches = compileLabelSelector({
      matchLabels: { 'app.kubernetes.io/name': 'n'.repeat(63), ['k'.repeat(63)]: '' },
      matchExpressions: [{ key: 'Upper_Case.ok', operator: 'In', values: ['A.b-c_D'] }],
    });
    expect(
      matches({ 'app.kubernetes.io/name': 'n'.repeat(63), ['k'.repeat(63)]: '', 'Upper_Case.ok': 'A.b-c_D' }),
    ).toBe(true);
  });
});
