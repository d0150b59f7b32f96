import { describe, expect, it } from 'vitest';
import { goFloat, goJson, goNumber } from './go-format.ts';
import { formatLabelSelector, formatLabels, selectorString } from './selectors.ts';

describe('Go value printing', () => {
  it.each([
    [0.25, '0.25'],
    [123456.5, '123456.5'],
    [1234567.5, '1.2345675e+06'],
    [1e6, '1e+06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [-2.5, '-2.5'],
    [1e21, '1e+21'],
    [1.5e300, '1.5e+300'],
  ])('fmt.Sprint(float64(%d)) is %s', (value, text) => {
    expect(goFloat(value)).toBe(text);
  });

  it('prints integral JSON numbers as int64', () => {
    expect(goNumber(3)).toBe('3');
    expect(goNumber(-7)).toBe('-7');
    expect(goNumber(2 ** 60)).toBe('1152921504606846976');
    expect(goNumber(2 ** 64)).toBe('1.8446744073709552e+19');
  });

  it('marshals JSON as Go does: sorted by UTF-8 bytes, HTML characters escaped', () => {
    expect(goJson({ b: [1, { y: 'x', x: '<a&b>' }], a: null })).toBe(
      '{"a":null,"b":[1,{"x":"\\u003ca\\u0026b\\u003e","y":"x"}]}',
    );
    expect(goJson({ '\u{1F600}': 1, '\uFF21': 2 })).toBe('{"\uFF21":2,"\u{1F600}":1}');
    expect(goJson('line\u2028sep')).toBe('"line\\u2028sep"');
  });
});

describe('label printing', () => {
  it('formats label maps sorted, <none> when empty', () => {
    expect(formatLabels({ tier: 'web', app: 'shop', 'app.kubernetes.io/name': 'x' })).toBe(
      'app=shop,app.kubernetes.io/name=x,tier=web',
    );
    expect(formatLabels({})).toBe('<none>');
    expect(formatLabels(undefined)).toBe('<none>');
  });

  it('formats label selectors as their string form, sorted by key', () => {
    expect(
      selectorString({
        matchLabels: { z: '1' },
        matchExpressions: [
          { key: 'env', operator: 'NotIn', values: ['prod', 'dev'] },
          { key: 'canary', operator: 'DoesNotExist' },
          { key: 'b', operator: 'Exists', values: [] },
        ],
      }),
    ).toBe('b,!canary,env notin (dev,prod),z=1');
    expect(selectorString(null)).toBe('');
    expect(formatLabelSelector({})).toBe('<none>');
  });

  it('treats invalid selectors as errors', () => {
    expect(selectorString({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toBeUndefined();
    expect(
      selectorString({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
    ).toBeUndefined();
    expect(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] })).toBe(
      '<error>',
    );
  });
});
