import { describe, expect, it, vi } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { and, not, or } from './combinators.ts';
import type { Predicate } from './predicate.ts';

const event: ObjectEvent<number> = { type: 'generic', object: 1 };
const yes: Predicate<number> = () => true;
const no: Predicate<number> = () => false;

describe('and', () => {
  it('passes only when every predicate passes', () => {
    expect(and(yes, yes)(event)).toBe(true);
    expect(and(yes, no)(event)).toBe(false);
  });

  it('with no predicate, passes everything', () => {
    expect(and<number>()(event)).toBe(true);
  });

  it('stops at the first predicate that fails', () => {
    const later = vi.fn(yes);
    and(no, later)(event);
    expect(later).not.toHaveBeenCalled();
  });
});

describe('or', () => {
  it('passes when at least one predicate passes', () => {
    expect(or(no, yes)(event)).toBe(true);
    expect(or(no, no)(event)).toBe(false);
  });

  it('with no predicate, passes nothing', () => {
    expect(or<number>()(event)).toBe(false);
  });

  it('stops at the first predicate that passes', () => {
    const later = vi.fn(no);
    or(yes, later)(event);
    expect(later).not.toHaveBeenCalled();
  });
});

describe('not', () => {
  it('inverts the predicate', () => {
    expect(not(yes)(event)).toBe(false);
    expect(not(no)(event)).toBe(true);
  });

  it('the predicates are evaluated against the event they are given', () => {
    const odd: Predicate<number> = (e) => e.object % 2 === 1;
    expect(not(odd)({ type: 'create', object: 2 })).toBe(true);
    expect(and(odd, not(odd))({ type: 'create', object: 3 })).toBe(false);
  });
});

describe('combinator arguments', () => {
  it('an argument that is not a function is rejected with an OptionsError', () => {
    expect(() => and(yes, 'x' as never)).toThrow(OptionsError);
    expect(() => or(undefined as never)).toThrow(OptionsError);
    expect(() => not({} as never)).toThrow(OptionsError);
  });
});
