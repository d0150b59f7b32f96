import { describe, expect, it } from 'vitest';
import { Priority } from '../workqueue/index.ts';
import type { RequestQueue } from './handler.ts';
import { eventPriority, withDefaultPriority } from './priority.ts';

describe('eventPriority', () => {
  it('is low for initial-list creates and resync updates, and undefined for everything else', () => {
    expect(eventPriority({ type: 'create', object: 1, isInInitialList: true })).toBe(Priority.low);
    expect(eventPriority({ type: 'update', oldObject: 1, object: 1, isResync: true })).toBe(Priority.low);
    expect(eventPriority({ type: 'create', object: 1, isInInitialList: false })).toBeUndefined();
    expect(eventPriority({ type: 'update', oldObject: 1, object: 2 })).toBeUndefined();
    expect(eventPriority({ type: 'delete', object: 1, finalStateUnknown: true })).toBeUndefined();
    expect(eventPriority({ type: 'generic', object: 1 })).toBeUndefined();
  });
});

describe('withDefaultPriority', () => {
  const calls: unknown[][] = [];
  const queue: RequestQueue<string> = {
    add: (...args) => calls.push(['add', ...args]),
    addAfter: (...args) => calls.push(['addAfter', ...args]),
  };

  it('fills in the priority of adds that have none and keeps other options', () => {
    calls.length = 0;
    const q = withDefaultPriority(queue, -5);
    q.add('a');
    q.addAfter('b', 10, { hold: true });
    expect(calls).toEqual([
      ['add', 'a', { priority: -5 }],
      ['addAfter', 'b', 10, { hold: true, priority: -5 }],
    ]);
  });

  it('keeps a priority given by the caller', () => {
    calls.length = 0;
    withDefaultPriority(queue, -5).add('a', { priority: 3 });
    expect(calls).toEqual([['add', 'a', { priority: 3 }]]);
  });

  it('returns the queue itself when there is no default', () => {
    expect(withDefaultPriority(queue, undefined)).toBe(queue);
  });
});
