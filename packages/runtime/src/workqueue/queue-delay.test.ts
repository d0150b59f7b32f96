import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { WorkQueue, type WorkQueueOptions } from './index.ts';
import { ExponentialRateLimiter } from './rate-limiter.ts';

function queue(options: WorkQueueOptions<string> = {}): { q: WorkQueue<string>; clock: VirtualClock } {
  const clock = new VirtualClock();
  return { q: new WorkQueue<string>({ clock, ...options }), clock };
}

/** Takes and finishes keys until none is ready; returns the order they were handed out. */
function drain<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) {
    out.push(k);
    q.done(k);
  }
  return out;
}

describe('addAfter (B1, B2)', () => {
  it('addAfter with a delay of zero or less adds at once', () => {
    const { q, clock } = queue();
    q.addAfter('zero', 0);
    q.addAfter('negative', -5);
    q.addAfter('minus-infinity', Number.NEGATIVE_INFINITY);
    expect(q.length).toBe(3);
    expect(q.waitingCount).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a delayed key becomes ready when its delay has passed, not before', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 1000);
    expect(q.has('a')).toBe(true);
    expect(q.waitingCount).toBe(1);
    await clock.advance(999);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
    expect(q.waitingCount).toBe(0);
    expect(q.tryGet()).toBe('a');
  });

  it('the earliest deadline wins when a waiting key is delayed again with a shorter delay', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 1000);
    q.addAfter('a', 300);
    expect(q.waitingCount).toBe(1);
    await clock.advance(300);
    expect(drain(q)).toEqual(['a']);
    await clock.advance(1000);
    expect(q.length).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a longer delay does not postpone a waiting key', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 300);
    await clock.advance(100);
    q.addAfter('a', 1000);
    await clock.advance(200);
    expect(drain(q)).toEqual(['a']);
    await clock.advance(2000);
    expect(q.length).toBe(0);
  });

  it('delayed keys become ready in deadline order, ties in the order of their calls', async () => {
    const { q, clock } = queue();
    q.addAfter('late', 300);
    q.addAfter('tie-1', 200);
    q.addAfter('early', 100);
    q.addAfter('tie-2', 200);
    await clock.advance(300);
    expect(drain(q)).toEqual(['early', 'tie-1', 'tie-2', 'late']);
  });

  it('one clock timer serves all waiting keys, armed for the earliest deadline', async () => {
    const { q, clock } = queue();
    for (let i = 1; i <= 50; i++) q.addAfter(`k${i}`, i * 10);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt()).toBe(10);
    q.addAfter('first', 5);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt()).toBe(5);
    await clock.advance(500);
    expect(q.length).toBe(51);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('delayed adds in client-go mode, the default (B3, B4)', () => {
  it('a plain add of a waiting key queues it at once and the timer adds it again later', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 1000);
    q.add('a');
    expect(q.length).toBe(1);
    expect(drain(q)).toEqual(['a']);
    expect(q.has('a')).toBe(true);
    await clock.advance(1000);
    expect(drain(q)).toEqual(['a']);
    expect(q.has('a')).toBe(false);
  });

  it('the timer of a key that is still queued does not queue it twice', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 100);
    q.add('a');
    await clock.advance(100);
    expect(q.length).toBe(1);
    expect(drain(q)).toEqual(['a']);
    expect(q.has('a')).toBe(false);
  });

  it('addAfter of a queued key starts a timer that runs the key again after it was handled', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.addAfter('a', 100);
    expect(q.waitingCount).toBe(1);
    expect(drain(q)).toEqual(['a']);
    await clock.advance(100);
    expect(drain(q)).toEqual(['a']);
  });

  it('addAfter of a processing key whose timer fires during processing runs it once more after done', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    q.addAfter('a', 100);
    await clock.advance(100);
    expect(q.length).toBe(0);
    q.done('a');
    expect(drain(q)).toEqual(['a']);
  });

  it('with coalesceWhileProcessing false, a timer that fires while the key is processing is dropped', async () => {
    const { q, clock } = queue({ coalesceWhileProcessing: false });
    q.add('a');
    q.tryGet();
    q.addAfter('a', 100);
    await clock.advance(100);
    q.done('a');
    expect(q.has('a')).toBe(false);
    expect(q.length).toBe(0);
  });
});

describe.each([
  ['the queue option hold: true', { hold: true }, {}],
  ['the per-call option hold: true', {}, { hold: true }],
] as const)('hold mode through %s (openclarity)', (_name, queueOptions, callOptions) => {
  it('the first schedule wins, even over a later call with a shorter delay', async () => {
    const { q, clock } = queue(queueOptions);
    q.addAfter('a', 1000, callOptions);
    q.addAfter('a', 100, callOptions);
    await clock.advance(999);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(drain(q)).toEqual(['a']);
  });

  it('plain adds are ignored while the key waits', async () => {
    const { q, clock } = queue(queueOptions);
    q.addAfter('a', 1000, callOptions);
    q.add('a');
    expect(q.length).toBe(0);
    expect(q.has('a')).toBe(true);
    await clock.advance(1000);
    expect(drain(q)).toEqual(['a']);
    expect(q.has('a')).toBe(false);
  });

  it('a delayed add of a queued key is a no-op', async () => {
    const { q, clock } = queue(queueOptions);
    q.add('a');
    q.addAfter('a', 100, callOptions);
    expect(q.waitingCount).toBe(0);
    expect(drain(q)).toEqual(['a']);
    await clock.advance(100);
    expect(q.length).toBe(0);
  });

  it('a delayed add of a processing key is a no-op', async () => {
    const { q, clock } = queue(queueOptions);
    q.add('a');
    q.tryGet();
    q.addAfter('a', 100, callOptions);
    expect(q.waitingCount).toBe(0);
    q.done('a');
    await clock.advance(100);
    expect(q.has('a')).toBe(false);
  });

  it('adds work normally again once the timer has fired', async () => {
    const { q, clock } = queue(queueOptions);
    q.addAfter('a', 100, callOptions);
    await clock.advance(100);
    expect(q.tryGet()).toBe('a');
    q.add('a');
    q.done('a');
    expect(drain(q)).toEqual(['a']);
  });
});

describe('hold mode details', () => {
  it('a hold wait also ignores later non-hold delayed adds, even shorter ones', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 1000, { hold: true });
    q.addAfter('a', 10);
    await clock.advance(999);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
  });

  it('a hold delayed add of a key that waits without hold is ignored, the first wait wins', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 1000);
    q.addAfter('a', 10, { hold: true });
    await clock.advance(999);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
  });

  it('the per-call hold: false overrides the queue option hold: true', async () => {
    const { q, clock } = queue({ hold: true });
    q.addAfter('a', 1000, { hold: false });
    q.addAfter('a', 100, { hold: false });
    q.add('a');
    expect(q.length).toBe(1);
    drain(q);
    await clock.advance(100);
    expect(drain(q)).toEqual(['a']);
  });
});

describe('requeueAfter (B5)', () => {
  it('requeueAfter finishes a processing key and schedules it in one step', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    const waiting = q.get();
    q.requeueAfter('a', 500);
    expect(q.processingCount).toBe(0);
    expect(q.length).toBe(0);
    expect(q.waitingCount).toBe(1);
    expect(q.has('a')).toBe(true);
    await clock.advance(500);
    expect(await waiting).toBe('a');
  });

  it('in client-go mode, requeueAfter of a key added while processing runs it now and again after the delay', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    q.add('a');
    q.requeueAfter('a', 500);
    expect(drain(q)).toEqual(['a']);
    await clock.advance(499);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(drain(q)).toEqual(['a']);
  });

  it('in client-go mode, requeueAfter keeps an earlier wait that was set while processing', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    q.addAfter('a', 100);
    q.requeueAfter('a', 1000);
    await clock.advance(100);
    expect(drain(q)).toEqual(['a']);
    await clock.advance(900);
    expect(q.length).toBe(0);
  });

  it('with hold, requeueAfter ignores an add that arrived while processing and any add while waiting', async () => {
    const { q, clock } = queue({ hold: true });
    q.add('a');
    q.tryGet();
    q.add('a');
    q.requeueAfter('a', 500);
    expect(q.length).toBe(0);
    q.add('a');
    q.addAfter('a', 10);
    expect(q.length).toBe(0);
    await clock.advance(499);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(drain(q)).toEqual(['a']);
    expect(q.has('a')).toBe(false);
  });

  it('requeueAfter with a delay of zero queues the key at once, in both modes', () => {
    for (const hold of [false, true]) {
      const { q, clock } = queue({ hold });
      q.add('a');
      q.add('b');
      q.tryGet();
      q.requeueAfter('a', 0);
      expect(clock.pendingTimers).toBe(0);
      expect(drain(q)).toEqual(['b', 'a']);
    }
  });

  it('requeueAfter(0) of a key added while processing hands it to one waiting worker only, once', async () => {
    const { q } = queue();
    q.add('a');
    expect(q.tryGet()).toBe('a');
    q.add('a');
    const first = q.get();
    const second = q.get();
    q.requeueAfter('a', 0);
    expect(await first).toBe('a');
    expect(q.processingCount).toBe(1);
    expect(q.length).toBe(0);
    expect(q.tryGet()).toBeUndefined();
    q.done('a');
    q.shutDown();
    expect(await second).toBeUndefined();
  });

  it('requeueAfter(0) of a key added while processing queues it once, at the higher of the two priorities', () => {
    const { q } = queue();
    q.add('a');
    q.tryGet();
    q.add('a', { priority: 100 });
    q.add('b', { priority: 50 });
    q.requeueAfter('a', 0);
    expect(q.length).toBe(2);
    expect(drain(q)).toEqual(['a', 'b']);
  });

  it('requeueAfter of a key that is not processing acts like addAfter', async () => {
    const { q, clock } = queue();
    q.requeueAfter('a', 100);
    expect(q.waitingCount).toBe(1);
    await clock.advance(100);
    expect(drain(q)).toEqual(['a']);
  });

  it('requeueAfter after shutDown finishes the key, schedules nothing and counts the drop', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    q.shutDown();
    q.requeueAfter('a', 100);
    expect(q.processingCount).toBe(0);
    expect(q.has('a')).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    expect(q.stats().droppedAfterShutdown).toBe(1);
    await clock.advance(100);
    expect(q.stats().adds).toBe(1);
  });
});

describe('delayed keys after shutDown (B6)', () => {
  it('delayed keys never fire after shutDown and new delayed adds are ignored and counted', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 100);
    q.shutDown();
    q.addAfter('b', 50);
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(1000);
    expect(q.has('a') || q.has('b')).toBe(false);
    expect(q.stats()).toMatchObject({ adds: 0, waiting: 0, droppedAfterShutdown: 1 });
  });

  it('a rate-limited requeue after shutDown finishes the key and counts the drop', () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    q.shutDown();
    q.requeueRateLimited('a');
    expect(q.processingCount).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(q.stats()).toMatchObject({ droppedAfterShutdown: 1, retries: 0 });
  });
});

describe('rate-limited adds through the queue (C1, C2, C5)', () => {
  it('addRateLimited waits the limiter delay, which doubles per requeue, and counts requeues', async () => {
    const { q, clock } = queue({ rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10 }) });
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const start = clock.now();
      q.addRateLimited('a');
      while (q.length === 0) await clock.advance(1);
      delays.push(clock.now() - start);
      drain(q);
    }
    expect(delays).toEqual([10, 20, 40, 80]);
    expect(q.numRequeues('a')).toBe(4);
    expect(q.stats().retries).toBe(4);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('requeueRateLimited finishes the key and requeues it after the limiter delay', async () => {
    const { q, clock } = queue({ rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 10 }) });
    q.add('a');
    q.tryGet();
    q.requeueRateLimited('a');
    expect(q.processingCount).toBe(0);
    await clock.advance(9);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.tryGet()).toBe('a');
    q.requeueRateLimited('a');
    await clock.advance(19);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
  });

  it('a rate-limited requeue with delayMs waits exactly that long but still counts a requeue', async () => {
    const { q, clock } = queue();
    q.add('a');
    q.tryGet();
    q.requeueRateLimited('a', { delayMs: 7000 });
    expect(q.numRequeues('a')).toBe(1);
    await clock.advance(6999);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
  });

  it('a new add during backoff processes the key at once and keeps its failure count (C5)', async () => {
    const { q, clock } = queue({ rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 1000 }) });
    q.add('a');
    q.tryGet();
    q.requeueRateLimited('a');
    await clock.advance(1000);
    expect(q.tryGet()).toBe('a');
    expect(q.numRequeues('a')).toBe(1);
    q.requeueRateLimited('a');
    expect(q.numRequeues('a')).toBe(2);
    q.add('a');
    expect(q.tryGet()).toBe('a');
    expect(q.numRequeues('a')).toBe(2);
    q.done('a');
    // The backoff timer still fires later (client-go), with the failure count intact.
    await clock.advance(2000);
    expect(q.tryGet()).toBe('a');
    expect(q.numRequeues('a')).toBe(2);
  });
});

describe('cancelRetry', () => {
  it('cancels a delayed add made only by rate-limited requeues, and nothing else', async () => {
    const { q, clock } = queue({ rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 100 }) });
    q.addRateLimited('retry');
    q.addAfter('plain', 100);
    q.addRateLimited('merged');
    q.addAfter('merged', 500);
    q.addAfter('held', 100, { hold: true });
    expect(q.cancelRetry('retry')).toBe(true);
    expect(q.cancelRetry('retry')).toBe(false);
    expect(q.cancelRetry('plain')).toBe(false);
    expect(q.cancelRetry('merged')).toBe(false);
    expect(q.cancelRetry('held')).toBe(false);
    expect(q.cancelRetry('unknown')).toBe(false);
    expect(q.has('retry')).toBe(false);
    expect(q.waitingCount).toBe(3);
    await clock.advance(1_000);
    expect(drain(q).sort()).toEqual(['held', 'merged', 'plain']);
    expect(q.inspect()).toEqual([]);
  });

  it('cancels the retry of a key that is processing, which then ends with done and is gone', async () => {
    const { q, clock } = queue({ rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 100 }) });
    q.add('a');
    expect(q.tryGet()).toBe('a');
    q.requeueRateLimited('a');
    q.add('a');
    expect(q.tryGet()).toBe('a');
    expect(q.cancelRetry('a')).toBe(true);
    q.done('a');
    expect(q.has('a')).toBe(false);
    await clock.advance(1_000);
    expect(q.length).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });
});
