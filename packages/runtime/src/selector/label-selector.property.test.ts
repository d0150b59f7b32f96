import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../backend/index.ts';
import { compileLabelSelector, type LabelSelectorRequirement } from '../predicate/index.ts';
import { parseLabelSelector } from './label-parser.ts';
import { labelSelectorFromObject } from './label-selector-object.ts';

type Labels = Record<string, string>;
type Operator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | '>' | '<';
interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

/** What each requirement means, written out plainly from the Kubernetes documentation. */
function reference(requirements: readonly Requirement[], labels: Labels): boolean {
  return requirements.every((requirement) => holds(requirement, labels));
}

function holds({ key, operator, values }: Requirement, labels: Labels): boolean {
  const present = Object.keys(labels).includes(key);
  const value = labels[key];
  switch (operator) {
    case '=':
    case '==':
      return present && value === values[0];
    case '!=':
      return !present || value !== values[0];
    case 'in':
      return present && values.includes(value as string);
    case 'notin':
      return !present || !values.includes(value as string);
    case 'exists':
      return present;
    case '!':
      return !present;
    case '>':
    case '<': {
      if (!present || !/^-?[0-9]+$/.test(value as string)) return false;
      const [actual, bound] = [Number(value), Number(values[0])];
      return operator === '>' ? actual > bound : actual < bound;
    }
  }
}

const keyArb = fc.constantFrom('app', 'tier', 'example.com/team', 'in', 'notin', 'a.b_c-D', 'x');
const valueArb = fc.constantFrom('', 'web', 'db', 'in', 'notin', 'v1.2_3', 'X', '0', '1', '10', '007', '2');
const boundArb = fc.constantFrom('0', '1', '2', '7', '10', '010');
const labelsArb = fc.dictionary(keyArb, valueArb, { maxKeys: 5 });
const spaceArb = fc.constantFrom('', '', ' ', '  ', '\t', '\n', '\r\n');

const requirementArb: fc.Arbitrary<Requirement> = fc.oneof(
  fc.record({
    key: keyArb,
    operator: fc.constantFrom<Operator>('=', '==', '!='),
    values: fc.tuple(valueArb),
  }),
  fc.record({
    key: keyArb,
    operator: fc.constantFrom<Operator>('in', 'notin'),
    values: fc.array(valueArb, { minLength: 1, maxLength: 4 }),
  }),
  fc.record({ key: keyArb, operator: fc.constantFrom<Operator>('exists', '!'), values: fc.constant([]) }),
  fc.record({ key: keyArb, operator: fc.constantFrom<Operator>('>', '<'), values: fc.tuple(boundArb) }),
);
const requirementsArb = fc.array(requirementArb, { maxLength: 5 });
const objectRequirementsArb = fc.array(
  requirementArb.filter(({ operator }) => operator !== '>' && operator !== '<'),
  { maxLength: 5 },
);

/** One requirement as a user might write it, `ws` giving the spacing around each token. */
function spell({ key, operator, values }: Requirement, ws: () => string): string {
  switch (operator) {
    case 'exists':
      return `${ws()}${key}${ws()}`;
    case '!':
      return `${ws()}!${ws()}${key}${ws()}`;
    case 'in':
    case 'notin': {
      const items = values.every((v) => v === '') ? `${ws()},${ws()}` : values.join(`${ws()},${ws()}`);
      return `${ws()}${key} ${ws()}${operator}${ws()}(${ws()}${items}${ws()})${ws()}`;
    }
    case '=':
    case '==':
    case '!=':
    case '>':
    case '<':
      return `${ws()}${key}${ws()}${operator}${ws()}${values[0]}${ws()}`;
  }
}

/** Writes requirements out as a user might: any spacing, `==` or `=`, values in any order. */
const selectorTextArb = requirementsArb.chain((requirements) =>
  fc
    .array(spaceArb, { minLength: requirements.length * 8 + 2, maxLength: requirements.length * 8 + 2 })
    .map((spaces) => {
      let s = 0;
      const ws = (): string => spaces[s++] ?? '';
      const parts = requirements.map((requirement) => spell(requirement, ws));
      return { requirements, text: parts.join(',') + (requirements.length === 0 ? ws() : '') };
    }),
);

function toObjectRequirement({ key, operator, values }: Requirement): LabelSelectorRequirement {
  switch (operator) {
    case '=':
    case '==':
    case 'in':
      return { key, operator: 'In', values };
    case '!=':
    case 'notin':
      return { key, operator: 'NotIn', values };
    case 'exists':
      return { key, operator: 'Exists' };
    case '!':
      return { key, operator: 'DoesNotExist' };
    case '>':
    case '<':
      throw new Error('the object form has no > or <');
  }
}

/** Strings near the selector grammar, so the fuzzer reaches deep into the parser. */
const nearSyntaxArb = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      'in',
      'notin',
      '=',
      '==',
      '!=',
      '!',
      '(',
      ')',
      ',',
      ' ',
      '<',
      '>',
      '/',
      '.',
      '-',
      '_',
      'é',
      '\\',
      'x'.repeat(70),
    ),
    { maxLength: 16 },
  )
  .map((parts) => parts.join(''));

function parsesOrRejects(text: string): void {
  try {
    const selector = parseLabelSelector(text);
    expect(typeof selector.matches({ a: 'b' })).toBe('boolean');
    expect(typeof selector.toString()).toBe('string');
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
  }
}

describe('label selector properties', () => {
  it('matching a parsed selector agrees with the reference semantics, however the selector is spaced', () => {
    fc.assert(
      fc.property(selectorTextArb, labelsArb, ({ requirements, text }, labels) => {
        const selector = parseLabelSelector(text);
        expect(selector.empty).toBe(requirements.length === 0);
        expect(selector.matches(labels)).toBe(reference(requirements, labels));
      }),
      { numRuns: 3000 },
    );
  });

  it('parsing the canonical string form gives an equivalent selector with the same string form', () => {
    fc.assert(
      fc.property(selectorTextArb, fc.array(labelsArb, { maxLength: 10 }), ({ text }, labelSets) => {
        const selector = parseLabelSelector(text);
        const again = parseLabelSelector(selector.toString());
        expect(again.toString()).toBe(selector.toString());
        expect(again.empty).toBe(selector.empty);
        for (const labels of labelSets) expect(again.matches(labels)).toBe(selector.matches(labels));
      }),
      { numRuns: 2000 },
    );
  });

  it('the same requirements in another order print the same string', () => {
    fc.assert(
      fc.property(selectorTextArb, ({ requirements }) => {
        const render = (list: readonly Requirement[]): string =>
          list.map((r) => spell(r, () => '')).join(',');
        const forwards = parseLabelSelector(render(requirements)).toString();
        expect(parseLabelSelector(render([...requirements].reverse())).toString()).toBe(forwards);
      }),
    );
  });

  it('the object form matches like the equivalent string and like the predicate compiler', () => {
    fc.assert(
      fc.property(objectRequirementsArb, labelsArb, (requirements, labels) => {
        const object = { matchExpressions: requirements.map(toObjectRequirement) };
        const fromObject = labelSelectorFromObject(object);
        expect(fromObject.matches(labels)).toBe(reference(requirements, labels));
        expect(fromObject.matches(labels)).toBe(compileLabelSelector(object)(labels));
        expect(parseLabelSelector(fromObject.toString()).matches(labels)).toBe(fromObject.matches(labels));
      }),
      { numRuns: 2000 },
    );
  });

  it('any string either parses or is rejected with a BadRequestError', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), parsesOrRejects), { numRuns: 3000 });
    fc.assert(fc.property(nearSyntaxArb, parsesOrRejects), { numRuns: 5000 });
  });
});
