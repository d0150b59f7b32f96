import { describe, expect, it, vi } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { EventHandler, RequestQueue } from '../handler/index.ts';
import { withPredicates } from './with-predicates.ts';

const queue: RequestQueue<number> = { add: () => {}, addAfter: () => {} };

describe('withPredicates', () => {
  it('an event every predicate passes reaches the handler with the same queue', () => {
    const handle = vi.fn();
    const handler = withPredicates<number, number>(
      { handle },
      () => true,
      (e) => e.object > 0,
    );
    handler.handle({ type: 'create', object: 1 }, queue);
    expect(handle).toHaveBeenCalledWith({ type: 'create', object: 1 }, queue);
  });

  it('an event one predicate filters never reaches the handler', () => {
    const handle = vi.fn();
    const handler = withPredicates<number, number>(
      { handle },
      () => true,
      (e) => e.object > 5,
    );
    handler.handle({ type: 'create', object: 1 }, queue);
    expect(handle).not.toHaveBeenCalled();
  });

  it('without predicates the handler is returned unchanged', () => {
    const inner: EventHandler<number, number> = { handle: () => {} };
    expect(withPredicates(inner)).toBe(inner);
  });

  it('a handler without handle() or a predicate that is not a function is rejected with an OptionsError', () => {
    expect(() => withPredicates({} as never)).toThrow(OptionsError);
    expect(() => withPredicates({ handle: () => {} }, 'x' as never)).toThrow(OptionsError);
  });
});
