import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import {
  type EventHandler,
  enqueueForObject,
  enqueueFromMapFunction,
  type RequestQueue,
} from '../handler/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import type { AddOptions, Cause } from '../workqueue/index.ts';
import { WorkQueue } from '../workqueue/index.ts';
import { ChannelSource } from './channel-source.ts';
import { EventChannel } from './event-channel.ts';
import { fromEventSource } from './from-event-source.ts';
import { Poller } from './poller.ts';

function recorder<R>(): { adds: { request: R; cause: Cause | undefined }[]; queue: RequestQueue<R> } {
  const adds: { request: R; cause: Cause | undefined }[] = [];
  const push = (request: R, options?: AddOptions): void => {
    adds.push({ request, cause: options?.cause });
  };
  return { adds, queue: { add: push, addAfter: (request, _d, options) => push(request, options) } };
}

const widget = (name: string, rv: string): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

/** Runs `source` on `queue` until the returned stop is called. */
function run<R>(
  source: { start(signal: AbortSignal, queue: RequestQueue<R>): Promise<void> },
  queue: RequestQueue<R>,
) {
  const stop = new AbortController();
  const running = source.start(stop.signal, queue);
  return async (): Promise<void> => {
    stop.abort();
    await running;
  };
}

describe('fromEventSource causes', () => {
  it("stamps the source's name on the causes of the handler's adds, one stamped cause per event", async () => {
    const events = new EventChannel<KubeObject>();
    const { adds, queue } = recorder<ObjectKey>();
    const stop = run(
      fromEventSource({ eventSource: events, handler: enqueueForObject(), name: 'widgets' }),
      queue,
    );
    events.update(widget('w', '1'), widget('w', '2'));
    await stop();
    expect(adds[0]?.cause).toEqual({
      type: 'modified',
      source: 'widgets',
      object: { kind: 'Widget', namespace: 'ns', name: 'w', resourceVersion: '2' },
    });
  });

  it('gives adds without a cause the event cause: secondary when the request is not the event object', async () => {
    const events = new EventChannel<KubeObject>();
    const handler: EventHandler<KubeObject, ObjectKey> = {
      handle: (event, q) => {
        q.add({ namespace: 'ns', name: event.object.metadata.name ?? '' });
        q.add({ namespace: 'ns', name: 'parent' });
        q.add({ namespace: 'ns', name: 'other-parent' });
      },
    };
    const { adds, queue } = recorder<ObjectKey>();
    const stop = run(fromEventSource({ eventSource: events, handler, name: 'widgets' }), queue);
    events.delete(widget('w', '3'), { finalStateUnknown: true });
    await stop();
    const object = { kind: 'Widget', namespace: 'ns', name: 'w', resourceVersion: '3' };
    expect(adds.map((a) => a.cause)).toEqual([
      { type: 'deleted', source: 'widgets', object, finalStateUnknown: true },
      { type: 'deleted', source: 'widgets', object, secondary: true, finalStateUnknown: true },
      { type: 'deleted', source: 'widgets', object, secondary: true, finalStateUnknown: true },
    ]);
    expect(adds[2]?.cause).toBe(adds[1]?.cause);
  });

  it("keeps a cause that names its source, and is named after its event source's name by default", async () => {
    const events = Object.assign(new EventChannel<string>(), { name: 'vms' });
    const mine: Cause = { type: 'generic', source: 'elsewhere' };
    const { adds, queue } = recorder<string>();
    const source = fromEventSource(events, { handle: (e, q) => q.add(e.object, { cause: mine }) });
    expect(source.name).toBe('vms');
    const stop = run(source, queue);
    events.generic('a');
    await stop();
    expect(adds[0]?.cause).toBe(mine);
  });
});

describe('ChannelSource causes', () => {
  it("a send without a cause is a manual enqueue from the channel; a cause without a source gets the channel's name", async () => {
    const channel = new ChannelSource<string>({ name: 'webhook' });
    channel.send('early');
    const { adds, queue } = recorder<string>();
    const stop = run(channel, queue);
    channel.send('late', { cause: { type: 'generic' } });
    channel.send('named', { cause: { type: 'generic', source: 'cron' } });
    await stop();
    expect(adds).toEqual([
      { request: 'early', cause: { type: 'manual', source: 'webhook' } },
      { request: 'late', cause: { type: 'generic', source: 'webhook' } },
      { request: 'named', cause: { type: 'generic', source: 'cron' } },
    ]);
  });
});

describe('Poller causes', () => {
  interface Vm {
    readonly id: string;
    readonly v: number;
  }

  it('each key is handed out with what the polls said about it: added (initial list), modified, deleted with its final state unknown, resync', async () => {
    const clock = new VirtualClock();
    const polls: Vm[][] = [
      [
        { id: 'a', v: 1 },
        { id: 'b', v: 1 },
      ],
      [
        { id: 'a', v: 2 },
        { id: 'c', v: 1 },
      ],
      [
        { id: 'a', v: 2 },
        { id: 'c', v: 1 },
      ],
    ];
    let poll = 0;
    const poller = new Poller<Vm>({
      name: 'vms',
      list: async () => polls[Math.min(poll++, polls.length - 1)] as Vm[],
      keyOf: (vm) => vm.id,
      versionOf: (vm) => String(vm.v),
      intervalMs: 1000,
      jitterFactor: 0,
      resync: true,
      clock,
    });
    const queue = new WorkQueue<string>({ clock });
    const stop = run(
      fromEventSource(
        poller,
        enqueueFromMapFunction((vm: Vm) => [vm.id], { secondary: false }),
      ),
      queue,
    );
    const take = (): [string | undefined, readonly Cause[]] => {
      const key = queue.tryGet();
      if (key === undefined) return [undefined, []];
      const { causes } = queue.causesOf(key);
      queue.done(key);
      return [key, causes];
    };
    await clock.advance(0);
    expect([take(), take()]).toEqual([
      ['a', [{ type: 'added', source: 'vms', initialList: true }]],
      ['b', [{ type: 'added', source: 'vms', initialList: true }]],
    ]);
    await clock.advance(1000);
    expect([take(), take(), take()]).toEqual([
      ['a', [{ type: 'modified', source: 'vms' }]],
      ['c', [{ type: 'added', source: 'vms' }]],
      ['b', [{ type: 'deleted', source: 'vms', finalStateUnknown: true }]],
    ]);
    await clock.advance(1000);
    expect([take(), take(), take()]).toEqual([
      ['a', [{ type: 'resync', source: 'vms' }]],
      ['c', [{ type: 'resync', source: 'vms' }]],
      [undefined, []],
    ]);
    await stop();
  });
});
