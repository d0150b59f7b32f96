import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  eventName,
  microTime,
  objectReference,
  referenceIdentity,
  secondsTime,
  truncateChars,
  truncateUtf8,
  uniqueSuffix,
} from './format.ts';

const utf8 = (text: string): number => new TextEncoder().encode(text).length;

describe('truncateUtf8', () => {
  it('returns a prefix of at most maxBytes UTF-8 bytes that loses no more than one character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.nat(600), (text, max) => {
        const cut = truncateUtf8(text, max);
        expect(text.startsWith(cut)).toBe(true);
        expect(utf8(cut)).toBeLessThanOrEqual(max);
        if (utf8(text) > max) {
          const next = String.fromCodePoint(text.slice(cut.length).codePointAt(0) ?? 0);
          expect(utf8(cut) + utf8(next)).toBeGreaterThan(max);
        } else {
          expect(cut).toBe(text);
        }
      }),
    );
  });

  it('never splits a multi-byte character', () => {
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('a😀b', 4)).toBe('a');
    expect(truncateUtf8('a😀b', 5)).toBe('a😀');
  });
});

describe('truncateChars', () => {
  it('keeps surrogate pairs whole', () => {
    expect(truncateChars('ab😀', 3)).toBe('ab');
    expect(truncateChars('abc', 3)).toBe('abc');
    expect(truncateChars('abcd', 3)).toBe('abc');
  });
});

describe('times', () => {
  it('formats MicroTime with six fractional digits and Time in whole seconds, in UTC', () => {
    expect(microTime(1_700_000_000_123)).toBe('2023-11-14T22:13:20.123000Z');
    expect(secondsTime(1_700_000_000_999)).toBe('2023-11-14T22:13:20Z');
  });
});

describe('names', () => {
  it('names Events <name>.<suffix> within 253 characters, never ending the cut name in a dash or dot', () => {
    expect(eventName('web', 'abc')).toBe('web.abc');
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$/), (name) => {
        const result = eventName(
          name,
          uniqueSuffix(1_700_000_000_000, () => 0.5),
        );
        expect(result.length).toBeLessThanOrEqual(253);
        expect(result).toMatch(/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?\.[0-9a-f]+$/);
      }),
    );
  });

  it('makes suffixes from the time in hex and six random hex digits', () => {
    expect(uniqueSuffix(0x18bcfe56800, () => 0)).toBe('18bcfe56800000000');
    expect(uniqueSuffix(0x18bcfe56800, () => 0.999999999)).toBe('18bcfe56800ffffff');
  });
});

describe('objectReference', () => {
  it('copies apiVersion, kind, namespace, name, uid and resourceVersion, leaving out empty ones', () => {
    expect(
      objectReference({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: '', uid: 'u', resourceVersion: '3', labels: { a: 'b' } },
      }),
    ).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u', resourceVersion: '3' });
  });

  it('identifies an object without its resourceVersion', () => {
    const a = objectReference({ kind: 'K', metadata: { name: 'n', resourceVersion: '1' } });
    const b = objectReference({ kind: 'K', metadata: { name: 'n', resourceVersion: '2' } });
    const c = objectReference({ kind: 'K', metadata: { name: 'm', resourceVersion: '1' } });
    expect(referenceIdentity(a)).toBe(referenceIdentity(b));
    expect(referenceIdentity(a)).not.toBe(referenceIdentity(c));
    expect(referenceIdentity(undefined)).toBe('');
  });
});
