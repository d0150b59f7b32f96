import { describe, expect, it, vi } from 'vitest';
import { OptionsError } from '../errors.ts';
import { Priority } from '../workqueue/index.ts';
import type { RequestQueue } from './handler.ts';
import { handlerFuncs } from './handler-funcs.ts';

function recorder(): { adds: [string, number | undefined, string][]; queue: RequestQueue<string> } {
  const adds: [string, number | undefined, string][] = [];
  return {
    adds,
    queue: {
      add: (request, options) => adds.push([request, options?.priority, 'add']),
      addAfter: (request, _delay, options) => adds.push([request, options?.priority, 'addAfter']),
    },
  };
}

describe('handlerFuncs', () => {
  it('each event type goes to its own callback with the narrowed event', () => {
    const { adds, queue } = recorder();
    const handler = handlerFuncs<string, string>({
      create: (e, q) => q.add(`create:${e.object}`),
      update: (e, q) => q.add(`update:${e.oldObject}->${e.object}`),
      delete: (e, q) => q.add(`delete:${e.object}:${e.finalStateUnknown === true}`),
      generic: (e, q) => q.add(`generic:${e.object}`),
    });
    handler.handle({ type: 'create', object: 'a' }, queue);
    handler.handle({ type: 'update', oldObject: 'a', object: 'b' }, queue);
    handler.handle({ type: 'delete', object: 'b', finalStateUnknown: true }, queue);
    handler.handle({ type: 'generic', object: 'c' }, queue);
    expect(adds.map((a) => a[0])).toEqual(['create:a', 'update:a->b', 'delete:b:true', 'generic:c']);
  });

  it('event types without a callback are ignored', () => {
    const create = vi.fn();
    const { adds, queue } = recorder();
    const handler = handlerFuncs<string, string>({ create });
    handler.handle({ type: 'update', oldObject: 'a', object: 'b' }, queue);
    handler.handle({ type: 'delete', object: 'b' }, queue);
    handler.handle({ type: 'generic', object: 'b' }, queue);
    expect(create).not.toHaveBeenCalled();
    expect(adds).toEqual([]);
  });

  it('for initial-list creates and resync updates, adds without a priority default to low', () => {
    const { adds, queue } = recorder();
    const handler = handlerFuncs<string, string>({
      create: (e, q) => q.add(e.object),
      update: (e, q) => q.addAfter(e.object, 10),
    });
    handler.handle({ type: 'create', object: 'initial', isInInitialList: true }, queue);
    handler.handle({ type: 'update', oldObject: 'x', object: 'resync', isResync: true }, queue);
    handler.handle({ type: 'create', object: 'fresh' }, queue);
    expect(adds).toEqual([
      ['initial', Priority.low, 'add'],
      ['resync', Priority.low, 'addAfter'],
      ['fresh', undefined, 'add'],
    ]);
  });

  it('a priority the callback passes wins over the low default', () => {
    const { adds, queue } = recorder();
    handlerFuncs<string, string>({ create: (e, q) => q.add(e.object, { priority: Priority.high }) }).handle(
      { type: 'create', object: 'a', isInInitialList: true },
      queue,
    );
    expect(adds).toEqual([['a', Priority.high, 'add']]);
  });

  it('a callback that is not a function, or no object at all, is rejected with an OptionsError', () => {
    expect(() => handlerFuncs({ create: 'nope' as never })).toThrow(OptionsError);
    expect(() => handlerFuncs({ generic: 1 as never })).toThrow(OptionsError);
    expect(() => handlerFuncs(null as never)).toThrow(OptionsError);
  });
});
