import { describe, expect, it, vi } from 'vitest';
import { flushMicrotasks } from '../clock/virtual-clock.ts';
import { AbortedError, ErrorCodes, OptionsError } from '../errors.ts';
import type { EventSource, ObjectEvent } from '../event/index.ts';
import type { EventHandler, RequestQueue } from '../handler/index.ts';
import { MemoryLogger } from '../log/index.ts';
import { EventChannel } from './event-channel.ts';
import { fromEventSource } from './from-event-source.ts';

const toQueue: EventHandler<string, string> = { handle: (e, q) => q.add(e.object) };

function recorder(): { added: string[]; queue: RequestQueue<string> } {
  const added: string[] = [];
  return { added, queue: { add: (r) => added.push(r), addAfter: () => {} } };
}

async function state(promise: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  let result: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => {
      result = 'resolved';
    },
    () => {
      result = 'rejected';
    },
  );
  await flushMicrotasks();
  return result;
}

/** An event source that emits its initial list from start(), then syncs. */
class ListingSource implements EventSource<string> {
  readonly channel = new EventChannel<string>({ synced: false });
  readonly start = vi.fn(async (signal: AbortSignal): Promise<void> => {
    for (const item of this.items) this.channel.create(item, { isInInitialList: true });
    this.channel.markSynced();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
  });
  readonly items: string[];
  constructor(items: string[]) {
    this.items = items;
  }
  subscribe(listener: (event: ObjectEvent<string>) => void): () => void {
    return this.channel.subscribe(listener);
  }
  waitForSync(signal: AbortSignal): Promise<void> {
    return this.channel.waitForSync(signal);
  }
}

describe('fromEventSource', () => {
  it('events pass through the predicates to the handler, which adds to the queue', async () => {
    const channel = new EventChannel<string>();
    const source = fromEventSource(channel, toQueue, (e) => e.object !== 'skip');
    const { added, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    channel.generic('a');
    channel.generic('skip');
    channel.create('b');
    expect(added).toEqual(['a', 'b']);
    expect(source.stats()).toEqual({ events: 3, filtered: 1, handled: 2, errors: 0 });
    stop.abort();
    await run;
  });

  it('subscribes before starting the event source, so the initial list is queued and then synced', async () => {
    const listing = new ListingSource(['a', 'b']);
    const source = fromEventSource(listing, toQueue);
    const { added, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    await source.waitForSync(stop.signal);
    expect(added).toEqual(['a', 'b']);
    expect(listing.start).toHaveBeenCalledWith(stop.signal);
    stop.abort();
    await run;
  });

  it('does not start a shared event source when startEventSource is false', async () => {
    const listing = new ListingSource(['a']);
    const source = fromEventSource({ eventSource: listing, handler: toQueue, startEventSource: false });
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    expect(listing.start).not.toHaveBeenCalled();
    stop.abort();
    await run;
  });

  it('runs until its signal aborts, then unsubscribes and ignores later events', async () => {
    const channel = new EventChannel<string>();
    const source = fromEventSource(channel, toQueue);
    const { added, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    expect(channel.listenerCount).toBe(1);
    expect(await state(run)).toBe('pending');
    stop.abort();
    await run;
    expect(channel.listenerCount).toBe(0);
    channel.generic('late');
    expect(added).toEqual([]);
  });

  it('a rejection of the event source’s start before the signal aborts fails the source and unsubscribes', async () => {
    const channel = new EventChannel<string>();
    const failure = new Error('watch broke');
    const broken: EventSource<string> = {
      subscribe: (l) => channel.subscribe(l),
      start: () => Promise.reject(failure),
    };
    const source = fromEventSource(broken, toQueue);
    await expect(source.start(new AbortController().signal, recorder().queue)).rejects.toBe(failure);
    expect(channel.listenerCount).toBe(0);
  });

  it('a rejection of the event source’s start caused by the abort is not a failure', async () => {
    const channel = new EventChannel<string>();
    const aborting: EventSource<string> = {
      subscribe: (l) => channel.subscribe(l),
      start: (signal) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new AbortedError()))),
    };
    const stop = new AbortController();
    const run = fromEventSource(aborting, toQueue).start(stop.signal, recorder().queue);
    stop.abort();
    await expect(run).resolves.toBeUndefined();
  });

  it('waitForSync waits for start, then for the event source to sync', async () => {
    const channel = new EventChannel<string>({ synced: false });
    const source = fromEventSource(channel, toQueue);
    const stop = new AbortController();
    const synced = source.waitForSync(stop.signal);
    channel.markSynced();
    expect(await state(synced)).toBe('pending');
    const run = source.start(stop.signal, recorder().queue);
    expect(await state(synced)).toBe('resolved');
    stop.abort();
    await run;
  });

  it('waitForSync resolves once started when the event source cannot tell', async () => {
    const channel = new EventChannel<string>();
    const bare: EventSource<string> = { subscribe: (l) => channel.subscribe(l) };
    const source = fromEventSource(bare, toQueue);
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    await expect(source.waitForSync(stop.signal)).resolves.toBeUndefined();
    stop.abort();
    await run;
  });

  it('waitForSync rejects with an AbortedError when its signal aborts first', async () => {
    const source = fromEventSource(new EventChannel<string>(), toQueue);
    await expect(source.waitForSync(AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
  });

  it('a throwing handler is counted, logged and reported, and later events are still handled', async () => {
    const channel = new EventChannel<string>();
    const logger = new MemoryLogger();
    const onError = vi.fn();
    const boom = new Error('boom');
    const handler: EventHandler<string, string> = {
      handle: (e, q) => {
        if (e.object === 'bad') throw boom;
        q.add(e.object);
      },
    };
    const source = fromEventSource({ eventSource: channel, handler, onError, logger, name: 'widgets' });
    const { added, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    channel.generic('bad');
    channel.generic('good');
    expect(added).toEqual(['good']);
    expect(source.stats()).toEqual({ events: 2, filtered: 0, handled: 1, errors: 1 });
    expect(onError).toHaveBeenCalledWith(boom, { type: 'generic', object: 'bad' });
    expect(logger.records).toContainEqual({
      level: 'error',
      message: 'Event handler failed',
      fields: { source: 'widgets', eventType: 'generic', err: boom },
    });
    stop.abort();
    await run;
  });

  it('a throwing predicate drops the event, is counted and reported, and never reaches the handler', async () => {
    const channel = new EventChannel<string>();
    const logger = new MemoryLogger();
    const onError = vi.fn();
    const handle = vi.fn();
    const source = fromEventSource<string, string>({
      eventSource: channel,
      handler: { handle },
      predicates: [
        () => {
          throw new Error('predicate broke');
        },
      ],
      onError,
      logger,
    });
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    channel.generic('a');
    expect(handle).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledOnce();
    expect(source.stats().errors).toBe(1);
    expect(logger.records.map((r) => r.message)).toEqual(['Event predicate failed']);
    stop.abort();
    await run;
  });

  it('an onError that throws is logged and swallowed', async () => {
    const channel = new EventChannel<string>();
    const logger = new MemoryLogger();
    const source = fromEventSource<string, string>({
      eventSource: channel,
      handler: {
        handle: () => {
          throw new Error('boom');
        },
      },
      onError: () => {
        throw new Error('hook broke');
      },
      logger,
    });
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    expect(() => channel.generic('a')).not.toThrow();
    expect(logger.records.map((r) => r.message)).toEqual(['Event handler failed', 'onError failed']);
    stop.abort();
    await run;
  });

  it('a source started with an aborted signal resolves without subscribing', async () => {
    const channel = new EventChannel<string>();
    await fromEventSource(channel, toQueue).start(AbortSignal.abort(), recorder().queue);
    expect(channel.listenerCount).toBe(0);
  });

  it('a second start rejects with the already-started code', async () => {
    const source = fromEventSource(new EventChannel<string>(), toQueue);
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    await expect(source.start(stop.signal, recorder().queue)).rejects.toMatchObject({
      code: ErrorCodes.LIFECYCLE_ALREADY_STARTED,
    });
    stop.abort();
    await run;
  });

  it('the name defaults to "events" and can be set', () => {
    expect(fromEventSource(new EventChannel<string>(), toQueue).name).toBe('events');
    expect(
      fromEventSource({ eventSource: new EventChannel<string>(), handler: toQueue, name: 'vms' }).name,
    ).toBe('vms');
  });

  it.each<[string, () => unknown]>([
    ['an event source without subscribe', () => fromEventSource({} as never, toQueue)],
    ['a handler without handle', () => fromEventSource(new EventChannel<string>(), {} as never)],
    [
      'a predicate that is not a function',
      () => fromEventSource(new EventChannel<string>(), toQueue, 'x' as never),
    ],
    [
      'predicates that are not an array',
      () =>
        fromEventSource({
          eventSource: new EventChannel<string>(),
          handler: toQueue,
          predicates: 'x' as never,
        }),
    ],
    [
      'an empty name',
      () => fromEventSource({ eventSource: new EventChannel<string>(), handler: toQueue, name: '' }),
    ],
    [
      'a non-function onError',
      () =>
        fromEventSource({ eventSource: new EventChannel<string>(), handler: toQueue, onError: 1 as never }),
    ],
    [
      'a non-boolean startEventSource',
      () =>
        fromEventSource({
          eventSource: new EventChannel<string>(),
          handler: toQueue,
          startEventSource: 0 as never,
        }),
    ],
    [
      'a logger without methods',
      () =>
        fromEventSource({ eventSource: new EventChannel<string>(), handler: toQueue, logger: {} as never }),
    ],
  ])('%s is rejected with an OptionsError', (_, make) => {
    expect(make).toThrow(OptionsError);
  });
});
