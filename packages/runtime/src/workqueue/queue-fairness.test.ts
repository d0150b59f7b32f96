import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { Priority, WorkQueue, type WorkQueueOptions } from './index.ts';
import { type Lane, type ReadyEntry, ReadySet } from './ready-set.ts';

function queue(options: WorkQueueOptions<string> = {}): { q: WorkQueue<string>; clock: VirtualClock } {
  const clock = new VirtualClock();
  return { q: new WorkQueue<string>({ clock, ...options }), clock };
}

/** Partitions keys by the text before the first '/'. */
const byPrefix = (key: string): string => key.slice(0, key.indexOf('/'));

/** Takes and finishes keys until none is ready; returns the order they were handed out. */
function drain<K>(q: WorkQueue<K>): K[] {
  const out: K[] = [];
  for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) {
    out.push(k);
    q.done(k);
  }
  return out;
}

describe('priorities', () => {
  it('a key with a higher priority is handed out before keys added earlier with a lower one', () => {
    const { q } = queue();
    q.add('resync', { priority: Priority.low });
    q.add('normal');
    q.add('urgent', { priority: Priority.high });
    q.add('custom', { priority: 7.5 });
    expect(drain(q)).toEqual(['urgent', 'custom', 'normal', 'resync']);
  });

  it('keys of equal priority keep the order of their first add', () => {
    const { q } = queue();
    for (const k of ['a', 'b', 'c']) q.add(k, { priority: Priority.high });
    q.add('a', { priority: Priority.high });
    expect(drain(q)).toEqual(['a', 'b', 'c']);
  });

  it('a queued key re-added with a higher priority moves up', () => {
    const { q } = queue();
    q.add('a', { priority: Priority.low });
    q.add('b', { priority: Priority.low });
    q.add('c');
    q.add('b', { priority: Priority.high });
    expect(q.length).toBe(3);
    expect(drain(q)).toEqual(['b', 'c', 'a']);
  });

  it('a queued key re-added with a lower priority keeps its priority and its place', () => {
    const { q } = queue();
    q.add('a', { priority: Priority.high });
    q.add('b', { priority: Priority.high });
    q.add('c');
    q.add('a', { priority: Priority.low });
    expect(drain(q)).toEqual(['a', 'b', 'c']);
  });

  it('a key moved up joins the tail of its new priority, behind keys already there', () => {
    const { q } = queue();
    q.add('x', { priority: Priority.high });
    q.add('a');
    q.add('a', { priority: Priority.high });
    q.add('y', { priority: Priority.high });
    expect(drain(q)).toEqual(['x', 'a', 'y']);
  });

  it('a key added with low priority while processing is queued at low priority after done', () => {
    const { q } = queue();
    q.add('a', { priority: Priority.high });
    expect(q.tryGet()).toBe('a');
    q.add('a', { priority: Priority.low });
    q.add('b');
    q.done('a');
    expect(drain(q)).toEqual(['b', 'a']);
  });

  it('a key added several times while processing is queued after done at the highest of those priorities', () => {
    const { q } = queue();
    q.add('a');
    q.tryGet();
    q.add('a', { priority: Priority.low });
    q.add('a', { priority: Priority.high });
    q.add('a', { priority: Priority.low });
    q.add('b');
    q.done('a');
    expect(drain(q)).toEqual(['a', 'b']);
  });

  it('the priority of an add while processing does not carry over to the next processing', () => {
    const { q } = queue();
    q.add('a');
    q.tryGet();
    q.add('a', { priority: Priority.high });
    q.done('a');
    expect(q.tryGet()).toBe('a');
    q.add('a', { priority: Priority.low });
    q.add('b');
    q.done('a');
    expect(drain(q)).toEqual(['b', 'a']);
  });

  it('a delayed key becomes ready with the priority of its delayed add', async () => {
    const { q, clock } = queue();
    q.add('normal');
    q.addAfter('urgent', 100, { priority: Priority.high });
    await clock.advance(100);
    expect(drain(q)).toEqual(['urgent', 'normal']);
  });

  it('a waiting key keeps the highest priority of its delayed adds, whichever deadline wins', async () => {
    for (const [first, second] of [
      [100, 50],
      [50, 100],
    ] as const) {
      const { q, clock } = queue();
      q.add('normal');
      q.addAfter('a', first, { priority: Priority.high });
      q.addAfter('a', second, { priority: Priority.low });
      await clock.advance(100);
      expect(drain(q)).toEqual(['a', 'normal']);
    }
  });

  it('a rate-limited add keeps the priority it was given', async () => {
    const { q, clock } = queue();
    q.add('normal');
    q.addRateLimited('a', { priority: Priority.high });
    await clock.advance(5);
    expect(drain(q)).toEqual(['a', 'normal']);
  });
});

describe('fairness across partitions', () => {
  it('a storm of 10 000 keys in one partition delays a key of another partition by at most one get', () => {
    const { q } = queue({ partitionOf: byPrefix });
    for (let i = 0; i < 10_000; i++) q.add(`a/${i}`);
    q.add('b/only');
    const firstTwo = [q.tryGet(), q.tryGet()];
    expect(firstTwo).toContain('b/only');
    expect(q.length).toBe(9_999);
  });

  it('three partitions with ready keys are served round-robin', () => {
    const { q } = queue({ partitionOf: byPrefix });
    for (let i = 0; i < 4; i++) q.add(`a/${i}`);
    for (let i = 0; i < 2; i++) q.add(`b/${i}`);
    for (let i = 0; i < 3; i++) q.add(`c/${i}`);
    expect(drain(q)).toEqual(['a/0', 'b/0', 'c/0', 'a/1', 'b/1', 'c/1', 'a/2', 'c/2', 'a/3']);
  });

  it('without partitionOf the same keys are served in plain FIFO order', () => {
    const { q } = queue();
    for (const k of ['a/0', 'a/1', 'b/0']) q.add(k);
    expect(drain(q)).toEqual(['a/0', 'a/1', 'b/0']);
  });

  it('a partition that empties and gets a key again joins the end of the round', () => {
    const { q } = queue({ partitionOf: byPrefix });
    q.add('a/0');
    q.add('a/1');
    q.add('b/0');
    expect(q.tryGet()).toBe('a/0');
    expect(q.tryGet()).toBe('b/0');
    q.add('c/0');
    q.add('b/1');
    expect(drain(q)).toEqual(['a/1', 'c/0', 'b/1']);
  });

  it('round-robin holds within each priority level, and a higher level is still served first', () => {
    const { q } = queue({ partitionOf: byPrefix });
    for (let i = 0; i < 3; i++) q.add(`a/low${i}`, { priority: Priority.low });
    for (let i = 0; i < 2; i++) q.add(`b/low${i}`, { priority: Priority.low });
    for (let i = 0; i < 3; i++) q.add(`a/high${i}`, { priority: Priority.high });
    q.add('b/high0', { priority: Priority.high });
    expect(drain(q)).toEqual([
      'a/high0',
      'b/high0',
      'a/high1',
      'a/high2',
      'a/low0',
      'b/low0',
      'a/low1',
      'b/low1',
      'a/low2',
    ]);
  });

  it('a storm at low priority never delays a single normal-priority key of the same partition', () => {
    const { q } = queue({ partitionOf: byPrefix });
    for (let i = 0; i < 1000; i++) q.add(`a/${i}`, { priority: Priority.low });
    q.add('a/fresh');
    expect(q.tryGet()).toBe('a/fresh');
  });

  it('a key removed from a busy partition does not cost the other partitions their turn', () => {
    const { q } = queue({ partitionOf: byPrefix });
    q.add('a/0');
    q.add('a/1');
    q.add('b/0');
    q.add('b/1');
    q.removeWhere((k) => k === 'a/0' || k === 'b/1');
    expect(drain(q)).toEqual(['a/1', 'b/0']);
  });
});

describe('ready set internals', () => {
  interface Item extends ReadyEntry {
    readonly name: string;
  }
  const item = (name: string, partition = ''): Item => ({
    name,
    partition,
    lane: undefined as Lane<ReadyEntry> | undefined,
    slot: 0,
    priority: 0,
  });

  it('empty priority levels are dropped, so many distinct priorities used once do not pile up', () => {
    const set = new ReadySet<Item>();
    const held = item('held');
    set.push(held, -1);
    for (let i = 0; i < 1000; i++) {
      const it = item(`k${i}`);
      set.push(it, i);
      if (i % 2 === 0) set.unlink(it);
      else expect(set.shift()).toBe(it);
    }
    expect(set.size).toBe(1);
    expect(set.levels).toBeLessThanOrEqual(16);
    expect(set.shift()).toBe(held);
  });

  it('a level that empties and fills again keeps serving its partitions round-robin', () => {
    const set = new ReadySet<Item>();
    const a = item('a', 'p');
    set.push(a, 0);
    expect(set.shift()).toBe(a);
    const keys = [item('p1', 'p'), item('p2', 'p'), item('q1', 'q')];
    for (const k of keys) set.push(k, 0);
    expect([set.shift()?.name, set.shift()?.name, set.shift()?.name]).toEqual(['p1', 'q1', 'p2']);
    expect(set.levels).toBe(1);
  });

  it('an entry unlinked and pushed again is handed out once, from its new place', () => {
    const set = new ReadySet<Item>();
    const a = item('a');
    const b = item('b');
    set.push(a, 0);
    set.push(b, 0);
    set.unlink(a);
    set.push(a, 0);
    expect([set.shift()?.name, set.shift()?.name, set.shift()]).toEqual(['b', 'a', undefined]);
  });
});
