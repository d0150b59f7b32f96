import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../backend/index.ts';
import { flushMicrotasks } from '../testing/index.ts';
import { runMembershipSuite } from './membership-suite.ts';
import { MemoryMembership } from './memory-membership.ts';
import type { MemberRecord } from './record.ts';

runMembershipSuite('MemoryMembership', () => {
  const group = new MemoryMembership({ group: 'shards' });
  const other = new MemoryMembership({ group: 'others' });
  return { group: group.member('a'), same: group.member('b'), other };
});

const live = (): AbortSignal => new AbortController().signal;
const record = (identity: string): MemberRecord => ({
  identity,
  epoch: 1,
  claim: [identity],
  revoked: {},
  leaseDurationMs: 1_000,
  renewTime: '',
});

describe('MemoryMembership faults', () => {
  it('fails, hangs, loses answers and hides for the member and operations named, as many times as asked', async () => {
    const shared = new MemoryMembership();
    await shared.create(record('x'), live());
    await shared.create(record('y'), live());
    shared.inject({ type: 'hide', identities: ['y'] }, { caller: 'a', count: 2 });
    shared.inject({ type: 'error' }, { caller: 'b', operations: ['update'] });
    const a = shared.member('a');
    const b = shared.member('b');
    expect((await a.list(live())).map((r) => r.record.identity)).toEqual(['x']);
    expect((await b.list(live())).map((r) => r.record.identity)).toEqual(['x', 'y']);
    expect((await a.list(live())).map((r) => r.record.identity)).toEqual(['x']);
    expect((await a.list(live())).map((r) => r.record.identity)).toEqual(['x', 'y']);
    const version = shared.records.get('x')?.version ?? '';
    await expect(b.update(record('x'), version, live())).rejects.toBeInstanceOf(UnavailableError);
    await b.update(record('x'), version, live());
    shared.inject({ type: 'hang' });
    const controller = new AbortController();
    const hung = a.list(controller.signal);
    await flushMicrotasks();
    controller.abort();
    await expect(hung).rejects.toThrow(/aborted/);
    shared.inject({ type: 'lostResponse' }, { caller: 'b', operations: ['update'] });
    const y = shared.records.get('y')?.version ?? '';
    const lost = new AbortController();
    const write = b.update({ ...record('y'), epoch: 2 }, y, lost.signal);
    await flushMicrotasks();
    lost.abort();
    await expect(write).rejects.toThrow(/aborted/);
    expect(shared.records.get('y')?.record.epoch).toBe(2); // applied all the same
    shared.remove('x');
    expect([...shared.records.keys()]).toEqual(['y']);
  });
});
