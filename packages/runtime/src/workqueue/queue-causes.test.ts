import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import { type Cause, formatCause, sameCause, WorkQueue, type WorkQueueOptions } from './index.ts';

function queue(options: WorkQueueOptions<string> = {}): { q: WorkQueue<string>; clock: VirtualClock } {
  const clock = new VirtualClock();
  return { q: new WorkQueue<string>({ clock, ...options }), clock };
}

/** A distinct event cause per resourceVersion, built afresh each call (equal by value only). */
const modified = (rv: number): Cause => ({
  type: 'modified',
  source: 'widgets',
  object: { kind: 'Widget', namespace: 'ns', name: 'w', resourceVersion: String(rv) },
});

/** Takes the next key and returns it with the causes it was handed out with. */
function take(q: WorkQueue<string>): { key: string | undefined; causes: readonly Cause[]; dropped: number } {
  const key = q.tryGet();
  if (key === undefined) return { key, causes: [], dropped: 0 };
  const { causes, dropped } = q.causesOf(key);
  return { key, causes, dropped };
}

describe('work queue causes', () => {
  it('a run gets the causes of every add its key absorbed while queued, oldest first, equal ones once', () => {
    const { q } = queue();
    q.add('a', { cause: modified(1) });
    q.add('a', { cause: modified(2) });
    q.add('a', { cause: modified(1) });
    q.add('a');
    expect(q.length).toBe(1);
    expect(take(q)).toEqual({
      key: 'a',
      causes: [modified(1), modified(2), { type: 'manual' }],
      dropped: 0,
    });
  });

  it('causes that arrive while a key runs belong to its next run, and the running one keeps its own', () => {
    const { q } = queue();
    q.add('a', { cause: modified(1) });
    const first = take(q);
    q.add('a', { cause: modified(2) });
    q.add('a', { cause: modified(3) });
    expect(q.causesOf('a').causes).toEqual([modified(1)]);
    expect(first.causes).toEqual([modified(1)]);
    q.done('a');
    expect(take(q)).toEqual({ key: 'a', causes: [modified(2), modified(3)], dropped: 0 });
    q.done('a');
    q.add('a');
    expect(take(q).causes).toEqual([{ type: 'manual' }]);
  });

  it('past maxCausesPerKey the newest distinct causes are kept and the others counted as dropped', () => {
    const { q } = queue({ maxCausesPerKey: 3 });
    for (let rv = 1; rv <= 10; rv++) q.add('a', { cause: modified(rv) });
    expect(take(q)).toEqual({ key: 'a', causes: [modified(8), modified(9), modified(10)], dropped: 7 });
  });

  it('the default keeps 8 causes per key', () => {
    const { q } = queue();
    for (let rv = 1; rv <= 50; rv++) q.add('a', { cause: modified(rv) });
    const { causes, dropped } = take(q);
    expect(causes).toHaveLength(8);
    expect(causes.at(-1)).toEqual(modified(50));
    expect(dropped).toBe(42);
  });

  it('the causes a delayed add or a kept run let go still count when they join a run', async () => {
    const { q, clock } = queue({ maxCausesPerKey: 2 });
    for (let rv = 1; rv <= 3; rv++) q.addAfter('a', 10, { cause: modified(rv) });
    q.add('a', { cause: modified(9) });
    await clock.advance(10);
    // The wait let modified(1) go; joining the queued run lets modified(9) go too.
    expect(take(q)).toEqual({ key: 'a', causes: [modified(2), modified(3)], dropped: 2 });
    q.requeueAfter('a', 0, { keepCauses: true, cause: modified(4) });
    expect(take(q)).toEqual({ key: 'a', causes: [modified(3), modified(4)], dropped: 3 });
  });

  it('maxCausesPerKey 0 keeps no causes at all', () => {
    const { q } = queue({ maxCausesPerKey: 0 });
    q.add('a', { cause: modified(1) });
    expect(take(q)).toEqual({ key: 'a', causes: [], dropped: 0 });
  });

  it('defaults: add and addAfter are manual, requeueAfter is requeue-after, the rate-limited ones are retry', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 10);
    q.addRateLimited('b', { delayMs: 10 });
    await clock.advance(10);
    expect(take(q).causes).toEqual([{ type: 'manual' }]);
    expect(take(q).causes).toEqual([{ type: 'retry' }]);
    q.requeueAfter('a', 5);
    q.requeueRateLimited('b', { delayMs: 5 });
    await clock.advance(5);
    expect(take(q).causes).toEqual([{ type: 'requeue-after' }]);
    expect(take(q).causes).toEqual([{ type: 'retry' }]);
  });

  it('a delayed add keeps its cause until its timer fires: a plain add in between runs without it', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 100, { cause: { type: 'requeue-after' } });
    q.add('a', { cause: modified(1) });
    expect(take(q).causes).toEqual([modified(1)]);
    q.done('a');
    await clock.advance(100);
    expect(take(q).causes).toEqual([{ type: 'requeue-after' }]);
  });

  it('delayed adds of a waiting key pool their causes into the one run at the earliest deadline', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 100, { cause: modified(1) });
    q.addAfter('a', 50, { cause: modified(2) });
    q.addAfter('a', 300, { cause: modified(3) });
    await clock.advance(50);
    expect(take(q).causes).toEqual([modified(1), modified(2), modified(3)]);
  });

  it('keepCauses hands the finishing run its causes on, before those that arrived while it ran', async () => {
    const { q, clock } = queue();
    q.add('a', { cause: modified(1) });
    take(q);
    q.addAfter('a', 30, { cause: modified(2) });
    q.requeueRateLimited('a', { delayMs: 10, keepCauses: true });
    await clock.advance(10);
    expect(take(q).causes).toEqual([modified(1), modified(2), { type: 'retry' }]);
    q.add('a', { cause: modified(3) });
    q.requeueAfter('a', 0, { keepCauses: true, cause: { type: 'requeue' } });
    expect(take(q).causes).toEqual([
      modified(1),
      modified(2),
      { type: 'retry' },
      modified(3),
      { type: 'requeue' },
    ]);
  });

  it('attributedCausesOf keeps what it attributed: a retried run gets the very same cause objects, not attributed again', async () => {
    const { q, clock } = queue();
    const writer = { controller: 'c', reconcileId: 'c-1', key: 'ns/w', causes: [] };
    let calls = 0;
    // Attributes odd resourceVersions, as a ledger names the writes it remembers.
    const by = {
      attributeOnce(cause: Cause, now: number): Cause {
        calls++;
        expect(now).toBe(1234);
        const rv = Number(cause.object?.resourceVersion);
        if (cause.writtenBy !== undefined || !(rv % 2 === 1)) return cause;
        return Object.freeze({ ...cause, writtenBy: writer });
      },
    };
    // One cause (the slot holds it alone), then several (a list).
    q.add('a', { cause: modified(1) });
    expect(q.tryGet()).toBe('a');
    const single = q.attributedCausesOf('a', by, 1234).causes;
    expect(single.map((c) => c.writtenBy)).toEqual([writer]);
    q.addAfter('a', 5, { cause: modified(2) });
    q.requeueRateLimited('a', { delayMs: 10, keepCauses: true });
    await clock.advance(10);
    expect(q.tryGet()).toBe('a');
    const first = q.attributedCausesOf('a', by, 1234).causes;
    expect(first[0]).toBe(single[0]);
    expect(first.map((c) => c.writtenBy)).toEqual([writer, undefined, undefined]);
    q.requeueAfter('a', 0, { keepCauses: true });
    expect(q.tryGet()).toBe('a');
    const again = q.attributedCausesOf('a', by, 1234).causes;
    expect(again.slice(0, 3)).toEqual(first);
    for (let i = 0; i < 3; i++) expect(again[i]).toBe(first[i]);
    expect(calls).toBeGreaterThan(0);
    // A key that is not processing has no causes.
    expect(q.attributedCausesOf('b', by, 1234)).toEqual({ causes: [], dropped: 0 });
  });

  it('without keepCauses a requeue carries only its own cause; an add during the run runs at once with its own', async () => {
    const { q, clock } = queue();
    q.add('a', { cause: modified(1) });
    take(q);
    q.add('a', { cause: modified(2) });
    q.requeueAfter('a', 10);
    expect(take(q).causes).toEqual([modified(2)]);
    q.done('a');
    await clock.advance(10);
    expect(take(q).causes).toEqual([{ type: 'requeue-after' }]);
  });

  it('an add the queue ignores drops its cause: while a hold waits, and while processing without coalescing', async () => {
    const held = queue({ hold: true });
    held.q.addAfter('a', 10, { cause: modified(1) });
    held.q.add('a', { cause: modified(2) });
    await held.clock.advance(10);
    expect(take(held.q).causes).toEqual([modified(1)]);

    const dropping = queue({ coalesceWhileProcessing: false });
    dropping.q.add('a', { cause: modified(1) });
    take(dropping.q);
    dropping.q.add('a', { cause: modified(2) });
    dropping.q.requeueAfter('a', 0);
    expect(take(dropping.q).causes).toEqual([{ type: 'requeue-after' }]);
  });

  it('a delayed add that comes due while its key runs without coalescing is ignored with its causes', async () => {
    const { q, clock } = queue({ coalesceWhileProcessing: false });
    q.add('a');
    take(q);
    q.addAfter('a', 10, { cause: modified(1) });
    await clock.advance(10);
    q.requeueAfter('a', 0, { cause: modified(2) });
    expect(take(q).causes).toEqual([modified(2)]);
  });

  it('a hold requeue supersedes the adds that arrived during the run, causes and all', async () => {
    const { q, clock } = queue();
    q.add('a');
    take(q);
    q.add('a', { cause: modified(1) });
    q.requeueAfter('a', 10, { hold: true });
    expect(q.length).toBe(0);
    await clock.advance(10);
    expect(take(q).causes).toEqual([{ type: 'requeue-after' }]);
  });

  it('removeWhere and shutDown let go of the causes of the keys they drop', () => {
    const { q } = queue();
    q.add('a', { cause: modified(1) });
    q.removeWhere((k) => k === 'a');
    q.add('a', { cause: modified(2) });
    expect(take(q).causes).toEqual([modified(2)]);
    q.add('a', { cause: modified(3) });
    q.removeWhere((k) => k === 'a');
    q.done('a');
    expect(q.length).toBe(0);
    q.shutDown();
    expect(q.causesOf('a').causes).toEqual([]);
  });

  it('causesOf is empty for a key that is not running, and hands out frozen copies', () => {
    const { q } = queue();
    expect(q.causesOf('a')).toEqual({ causes: [], dropped: 0 });
    q.add('a', { cause: modified(1) });
    expect(q.causesOf('a').causes).toEqual([]);
    q.tryGet();
    const one = q.causesOf('a');
    expect(Object.isFrozen(one) && Object.isFrozen(one.causes)).toBe(true);
    expect(q.causesOf('a')).not.toBe(one);
    q.done('a');
    expect(q.causesOf('a').causes).toEqual([]);
  });

  it('a cause without a type, or a bad maxCausesPerKey, is rejected with an OptionsError', () => {
    const { q } = queue();
    expect(() => q.add('a', { cause: {} as Cause })).toThrow(OptionsError);
    expect(() => q.addAfter('a', 10, { cause: 'x' as unknown as Cause })).toThrow(OptionsError);
    expect(() => new WorkQueue({ maxCausesPerKey: -1 })).toThrow(OptionsError);
    expect(() => new WorkQueue({ maxCausesPerKey: 1.5 })).toThrow(OptionsError);
  });
});

describe('sameCause and formatCause', () => {
  it('causes are equal when type, flags, source and object reference are equal', () => {
    expect(sameCause(modified(1), modified(1))).toBe(true);
    expect(sameCause(modified(1), modified(2))).toBe(false);
    expect(sameCause(modified(1), { ...modified(1), source: 'other' })).toBe(false);
    expect(sameCause(modified(1), { ...modified(1), secondary: true })).toBe(false);
    expect(sameCause({ type: 'deleted' }, { type: 'deleted', purged: true })).toBe(false);
    expect(sameCause({ type: 'retry' }, { type: 'retry' })).toBe(true);
    expect(sameCause({ type: 'retry' }, { type: 'retry', object: {} })).toBe(false);
  });

  it('formats a cause as type, flags, object and source', () => {
    expect(
      formatCause({
        type: 'deleted',
        purged: true,
        source: 'widgets',
        object: { kind: 'Widget', namespace: 'ns', name: 'w', resourceVersion: '7' },
      }),
    ).toBe('deleted purged Widget ns/w@7 via widgets');
    expect(formatCause({ type: 'added', secondary: true, object: { kind: 'Node', name: 'n1' } })).toBe(
      'added secondary Node n1',
    );
    expect(formatCause({ type: 'retry' })).toBe('retry');
  });
});
