import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { ObjectKey } from '../object/index.ts';
import { Priority } from '../workqueue/index.ts';
import { enqueueFromMapFunction } from './enqueue-from-map-function.ts';
import type { RequestQueue } from './handler.ts';

interface Route {
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly parents: readonly string[];
}

const route = (parents: string[]): Route => ({ metadata: { name: 'r', namespace: 'ns' }, parents });
const toParents = (r: Route): ObjectKey[] =>
  r.parents.map((name) => ({ namespace: r.metadata.namespace, name }));

function recorder<R>(): { adds: { request: R; priority: number | undefined }[]; queue: RequestQueue<R> } {
  const adds: { request: R; priority: number | undefined }[] = [];
  return {
    adds,
    queue: {
      add: (request, options) => adds.push({ request, priority: options?.priority }),
      addAfter: () => expect.fail('handlers never delay'),
    },
  };
}

describe('enqueueFromMapFunction', () => {
  it('a create enqueues every request the map function returns, in order', () => {
    const { adds, queue } = recorder<ObjectKey>();
    enqueueFromMapFunction(toParents).handle({ type: 'create', object: route(['a', 'b']) }, queue);
    expect(adds.map((a) => a.request)).toEqual([
      { namespace: 'ns', name: 'a' },
      { namespace: 'ns', name: 'b' },
    ]);
  });

  it('an update enqueues the union of the old and new mappings, each request once', () => {
    const { adds, queue } = recorder<ObjectKey>();
    enqueueFromMapFunction(toParents).handle(
      { type: 'update', oldObject: route(['a', 'b']), object: route(['b', 'c']) },
      queue,
    );
    expect(adds.map((a) => a.request.name)).toEqual(['a', 'b', 'c']);
  });

  it('requests that differ only in property order count as the same request', () => {
    const { adds, queue } = recorder<ObjectKey>();
    const map = (): ObjectKey[] => [
      { namespace: 'ns', name: 'x' },
      { name: 'x', namespace: 'ns' },
    ];
    enqueueFromMapFunction(map).handle({ type: 'generic', object: route([]) }, queue);
    expect(adds).toHaveLength(1);
  });

  it('duplicates within one mapping are enqueued once', () => {
    const { adds, queue } = recorder<string>();
    enqueueFromMapFunction((r: Route) => [...r.parents, ...r.parents]).handle(
      { type: 'create', object: route(['a', 'a', 'b']) },
      queue,
    );
    expect(adds.map((a) => a.request)).toEqual(['a', 'b']);
  });

  it('a custom keyOf decides which requests are the same', () => {
    const { adds, queue } = recorder<{ id: string; attempt: number }>();
    enqueueFromMapFunction(
      () => [
        { id: 'a', attempt: 1 },
        { id: 'a', attempt: 2 },
      ],
      { keyOf: (r) => r.id },
    ).handle({ type: 'create', object: route([]) }, queue);
    expect(adds.map((a) => a.request)).toEqual([{ id: 'a', attempt: 1 }]);
  });

  it('deletes, tombstones included, map the last known state', () => {
    const { adds, queue } = recorder<string>();
    const handler = enqueueFromMapFunction((r: Route) => r.parents);
    handler.handle({ type: 'delete', object: route(['a']) }, queue);
    handler.handle({ type: 'delete', object: route(['b']), finalStateUnknown: true }, queue);
    expect(adds.map((a) => a.request)).toEqual(['a', 'b']);
  });

  it('an empty mapping enqueues nothing', () => {
    const { adds, queue } = recorder<string>();
    enqueueFromMapFunction(() => []).handle({ type: 'create', object: route(['a']) }, queue);
    expect(adds).toEqual([]);
  });

  it('initial-list creates get low priority unless a priority option is given', () => {
    const low = recorder<string>();
    enqueueFromMapFunction(() => ['a']).handle(
      { type: 'create', object: route([]), isInInitialList: true },
      low.queue,
    );
    const fixed = recorder<string>();
    enqueueFromMapFunction(() => ['a'], { priority: 7 }).handle(
      { type: 'update', oldObject: route([]), object: route([]), isResync: true },
      fixed.queue,
    );
    expect(low.adds[0]?.priority).toBe(Priority.low);
    expect(fixed.adds[0]?.priority).toBe(7);
  });

  it('a map function that throws propagates to the caller', () => {
    const { queue } = recorder<string>();
    const handler = enqueueFromMapFunction<Route, string>(() => {
      throw new Error('boom');
    });
    expect(() => handler.handle({ type: 'create', object: route([]) }, queue)).toThrow('boom');
  });

  it('a map that is not a function, a bad keyOf or a bad priority is rejected with an OptionsError', () => {
    expect(() => enqueueFromMapFunction('x' as never)).toThrow(OptionsError);
    expect(() => enqueueFromMapFunction(() => [], { keyOf: 3 as never })).toThrow(OptionsError);
    expect(() => enqueueFromMapFunction(() => [], { priority: Number.NaN })).toThrow(OptionsError);
  });
});
