import { describe, expect, it } from 'vitest';
import { goFloat, goJson, goNumber, goQuote, goSyntax, goValue } from './go-format.ts';

describe('Go formatting', () => {
  it('prints floats as %v does: exponent form below 1e-4 and from 1e6', () => {
    expect([0.5, 1.5e6 + 0.5, 1e6, 123456.5, 0.0001, 0.00001, -2.5e-7, 1e21].map(goFloat)).toEqual([
      '0.5',
      '1.5000005e+06',
      '1e+06',
      '123456.5',
      '0.0001',
      '1e-05',
      '-2.5e-07',
      '1e+21',
    ]);
  });

  it('prints integral numbers below 2^63 as int64 and larger ones as float64', () => {
    expect(goNumber(2 ** 53 + 2)).toBe('9007199254740994');
    expect(goNumber(1e18)).toBe('1000000000000000000');
    expect(goNumber(1e20)).toBe('1e+20');
  });

  it('quotes strings as strconv.Quote does', () => {
    expect(goQuote('a"b\\c\n\u0001é\u2028')).toBe('"a\\"b\\\\c\\n\\x01é\\u2028"');
  });

  it('renders values with %v, %#v and json.Marshal', () => {
    const value = { b: [1, 'x'], a: null, c: 1.5 };
    expect(goValue(value)).toBe('map[a:<nil> b:[1 x] c:1.5]');
    expect(goSyntax(value)).toBe(
      'map[string]interface {}{"a":interface {}(nil), "b":[]interface {}{1, "x"}, "c":1.5}',
    );
    expect(goJson({ z: '<a&b>', a: 1 })).toBe('{"a":1,"z":"\\u003ca\\u0026b\\u003e"}');
  });
});
