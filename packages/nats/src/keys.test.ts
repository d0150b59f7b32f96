import { validateKey } from '@nats-io/kv/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeKey, decodeToken, defaultBucketName, encodeKey, encodeToken, isValidKvKey } from './keys.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Strings of any well-formed Unicode, weighted towards the characters keys care about. */
const part = fc.oneof(
  fc.string({ unit: fc.constantFrom('.', '_', '-', '/', '=', '*', '>', ' ', 'a', 'Z', '0', 'é', '🙂') }),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }).filter((s) => !LONE_SURROGATE.test(s)),
);

describe('KV keys', () => {
  it('round-trip: decodeKey(encodeKey(namespace, name)) gives the pair back', () => {
    fc.assert(
      fc.property(part, part, (namespace, name) => {
        expect(decodeKey(encodeKey(namespace, name))).toEqual({ namespace, name });
      }),
      { numRuns: 2000 },
    );
  });

  it('distinct (namespace, name) pairs never share a key', () => {
    fc.assert(
      fc.property(part, part, part, part, (ns1, n1, ns2, n2) => {
        fc.pre(ns1 !== ns2 || n1 !== n2);
        expect(encodeKey(ns1, n1)).not.toBe(encodeKey(ns2, n2));
      }),
      { numRuns: 2000 },
    );
  });

  it('every encoded key passes the KV client key validation', () => {
    fc.assert(
      fc.property(part, part, (namespace, name) => {
        const key = encodeKey(namespace, name);
        expect(isValidKvKey(key)).toBe(true);
        expect(() => validateKey(key)).not.toThrow();
        expect(key.split('.')).toHaveLength(2);
        expect(key).not.toMatch(/[*>]/);
      }),
      { numRuns: 2000 },
    );
  });

  it('the empty namespace of a cluster-scoped object and names with dots stay apart', () => {
    expect(encodeKey('', 'a.b')).toBe('_.a_2eb');
    expect(encodeKey('a', 'b')).toBe('a.b');
    expect(encodeKey('a.b', '')).toBe('a_2eb._');
    expect(encodeKey('_', 'x')).toBe('_5f.x');
    expect(decodeKey('_.a_2eb')).toEqual({ namespace: '', name: 'a.b' });
  });

  it('decoding refuses keys this encoding never makes (so decoding is injective too)', () => {
    for (const key of [
      '',
      'a',
      'a.b.c',
      '.a',
      'a.',
      'a_2E.b',
      'a_61.b',
      'a_.b',
      'a_2.b',
      'a_zz.b',
      'a*.b',
      'a._ff',
    ]) {
      expect(decodeKey(key), key).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('_', '2', 'e', 'a', 'f', '5', '.', 'x') }), (token) => {
        const decoded = decodeToken(token);
        if (decoded !== undefined) expect(encodeToken(decoded)).toBe(token);
      }),
      { numRuns: 2000 },
    );
  });

  it('default bucket names hold only bucket characters', () => {
    const name = defaultBucketName('converge_', {
      group: 'suite.converge.dev',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      namespaced: true,
    });
    expect(name).toBe('converge_suite-converge-dev_v1_widgets');
    expect(
      defaultBucketName('', {
        group: '',
        version: 'v1',
        kind: 'ConfigMap',
        plural: 'configmaps',
        namespaced: true,
      }),
    ).toBe('core_v1_configmaps');
  });
});
