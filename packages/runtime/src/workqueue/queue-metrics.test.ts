import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { WorkQueueMetrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import { ExponentialRateLimiter } from './rate-limiter.ts';

type Call = [hook: string, queue: string, value?: number];

function recorder(): { calls: Call[]; metrics: Required<WorkQueueMetrics> } {
  const calls: Call[] = [];
  return {
    calls,
    metrics: {
      onAdd: (queue) => calls.push(['add', queue]),
      onDepth: (queue, depth) => calls.push(['depth', queue, depth]),
      onQueueLatency: (queue, ms) => calls.push(['latency', queue, ms]),
      onWorkDuration: (queue, ms) => calls.push(['work', queue, ms]),
      onRetry: (queue) => calls.push(['retry', queue]),
      onDroppedAfterShutdown: (queue) => calls.push(['dropped', queue]),
      onEventLatency: (queue, ms) => calls.push(['event', queue, ms]),
    },
  };
}

function setup(): { q: WorkQueue<string>; clock: VirtualClock; calls: Call[] } {
  const clock = new VirtualClock({ startMs: 1_000_000 });
  const { calls, metrics } = recorder();
  const q = new WorkQueue<string>({
    name: 'pods',
    clock,
    metrics,
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10 }),
  });
  return { q, clock, calls };
}

const only = (calls: Call[], hook: string): Call[] => calls.filter(([h]) => h === hook);

describe('metrics hooks', () => {
  it('onAdd fires for every accepted add, deduplicated ones and delayed keys coming due included', async () => {
    const { q, clock, calls } = setup();
    q.add('a');
    q.add('a');
    q.addAfter('b', 100);
    expect(only(calls, 'add')).toHaveLength(2);
    await clock.advance(100);
    expect(only(calls, 'add')).toEqual([
      ['add', 'pods'],
      ['add', 'pods'],
      ['add', 'pods'],
    ]);
    expect(q.stats().adds).toBe(3);
  });

  it('onDepth reports the number of queued keys each time it changes', async () => {
    const { q, clock, calls } = setup();
    q.add('a');
    q.add('b');
    q.tryGet();
    q.addAfter('c', 10);
    await clock.advance(10);
    q.removeWhere((k) => k === 'b');
    q.shutDown();
    expect(only(calls, 'depth').map(([, , depth]) => depth)).toEqual([1, 2, 1, 2, 1, 0]);
  });

  it('onQueueLatency reports how long a key was ready before a worker took it, on the virtual clock', async () => {
    const { q, clock, calls } = setup();
    q.add('a');
    await clock.advance(30);
    q.add('b');
    await clock.advance(20);
    q.tryGet();
    q.tryGet();
    q.addAfter('c', 100);
    await clock.advance(100);
    await clock.advance(5);
    q.tryGet();
    expect(only(calls, 'latency')).toEqual([
      ['latency', 'pods', 50],
      ['latency', 'pods', 20],
      ['latency', 'pods', 5],
    ]);
  });

  it('onWorkDuration reports how long a key was processing, whether it ends with done or a requeue', async () => {
    const { q, clock, calls } = setup();
    q.add('a');
    q.add('b');
    q.add('c');
    q.tryGet();
    await clock.advance(40);
    q.done('a');
    q.tryGet();
    await clock.advance(15);
    q.requeueAfter('b', 1000);
    q.tryGet();
    await clock.advance(7);
    q.requeueRateLimited('c');
    expect(only(calls, 'work')).toEqual([
      ['work', 'pods', 40],
      ['work', 'pods', 15],
      ['work', 'pods', 7],
    ]);
  });

  it('onRetry fires for each rate-limited add or requeue', () => {
    const { q, calls } = setup();
    q.addRateLimited('a');
    q.add('b');
    q.tryGet();
    q.requeueRateLimited('b');
    q.requeueAfter('a', 100);
    expect(only(calls, 'retry')).toHaveLength(2);
    expect(q.stats().retries).toBe(2);
  });

  it('onDroppedAfterShutdown fires for each add that arrives after shutDown', () => {
    const { q, calls } = setup();
    q.shutDown();
    q.add('a');
    q.addAfter('a', 10);
    q.addRateLimited('a');
    expect(only(calls, 'dropped')).toHaveLength(3);
    expect(only(calls, 'add')).toHaveLength(0);
    expect(q.stats().droppedAfterShutdown).toBe(3);
  });

  it('a hook that throws does not break the queue', async () => {
    const clock = new VirtualClock();
    const boom = (): never => {
      throw new Error('broken adapter');
    };
    const q = new WorkQueue<string>({
      clock,
      metrics: {
        onAdd: boom,
        onDepth: boom,
        onQueueLatency: boom,
        onWorkDuration: boom,
        onRetry: boom,
        onDroppedAfterShutdown: boom,
      },
    });
    q.add('a');
    q.addAfter('b', 10);
    await clock.advance(10);
    expect(q.tryGet()).toBe('a');
    q.add('a');
    q.done('a');
    q.addRateLimited('c');
    await clock.advance(5);
    expect([q.tryGet(), q.tryGet(), q.tryGet()]).toEqual(['b', 'a', 'c']);
    const pending = q.get();
    q.shutDown();
    q.add('d');
    expect(await pending).toBeUndefined();
    expect(q.stats()).toMatchObject({ adds: 4, retries: 1, droppedAfterShutdown: 1, processing: 3 });
  });
});

describe('unfinished work', () => {
  it('unfinishedWorkMs sums and longestRunningMs takes the maximum over processing keys', async () => {
    const { q, clock } = setup();
    expect(q.unfinishedWorkMs()).toBe(0);
    expect(q.longestRunningMs()).toBe(0);
    q.add('a');
    q.add('b');
    q.tryGet();
    await clock.advance(100);
    q.tryGet();
    await clock.advance(50);
    expect(q.unfinishedWorkMs()).toBe(150 + 50);
    expect(q.longestRunningMs()).toBe(150);
    q.done('a');
    expect(q.unfinishedWorkMs()).toBe(50);
    expect(q.longestRunningMs()).toBe(50);
    q.done('b');
    expect(q.unfinishedWorkMs()).toBe(0);
  });
});

describe('stats', () => {
  it('stats reports adds, retries, drops, depth, processing and waiting', async () => {
    const { q, clock } = setup();
    q.add('a');
    q.add('b');
    q.add('b');
    q.tryGet();
    q.addAfter('c', 100);
    q.addRateLimited('d');
    expect(q.stats()).toEqual({
      adds: 3,
      retries: 1,
      droppedAfterShutdown: 0,
      depth: 1,
      processing: 1,
      waiting: 2,
      getters: 0,
      limitedPartitions: 0,
      saturatedPartitions: 0,
    });
    await clock.advance(100);
    expect(q.stats()).toMatchObject({ adds: 5, depth: 3, waiting: 0 });
  });
});
