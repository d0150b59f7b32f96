import { describe, expect, it } from 'vitest';
import { matchesFormat } from './formats.ts';
import { compilePattern } from './pattern.ts';

describe('compilePattern', () => {
  it('translates the RE2 spellings CRDs use', () => {
    const cases: [string, string, boolean][] = [
      ['(?i)^abc$', 'ABC', true],
      ['\\Aab\\z', 'ab', true],
      ['\\Aab\\z', 'ab\n', false],
      ['^[[:alpha:]]+$', 'abc', true],
      ['^\\pL+$', 'héllo', true],
      ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', 'my-name', true],
    ];
    for (const [pattern, text, expected] of cases) {
      const re = compilePattern(pattern);
      expect(re).toBeInstanceOf(RegExp);
      expect((re as RegExp).test(text)).toBe(expected);
    }
  });

  it('rejects what RE2 rejects and what does not parse', () => {
    expect(compilePattern('(?=a)b')).toBeInstanceOf(Error);
    expect(compilePattern('(a)\\1')).toBeInstanceOf(Error);
    expect(compilePattern('[a-')).toBeInstanceOf(Error);
  });
});

describe('formats', () => {
  it('validates the string formats kube supports', () => {
    const accepted: [string, string][] = [
      ['date-time', '2026-01-02T03:04:05Z'],
      ['date-time', '2026-01-02t03:04:05.123+01:00'],
      ['date', '2024-02-29'],
      ['uuid', '123e4567-e89b-12d3-a456-426614174000'],
      ['ipv4', '10.0.0.1'],
      ['ipv6', '::ffff:10.0.0.1'],
      ['cidr', '10.0.0.0/8'],
      ['hostname', 'www.example.com'],
      ['byte', 'aGVsbG8='],
      ['duration', '1h30m'],
      ['mac', '00:1a:2b:3c:4d:5e'],
      ['isbn10', '0321751043'],
      ['email', 'ops@example.com'],
    ];
    for (const [format, text] of accepted)
      expect(matchesFormat(format, text), `${format} ${text}`).toBe(true);
    const refused: [string, string][] = [
      ['date-time', '2026-01-02'],
      ['date', '2023-02-29'],
      ['uuid', 'nope'],
      ['ipv4', '10.0.0.256'],
      ['cidr', '10.0.0.0/33'],
      ['hostname', 'a b'],
      ['byte', 'abc'],
      ['duration', 'soon'],
    ];
    for (const [format, text] of refused)
      expect(matchesFormat(format, text), `${format} ${text}`).toBe(false);
  });
});
