import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { Cause } from './cause.ts';
import { joinHooks } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import { ExponentialRateLimiter } from './rate-limiter.ts';

const modified: Cause = { type: 'modified', source: 'widgets' };

function setup() {
  const clock = new VirtualClock({ startMs: 1_000_000 });
  const q = new WorkQueue<string>({
    name: 'widgets',
    clock,
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 100 }),
  });
  return { q, clock };
}

describe('WorkQueue.observe and onEventLatency', () => {
  it('hooks added after construction see later adds, with their priority', () => {
    const { q } = setup();
    const adds: number[] = [];
    q.add('before');
    q.observe({ onAdd: (_, priority) => adds.push(priority) });
    q.add('a', { priority: 100 });
    q.add('b');
    expect(adds).toEqual([100, 0]);
  });

  it('measures from the first object event of a run to its hand-out, across a coalesced add', async () => {
    const { q, clock } = setup();
    const latencies: number[] = [];
    q.observe({ onEventLatency: (_, ms) => latencies.push(ms) });
    q.add('k', { cause: modified });
    await clock.advance(5);
    q.add('k', { cause: modified }); // deduplicated: the first event counts
    await clock.advance(5);
    expect(q.tryGet()).toBe('k');
    expect(latencies).toEqual([10]);
    q.add('k', { cause: { type: 'deleted' } }); // while processing: belongs to the next run
    await clock.advance(30);
    q.done('k');
    await clock.advance(2);
    expect(q.tryGet()).toBe('k');
    expect(latencies).toEqual([10, 32]);
    q.done('k');
    q.add('k'); // a manual add is no event: not reported
    expect(q.tryGet()).toBe('k');
    expect(latencies).toEqual([10, 32]);
  });

  it('forgets the event of a run that was removed or superseded', async () => {
    const { q, clock } = setup();
    const latencies: number[] = [];
    q.observe({ onEventLatency: (_, ms) => latencies.push(ms) });
    q.add('k', { cause: modified });
    q.removeWhere(() => true);
    await clock.advance(1_000);
    q.add('k');
    expect(q.tryGet()).toBe('k');
    expect(latencies).toEqual([]);
  });

  it('joinHooks calls both, the second even when the first throws', () => {
    const seen: string[] = [];
    const joined = joinHooks<{ onAdd?: (q: string) => void; onRetry?: (q: string) => void }>(
      {
        onAdd: () => {
          seen.push('a');
          throw new Error('broken');
        },
      },
      { onAdd: () => seen.push('b'), onRetry: () => seen.push('r') },
    );
    expect(() => joined.onAdd?.('x')).toThrow('broken');
    joined.onRetry?.('x');
    expect(seen).toEqual(['a', 'b', 'r']);
  });

  it('rejects hooks that are not an object', () => {
    const { q } = setup();
    expect(() => q.observe(null as never)).toThrow(/metrics/);
  });
});

describe('WorkQueue.inspect', () => {
  it('shows queued, processing and backing-off keys with causes, requeues and due times', async () => {
    const { q, clock } = setup();
    q.add('queued', { cause: modified, priority: 100 });
    q.add('running', { cause: { type: 'added' } });
    q.add('failing');
    expect(q.tryGet()).toBe('queued');
    q.done('queued');
    q.add('queued', { cause: modified, priority: 100 });
    expect(q.tryGet()).toBe('queued');
    expect(q.tryGet()).toBe('running');
    q.requeueRateLimited('queued');
    expect(q.tryGet()).toBe('failing');
    q.requeueRateLimited('failing');
    expect(q.tryGet()).toBeUndefined();
    await clock.advance(10);
    q.add('running', { cause: modified });
    const info = q.inspect();
    expect(info.map((i) => i.id)).toEqual(['running', 'failing', 'queued']);
    const [running, failing, queued] = info;
    expect(running).toMatchObject({
      processing: true,
      dirty: true,
      queued: false,
      processingSince: 1_000_000,
    });
    expect(running?.runCauses?.causes).toEqual([{ type: 'added' }]);
    expect(running?.causes.causes).toEqual([modified]);
    expect(queued).toMatchObject({ waitingUntil: 1_000_100, requeues: 1, processing: false });
    expect(queued?.causes.causes.map((c) => c.type)).toEqual(['retry']);
    expect(failing).toMatchObject({ waitingUntil: 1_000_100, requeues: 1 });
    expect(q.inspect(1)).toHaveLength(1);
    expect(() => q.inspect(-1)).toThrow(/limit/);
  });

  it('depthByPriority counts ready keys per priority, highest first', () => {
    const { q } = setup();
    q.add('a', { priority: -100 });
    q.add('b');
    q.add('c', { priority: -100 });
    expect(q.depthByPriority()).toEqual([
      { priority: 0, size: 1 },
      { priority: -100, size: 2 },
    ]);
    q.tryGet();
    expect(q.depthByPriority()).toEqual([{ priority: -100, size: 2 }]);
  });
});
