import { describe, expect, it } from 'vitest';
import { celValue } from '../admission/cel-inputs.ts';
import { podSpecUpdateCauses } from './pod-update.ts';

// JSON.parse makes `__proto__` an own property; code that copies objects key by key with plain
// assignment turns it into the copy's prototype instead, and the field silently disappears.
describe('a `__proto__` key in a decoded body is data', () => {
  const spec = (selector: string) =>
    JSON.parse(`{"containers":[{"name":"app","image":"nginx"}],"nodeSelector":${selector}}`) as Record<
      string,
      unknown
    >;

  it('a Pod update that changes only the value under a `__proto__` key is still a change', () => {
    const causes = podSpecUpdateCauses(spec('{"__proto__":{"a":"1"}}'), spec('{"__proto__":{"a":"2"}}'));
    expect(causes.map((c) => c.field)).toEqual(['spec']);
    expect(podSpecUpdateCauses(spec('{"__proto__":{"a":"1"}}'), spec('{"__proto__":{"a":"1"}}'))).toEqual([]);
  });

  it('CEL inputs keep a `__proto__` key as an own field and the plain prototype', () => {
    const value = celValue(JSON.parse('{"__proto__":{"n":1},"m":2}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.entries(value)).toEqual([
      ['__proto__', { n: 1n }],
      ['m', 2n],
    ]);
  });
});
