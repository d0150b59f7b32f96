import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { enqueueForObject } from '../handler/index.ts';
import type { ObjectKey, UnstructuredObject } from '../object/index.ts';
import { generationChanged } from '../predicate/index.ts';
import { Priority, WorkQueue } from '../workqueue/index.ts';
import { fromEventSource } from './from-event-source.ts';
import { Poller } from './poller.ts';

const vm = (name: string, generation: number, status = 'ok'): UnstructuredObject => ({
  metadata: { name, namespace: 'vms', generation },
  status,
});

describe('a Poller through fromEventSource into a work queue', () => {
  it('the initial list is queued at low priority before sync, and later changes pass the predicates', async () => {
    const clock = new VirtualClock();
    const results: UnstructuredObject[][] = [
      [vm('a', 1), vm('b', 1)],
      [vm('a', 1, 'degraded'), vm('b', 2)],
    ];
    let call = 0;
    const poller = new Poller<UnstructuredObject>({
      list: async () => results[Math.min(call++, results.length - 1)] as UnstructuredObject[],
      keyOf: (o) => o.metadata.name ?? '',
      intervalMs: 1000,
      jitterFactor: 0,
      clock,
    });
    const seen: { key: ObjectKey; priority: number | undefined }[] = [];
    const queue = new WorkQueue<ObjectKey>({ clock });
    const recording = {
      add: (key: ObjectKey, options?: { priority?: number }) => {
        seen.push({ key, priority: options?.priority });
        queue.add(key, options);
      },
      addAfter: queue.addAfter.bind(queue),
    };
    const source = fromEventSource(poller, enqueueForObject<UnstructuredObject>(), generationChanged());
    const stop = new AbortController();
    const run = source.start(stop.signal, recording);
    await source.waitForSync(stop.signal);
    expect(seen).toEqual([
      { key: { namespace: 'vms', name: 'a' }, priority: Priority.low },
      { key: { namespace: 'vms', name: 'b' }, priority: Priority.low },
    ]);
    expect(queue.length).toBe(2);

    await clock.advance(1000);
    // 'a' changed only its status (same generation): filtered. 'b' got a new generation.
    expect(seen.slice(2)).toEqual([{ key: { namespace: 'vms', name: 'b' }, priority: undefined }]);
    expect(source.stats()).toMatchObject({ events: 4, filtered: 1, handled: 3 });
    stop.abort();
    await run;
  });
});
