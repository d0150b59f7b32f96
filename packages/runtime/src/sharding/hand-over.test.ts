import { describe, expect, it } from 'vitest';
import { flushMicrotasks } from '../testing/index.ts';
import { KEYS, TestGroup, TIMING } from './test-harness.ts';

/** Starts members `ids` and waits until they split the keys. */
async function started(...ids: string[]): Promise<TestGroup> {
  const group = new TestGroup();
  for (const id of ids) group.add(id);
  await group.settle(ids);
  return group;
}

describe('hand-over between shard members', () => {
  it('splits the keys between members that start together, each key on exactly one', async () => {
    const group = await started('a', 'b');
    const counts = [...group.owners(['a', 'b']).values()].reduce(
      (acc, [owner]) => acc.set(owner as string, (acc.get(owner as string) ?? 0) + 1),
      new Map<string, number>(),
    );
    expect(counts.get('a')).toBeGreaterThan(KEYS.length / 4);
    expect(counts.get('b')).toBeGreaterThan(KEYS.length / 4);
    expect(group.get('a').member.members).toEqual(['a', 'b']);
    expect(group.get('b').member.view.members).toEqual(['a', 'b']);
    expect(group.violations).toEqual([]);
  });

  it('hands keys to a member that joins (2 → 3) only after their owners released them', async () => {
    const group = await started('a', 'b');
    const before = group.owners(['a', 'b']);
    const epochs = { a: group.get('a').member.epoch, b: group.get('b').member.epoch };
    group.add('c');
    const took = await group.settle(['a', 'b', 'c']);
    // c watches for the renew deadline before it claims, then one release and two reads.
    expect(took).toBeLessThanOrEqual(TIMING.renewDeadlineMs + 4 * TIMING.retryPeriodMs);
    const after = group.owners(['a', 'b', 'c']);
    for (const key of KEYS) {
      const [owner] = after.get(key) as string[];
      if (owner !== 'c') expect(owner).toBe((before.get(key) as string[])[0]);
    }
    // The members that gave keys away moved to a new epoch, fencing their older writes.
    expect(group.get('a').member.epoch).toBeGreaterThan(epochs.a);
    expect(group.get('b').member.epoch).toBeGreaterThan(epochs.b);
    expect(group.fences).toContainEqual({
      name: 'shards/a',
      holder: 'a',
      epoch: group.get('a').member.epoch,
    });
    expect(group.violations).toEqual([]);
  });

  it('hands the keys of a member that stops gracefully (3 → 2) over at once, without revoking it', async () => {
    const group = await started('a', 'b', 'c');
    const c = group.get('c');
    c.stop.abort();
    await c.done;
    expect(c.member.phase).toBe('stopped');
    expect(group.membership.records.get('c')?.record.claim).toEqual([]);
    const took = await group.settle(['a', 'b']);
    expect(took).toBeLessThanOrEqual(3 * TIMING.retryPeriodMs);
    expect(group.fences.filter((f) => f.name === 'shards/c' && f.epoch > c.member.epoch)).toEqual([]);
    // The stopped member's record is purged once it stayed quiet for a lease.
    await group.step(TIMING.leaseDurationMs + 2 * TIMING.retryPeriodMs);
    expect(group.membership.records.has('c')).toBe(false);
    expect(group.violations).toEqual([]);
  });

  it('takes the keys of a killed member only after its lease expired and its fence was raised', async () => {
    const group = await started('a', 'b', 'c');
    const c = group.get('c');
    const epoch = c.member.epoch;
    c.clock.pause(); // its process no longer runs: nothing renews, nothing acknowledges
    const killedAt = group.clock.now();
    const raisedBefore = group.fences.length;
    const took = await group.settle(['a', 'b']);
    expect(took).toBeGreaterThanOrEqual(TIMING.leaseDurationMs);
    expect(took).toBeLessThanOrEqual(TIMING.leaseDurationMs + 4 * TIMING.retryPeriodMs);
    const revocations = group.fences.slice(raisedBefore).filter((f) => f.name === 'shards/c');
    expect(revocations.length).toBeGreaterThan(0);
    expect(revocations.every((f) => f.epoch === epoch + 1)).toBe(true);
    expect(group.clock.now() - killedAt).toBeGreaterThanOrEqual(TIMING.leaseDurationMs);
    // The killed member allows nothing from its renew deadline on.
    expect(KEYS.some((k) => c.member.mayRun(k))).toBe(false);
    // Its record is purged after the revocation.
    await group.step(2 * TIMING.retryPeriodMs);
    expect(group.membership.records.has('c')).toBe(false);
    expect(group.violations).toEqual([]);
  });

  it('a new owner starts a moved key only after the controller of the old owner stopped it', async () => {
    const group = await started('a', 'b');
    group.worker('a', 700);
    group.worker('b', 700);
    await group.step(TIMING.retryPeriodMs);
    group.add('c');
    await group.settle(['a', 'b', 'c']);
    group.get('b').stop.abort();
    await group.settle(['a', 'c']);
    expect(group.violations).toEqual([]);
  });

  it('a member whose controller never finishes releasing gives keys away after releaseTimeoutMs', async () => {
    const group = await started('a', 'b');
    let asked = 0;
    group.get('a').member.onChange(() => {
      asked++;
      return new Promise<void>(() => {}); // never drains
    });
    group.add('c');
    const took = await group.settle(['a', 'b', 'c']);
    expect(asked).toBeGreaterThan(0);
    expect(took).toBeLessThanOrEqual(
      TIMING.renewDeadlineMs + TIMING.releaseTimeoutMs + 5 * TIMING.retryPeriodMs,
    );
    expect(group.violations).toEqual([]);
  });

  it('a member that cannot write its record loses its keys by expiry, then rejoins with a higher epoch', async () => {
    const group = await started('a', 'b');
    const b = group.get('b');
    const epoch = b.member.epoch;
    group.membership.inject({ type: 'error' }, { caller: 'b', operations: ['update'], count: 12 });
    await group.step(TIMING.renewDeadlineMs);
    expect(b.member.phase).toBe('lapsed');
    expect(KEYS.some((k) => b.member.mayRun(k))).toBe(false);
    await group.settle(['a']);
    expect(group.fences).toContainEqual({ name: 'shards/b', holder: 'a', epoch: epoch + 1 });
    // Its writes work again: it sees it was revoked, resets and joins again with a new epoch.
    await group.settle(['a', 'b']);
    expect(b.member.epoch).toBeGreaterThan(epoch);
    expect(group.violations).toEqual([]);
  });

  it('a member whose clock jumps forward steps down briefly and nobody is revoked', async () => {
    const group = await started('a', 'b', 'c');
    const fences = group.fences.length;
    group.get('c').clock.jump(60 * 60 * 1000);
    await group.step(TIMING.retryPeriodMs);
    await group.settle(['a', 'b', 'c']);
    await group.step(2 * TIMING.leaseDurationMs);
    expect(group.settled(['a', 'b', 'c'])).toBe(true);
    expect(group.fences.slice(fences).filter((f) => f.name !== 'shards/c')).toEqual([]);
    expect(group.violations).toEqual([]);
  });

  it('a clock jump does not expire a member that renews late but within its deadline', async () => {
    const group = await started('a', 'b', 'c');
    const fences = group.fences.length;
    // a's next two renewals fail: its record stays unchanged for over a second, within its deadline.
    group.membership.inject({ type: 'error' }, { caller: 'a', operations: ['update'], count: 2 });
    await group.step(100);
    group.get('c').clock.jump(60 * 60 * 1000);
    await group.step(TIMING.leaseDurationMs);
    expect(group.fences.slice(fences).filter((f) => f.name === 'shards/a')).toEqual([]);
    await group.settle(['a', 'b', 'c']);
    expect(group.violations).toEqual([]);
  });

  it('a member whose clock jumps backwards runs nothing until it renewed again', async () => {
    const group = await started('a', 'b');
    const b = group.get('b');
    b.clock.jump(-60_000);
    expect(KEYS.some((k) => b.member.mayRun(k))).toBe(false);
    await group.settle(['a', 'b']);
    await group.step(2 * TIMING.leaseDurationMs);
    expect(group.settled(['a', 'b'])).toBe(true);
    expect(group.violations).toEqual([]);
  });

  it('a record deleted by hand: the member notices, releases everything, and joins again', async () => {
    const group = await started('a', 'b', 'c');
    const epoch = group.get('b').member.epoch;
    group.membership.remove('b');
    await group.step(TIMING.retryPeriodMs * 2);
    expect(['resetting', 'joining']).toContain(group.get('b').member.phase);
    await group.settle(['a', 'b', 'c']);
    expect(group.get('b').member.epoch).toBeGreaterThan(epoch);
    expect(group.violations).toEqual([]);
  });

  it('a member that joins while a record is missing does not run the keys of the member that lost it', async () => {
    const group = await started('a', 'b');
    // b's next renewal hangs until its deadline, so it notices the deletion only then.
    group.membership.inject({ type: 'hang' }, { caller: 'b', operations: ['update'] });
    await group.step(TIMING.retryPeriodMs);
    group.membership.remove('b');
    group.add('c'); // its first read does not show b
    await group.settle(['a', 'b', 'c']);
    expect(group.violations).toEqual([]);
  });

  it('members that briefly disagree about membership never share a key, and agree again', async () => {
    const group = await started('a', 'b');
    // a does not see c for its next ten reads; b does.
    group.membership.inject({ type: 'hide', identities: ['c'] }, { caller: 'a', count: 10 });
    group.add('c');
    await group.step(TIMING.renewDeadlineMs + 2 * TIMING.retryPeriodMs);
    expect(group.get('a').member.members).toEqual(['a', 'b']);
    expect(group.get('b').member.members).toEqual(['a', 'b', 'c']);
    await group.settle(['a', 'b', 'c']);
    // And a member that stops seeing another for a while does not drop it before its lease.
    group.membership.inject({ type: 'hide', identities: ['b'] }, { caller: 'c', count: 4 });
    await group.step(4 * TIMING.retryPeriodMs);
    expect(group.get('c').member.members).toEqual(['a', 'b', 'c']);
    expect(group.settled(['a', 'b', 'c'])).toBe(true);
    expect(group.violations).toEqual([]);
  });

  it('a paused member (SIGSTOP past its lease) is revoked, and when it resumes runs nothing it lost', async () => {
    const group = await started('a', 'b', 'c');
    const c = group.get('c');
    c.clock.pause();
    await group.settle(['a', 'b']);
    await group.step(TIMING.retryPeriodMs);
    await c.clock.resume();
    await group.settle(['a', 'b', 'c']);
    expect(group.violations).toEqual([]);
  });

  it('a member that resumes while it is being revoked is honoured until it sees the revocation', async () => {
    const group = new TestGroup();
    const c = group.add('c');
    let attempts = 0;
    let thawAfterRead = false;
    const inner = group.membership.member('a');
    const a = group.add('a', {
      // a's read after the failed write was taken just before c renewed (its answer arrives late).
      membership: {
        ...inner,
        list: async (signal) => {
          const records = await inner.list(signal);
          if (thawAfterRead) {
            thawAfterRead = false;
            await c.clock.resume();
            for (let i = 0; i < 20; i++) await flushMicrotasks();
          }
          return records;
        },
      },
      revoke: (fence) => {
        if (fence.name !== 'shards/c') return;
        // The first attempt fails, so a publishes its view without c first. After the second,
        // the write that would publish the revocation fails, and c wakes up during a's next read.
        if (++attempts === 1) throw new Error('fence store unavailable');
        group.fences.push(fence);
        group.membership.inject({ type: 'error' }, { caller: 'a', operations: ['update'] });
        thawAfterRead = true;
      },
    });
    await group.settle(['a', 'c']);
    c.clock.pause();
    await group.step(TIMING.leaseDurationMs + 2 * TIMING.retryPeriodMs);
    await group.settle(['a', 'c']);
    expect(attempts).toBe(2);
    expect(a.member.phase).toBe('member');
    expect(group.violations).toEqual([]);
  });

  it('scales 1 → 4 → 1 one member at a time with every key always on at most one member', async () => {
    const group = await started('m0');
    const ids = ['m0'];
    for (const id of ['m1', 'm2', 'm3']) {
      group.add(id);
      ids.push(id);
      await group.settle(ids);
    }
    for (const id of ['m3', 'm1', 'm2']) {
      const running = group.get(id);
      running.stop.abort();
      await running.done;
      ids.splice(ids.indexOf(id), 1);
      await group.settle(ids);
    }
    expect(group.violations).toEqual([]);
  });
});
