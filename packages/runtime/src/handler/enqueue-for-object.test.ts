import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import type { KubeObject, ObjectKey, ObjectMeta } from '../object/index.ts';
import { Priority, WorkQueue } from '../workqueue/index.ts';
import { enqueueForObject } from './enqueue-for-object.ts';
import type { RequestQueue } from './handler.ts';

interface Widget {
  readonly apiVersion: 'example.com/v1';
  readonly kind: 'Widget';
  readonly metadata: ObjectMeta;
}

const widget = (name: string, namespace?: string): Widget => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: namespace === undefined ? { name } : { name, namespace },
});

function recorder(): {
  adds: { request: ObjectKey; priority: number | undefined }[];
  queue: RequestQueue<ObjectKey>;
} {
  const adds: { request: ObjectKey; priority: number | undefined }[] = [];
  return {
    adds,
    queue: {
      add: (request, options) => adds.push({ request, priority: options?.priority }),
      addAfter: () => expect.fail('handlers never delay'),
    },
  };
}

describe('enqueueForObject', () => {
  it('a create enqueues the namespace and name of the object', () => {
    const { adds, queue } = recorder();
    enqueueForObject<Widget>().handle({ type: 'create', object: widget('web', 'default') }, queue);
    expect(adds).toEqual([{ request: { namespace: 'default', name: 'web' }, priority: undefined }]);
  });

  it('a cluster-scoped object is enqueued with the empty namespace', () => {
    const { adds, queue } = recorder();
    enqueueForObject<Widget>().handle({ type: 'generic', object: widget('node-1') }, queue);
    expect(adds.map((a) => a.request)).toEqual([{ namespace: '', name: 'node-1' }]);
  });

  it('an update enqueues the key of the new object', () => {
    const { adds, queue } = recorder();
    enqueueForObject<Widget>().handle(
      { type: 'update', oldObject: widget('old', 'a'), object: widget('new', 'b') },
      queue,
    );
    expect(adds.map((a) => a.request)).toEqual([{ namespace: 'b', name: 'new' }]);
  });

  it('a delete enqueues the key, and so does a tombstone whose final state is unknown', () => {
    const { adds, queue } = recorder();
    const handler = enqueueForObject<Widget>();
    handler.handle({ type: 'delete', object: widget('gone', 'ns') }, queue);
    handler.handle({ type: 'delete', object: widget('missed', 'ns'), finalStateUnknown: true }, queue);
    expect(adds.map((a) => a.request)).toEqual([
      { namespace: 'ns', name: 'gone' },
      { namespace: 'ns', name: 'missed' },
    ]);
  });

  it('initial-list creates and resync updates are added at low priority, other events at the default', () => {
    const { adds, queue } = recorder();
    const handler = enqueueForObject<Widget>();
    const w = widget('web', 'default');
    handler.handle({ type: 'create', object: w, isInInitialList: true }, queue);
    handler.handle({ type: 'update', oldObject: w, object: w, isResync: true }, queue);
    handler.handle({ type: 'create', object: w }, queue);
    handler.handle({ type: 'update', oldObject: w, object: w }, queue);
    expect(adds.map((a) => a.priority)).toEqual([Priority.low, Priority.low, undefined, undefined]);
  });

  it('a priority option applies to every event, initial-list creates included', () => {
    const { adds, queue } = recorder();
    const handler = enqueueForObject<Widget>({ priority: Priority.high });
    const w = widget('web', 'default');
    handler.handle({ type: 'create', object: w, isInInitialList: true }, queue);
    handler.handle({ type: 'delete', object: w }, queue);
    expect(adds.map((a) => a.priority)).toEqual([Priority.high, Priority.high]);
  });

  it('keys from many events for one object are deduplicated by a real work queue', async () => {
    const queue = new WorkQueue<ObjectKey>();
    const handler = enqueueForObject<KubeObject>();
    const w = { metadata: { name: 'web', namespace: 'default' } };
    handler.handle({ type: 'create', object: w }, queue);
    handler.handle({ type: 'update', oldObject: w, object: w }, queue);
    expect(queue.length).toBe(1);
    expect(await queue.get(new AbortController().signal)).toEqual({ namespace: 'default', name: 'web' });
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number])(
    'a priority of %s is rejected with an OptionsError',
    (priority) => {
      expect(() => enqueueForObject({ priority })).toThrow(OptionsError);
    },
  );
});
