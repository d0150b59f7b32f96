import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../backend/index.ts';
import type { LabelSelector } from '../predicate/index.ts';
import { labelSelectorFromObject } from './label-selector-object.ts';

function rejection(selector: unknown): BadRequestError {
  try {
    labelSelectorFromObject(selector as LabelSelector);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return error as BadRequestError;
  }
  throw new Error('expected the selector to be rejected');
}

describe('labelSelectorFromObject', () => {
  it('an empty selector is empty and matches everything', () => {
    const selector = labelSelectorFromObject({});
    expect(selector.empty).toBe(true);
    expect(selector.toString()).toBe('');
    expect(selector.matches(undefined)).toBe(true);
  });

  it('needs every matchLabels pair and every expression', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['prod', 'staging'] },
        { key: 'zone', operator: 'NotIn', values: ['eu'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'canary', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(selector.matches({ app: 'web', tier: 'prod', owner: 'me' })).toBe(true);
    expect(selector.matches({ app: 'web', tier: 'prod', owner: 'me', zone: 'eu' })).toBe(false);
    expect(selector.matches({ app: 'web', tier: 'prod' })).toBe(false);
    expect(selector.matches({ app: 'web', tier: 'prod', owner: 'me', canary: '' })).toBe(false);
    expect(selector.matches({ app: 'api', tier: 'prod', owner: 'me' })).toBe(false);
  });

  it('prints the string syntax, so the object form can be sent as a labelSelector query', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'NotIn', values: ['canary', 'beta'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(selector.toString()).toBe('app=web,!legacy,owner,tier notin (beta,canary)');
  });

  it('treats null members as absent, as Kubernetes JSON does', () => {
    const selector = labelSelectorFromObject(
      JSON.parse(
        '{"matchLabels":null,"matchExpressions":[{"key":"a","operator":"Exists","values":null}]}',
      ) as LabelSelector,
    );
    expect(selector.toString()).toBe('a');
  });

  it.each([
    [null, 'selector', 'selector must be a label selector object'],
    [[], 'selector', 'selector must be a label selector object'],
    [{ matchLabels: 'app=web' }, 'matchLabels', 'matchLabels must be an object'],
    [
      { matchLabels: { 'bad key': 'x' } },
      'matchLabels["bad key"]',
      'matchLabels["bad key"] must be a valid label key',
    ],
    [
      { matchLabels: { app: 'bad value' } },
      'matchLabels["app"]',
      'matchLabels["app"] must be a valid label value',
    ],
    [
      { matchLabels: { app: 1 } },
      'matchLabels["app"]',
      'matchLabels["app"] must be a label value string, got 1',
    ],
    [{ matchExpressions: {} }, 'matchExpressions', 'matchExpressions must be an array'],
    [{ matchExpressions: ['x'] }, 'matchExpressions[0]', 'matchExpressions[0] must be a requirement'],
    [
      { matchExpressions: [{ operator: 'Exists' }] },
      'matchExpressions[0].key',
      'matchExpressions[0].key must be a label key string',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
      'matchExpressions[0].operator',
      'matchExpressions[0].operator must be one of',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      'matchExpressions[0].values',
      'matchExpressions[0].values must be at least one value for operator In',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] },
      'matchExpressions[0].values',
      'at least one value for operator NotIn',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'matchExpressions[0].values',
      'no values for operator Exists',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'In', values: 'x' }] },
      'matchExpressions[0].values',
      'matchExpressions[0].values must be an array',
    ],
    [
      { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', '-no'] }] },
      'matchExpressions[0].values[1]',
      'matchExpressions[0].values[1] must be a valid label value',
    ],
  ])('rejects %j with a 400 naming the field %s', (selector, field, problem) => {
    const error = rejection(selector);
    expect(error.status).toBe(400);
    expect(error.message).toContain(problem);
    expect(error.details.causes?.[0]?.field).toBe(field);
  });

  it('does not treat operator names inherited from Object.prototype as operators', () => {
    expect(rejection({ matchExpressions: [{ key: 'a', operator: 'toString' }] }).message).toContain(
      'operator must be one of',
    );
  });
});
