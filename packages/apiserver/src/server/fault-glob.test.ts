import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob } from './fault-glob.ts';

/** The glob semantics as a RegExp (what globs compiled to before): the reference on short inputs. */
function referenceRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (i === glob.length - 1 && out.endsWith('/')) out = `${out.slice(0, -1)}(?:/.*)?`;
      else out += '.*';
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

describe('fault path globs', () => {
  it('match exactly as the glob semantics say, on every glob and path over a small alphabet', () => {
    const glob = fc
      .array(fc.constantFrom('/', 'a', 'b', '*', '**', '?', '.'), { maxLength: 8 })
      .map((parts) => `/${parts.join('')}`);
    const path = fc.array(fc.constantFrom('/', 'a', 'b', '.'), { maxLength: 10 }).map((p) => p.join(''));
    fc.assert(
      fc.property(glob, path, (g, p) => {
        expect(compileGlob(g).test(p), `${g} ~ ${p}`).toBe(referenceRegExp(g).test(p));
      }),
      { numRuns: 5_000 },
    );
  });

  it('match a hostile glob against a long path in linear time (no backtracking: this returns at all)', () => {
    // As a RegExp this is ~n^60 backtracking steps; as an automaton, 60 states over 20 000 characters.
    const hostile = compileGlob(`/${'*a'.repeat(60)}*b`);
    expect(hostile.test(`/${'a'.repeat(20_000)}`)).toBe(false);
    expect(hostile.test(`/${'a'.repeat(20_000)}b`)).toBe(true);
    const deep = compileGlob(`${'**/'.repeat(60)}x`);
    expect(deep.test(`/${'a/'.repeat(5_000)}y`)).toBe(false);
  });

  it('keeps the trailing /** optional and literal characters literal', () => {
    expect(compileGlob('/api/**').test('/api')).toBe(true);
    expect(compileGlob('/api/**').test('/api/v1/x')).toBe(true);
    expect(compileGlob('/api/**').test('/apis')).toBe(false);
    expect(compileGlob('/a+(b)').test('/a+(b)')).toBe(true);
    expect(compileGlob('/a.b').test('/aXb')).toBe(false);
  });
});
