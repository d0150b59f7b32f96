import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { labelSelector } from './label-selector-predicate.ts';

const obj = (labels?: Record<string, string>): KubeObject => ({
  metadata: labels === undefined ? { name: 'x' } : { name: 'x', labels },
});

describe('labelSelector', () => {
  const web = labelSelector({ matchLabels: { app: 'web' } });

  it('creates, deletes, tombstones and generic events pass when the object matches', () => {
    expect(web({ type: 'create', object: obj({ app: 'web' }) })).toBe(true);
    expect(web({ type: 'delete', object: obj({ app: 'web' }), finalStateUnknown: true })).toBe(true);
    expect(web({ type: 'generic', object: obj({ app: 'web' }) })).toBe(true);
  });

  it('events for objects that do not match are filtered, objects without labels included', () => {
    expect(web({ type: 'create', object: obj({ app: 'db' }) })).toBe(false);
    expect(web({ type: 'delete', object: obj() })).toBe(false);
  });

  it('an update passes when the new object matches', () => {
    expect(web({ type: 'update', oldObject: obj(), object: obj({ app: 'web' }) })).toBe(true);
  });

  it('an update that moves the object out of the selection still passes once', () => {
    expect(web({ type: 'update', oldObject: obj({ app: 'web' }), object: obj({ app: 'db' }) })).toBe(true);
  });

  it('an update where neither object matches is filtered', () => {
    expect(web({ type: 'update', oldObject: obj({ app: 'db' }), object: obj() })).toBe(false);
  });

  it('an invalid selector is rejected at construction with an OptionsError', () => {
    expect(() => labelSelector({ matchExpressions: [{ key: 'a', operator: 'Near' as never }] })).toThrow(
      OptionsError,
    );
  });
});
