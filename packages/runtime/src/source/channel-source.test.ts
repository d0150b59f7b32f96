import { describe, expect, it } from 'vitest';
import { flushMicrotasks } from '../clock/virtual-clock.ts';
import { AbortedError, ErrorCodes, OptionsError } from '../errors.ts';
import type { RequestQueue } from '../handler/index.ts';
import { MemoryLogger } from '../log/index.ts';
import { Priority, WorkQueue } from '../workqueue/index.ts';
import { ChannelSource } from './channel-source.ts';

function recorder(): { adds: [string, number | undefined][]; queue: RequestQueue<string> } {
  const adds: [string, number | undefined][] = [];
  return {
    adds,
    queue: { add: (r, o) => adds.push([r, o?.priority]), addAfter: () => expect.fail('never delayed') },
  };
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

describe('ChannelSource', () => {
  it('sends before start are buffered and added in send order, with their options, when it starts', async () => {
    const source = new ChannelSource<string>();
    source.send('a');
    source.send('b', { priority: Priority.high });
    expect(source.stats().buffered).toBe(2);
    const { adds, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    expect(adds).toEqual([
      ['a', undefined],
      ['b', Priority.high],
    ]);
    expect(source.stats()).toMatchObject({ buffered: 0, delivered: 2 });
    stop.abort();
    await run;
  });

  it('sends while running go straight to the queue', async () => {
    const source = new ChannelSource<string>();
    const { adds, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    source.send('now', { priority: 3 });
    expect(adds).toEqual([['now', 3]]);
    stop.abort();
    await run;
  });

  it('start resolves when its signal aborts, and not before', async () => {
    const source = new ChannelSource<string>();
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    expect(await state(run)).toBe('pending');
    stop.abort();
    expect(await state(run)).toBe('resolved');
  });

  it('when the buffer is full, new sends are dropped and counted, the first drop is logged, and send never throws', async () => {
    const logger = new MemoryLogger();
    const source = new ChannelSource<string>({ bufferSize: 2, logger });
    for (const r of ['a', 'b', 'c', 'd']) expect(() => source.send(r)).not.toThrow();
    expect(source.stats()).toMatchObject({ buffered: 2, droppedOverflow: 2 });
    expect(logger.records.filter((r) => r.level === 'warn')).toHaveLength(1);
    const { adds, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    expect(adds.map((a) => a[0])).toEqual(['a', 'b']);
    stop.abort();
    await run;
  });

  it('a buffer size of 0 keeps nothing before start', () => {
    const source = new ChannelSource<string>({ bufferSize: 0 });
    source.send('a');
    expect(source.stats()).toMatchObject({ buffered: 0, droppedOverflow: 1 });
  });

  it('the default buffer keeps 1024 sends', () => {
    const source = new ChannelSource<number>();
    for (let i = 0; i < 1030; i++) source.send(i);
    expect(source.stats()).toMatchObject({ buffered: 1024, droppedOverflow: 6 });
  });

  it('sends after the signal aborts are ignored and counted', async () => {
    const source = new ChannelSource<string>();
    const { adds, queue } = recorder();
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    stop.abort();
    await run;
    source.send('late');
    source.send('later');
    expect(adds).toEqual([]);
    expect(source.stats().droppedStopped).toBe(2);
  });

  it('a source started with an aborted signal adds nothing and counts its buffered sends as dropped', async () => {
    const source = new ChannelSource<string>();
    source.send('a');
    const { adds, queue } = recorder();
    await source.start(AbortSignal.abort(), queue);
    source.send('b');
    expect(adds).toEqual([]);
    expect(source.stats().droppedStopped).toBe(2);
  });

  it('is synced as soon as it has started', async () => {
    const source = new ChannelSource<string>();
    const synced = source.waitForSync(new AbortController().signal);
    expect(await state(synced)).toBe('pending');
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    expect(await state(synced)).toBe('resolved');
    stop.abort();
    await run;
  });

  it('waiting for sync rejects with an AbortedError when the waiter’s signal aborts first', async () => {
    const source = new ChannelSource<string>();
    const wait = new AbortController();
    const synced = source.waitForSync(wait.signal);
    wait.abort();
    await expect(synced).rejects.toBeInstanceOf(AbortedError);
  });

  it('a second start rejects with the already-started code', async () => {
    const source = new ChannelSource<string>();
    const stop = new AbortController();
    const run = source.start(stop.signal, recorder().queue);
    await expect(source.start(stop.signal, recorder().queue)).rejects.toMatchObject({
      code: ErrorCodes.LIFECYCLE_ALREADY_STARTED,
    });
    stop.abort();
    await run;
  });

  it('a queue whose add throws is logged and counted, and send does not throw', async () => {
    const logger = new MemoryLogger();
    const source = new ChannelSource<string>({ logger });
    const stop = new AbortController();
    const broken: RequestQueue<string> = {
      add: () => {
        throw new Error('queue broke');
      },
      addAfter: () => {},
    };
    const run = source.start(stop.signal, broken);
    expect(() => source.send('a')).not.toThrow();
    expect(source.stats().failed).toBe(1);
    expect(logger.records.some((r) => r.level === 'error')).toBe(true);
    stop.abort();
    await run;
  });

  it('feeds a real work queue, which dedupes repeated sends', async () => {
    const source = new ChannelSource<string>();
    const queue = new WorkQueue<string>();
    source.send('k');
    source.send('k');
    const stop = new AbortController();
    const run = source.start(stop.signal, queue);
    source.send('k');
    expect(queue.length).toBe(1);
    stop.abort();
    await run;
  });

  it.each<[string, object]>([
    ['a negative bufferSize', { bufferSize: -1 }],
    ['a fractional bufferSize', { bufferSize: 1.5 }],
    ['a NaN bufferSize', { bufferSize: Number.NaN }],
    ['an empty name', { name: '' }],
    ['a logger without methods', { logger: {} }],
  ])('%s is rejected with an OptionsError', (_, options) => {
    expect(() => new ChannelSource(options)).toThrow(OptionsError);
  });
});
