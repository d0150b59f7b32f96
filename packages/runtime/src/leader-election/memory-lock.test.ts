import { describe, expect, it } from 'vitest';
import { ConflictError, isConflict, UnavailableError } from '../backend/index.ts';
import { AbortedError, OptionsError } from '../errors.ts';
import { runLeaderLockSuite } from './lock-suite.ts';
import { MemoryLock } from './memory-lock.ts';
import type { LeaderRecord } from './record.ts';

runLeaderLockSuite('MemoryLock', () => {
  const shared = new MemoryLock();
  return [shared.locker('a'), shared.locker('b')];
});

const record = (holder: string): LeaderRecord => ({
  holderIdentity: holder,
  leaseDurationMs: 15_000,
  acquireTime: '2024-01-01T00:00:00.000000Z',
  renewTime: '2024-01-01T00:00:00.000000Z',
  leaderTransitions: 0,
});
const live = (): AbortSignal => new AbortController().signal;

describe('MemoryLock faults', () => {
  it('fails the next N matching calls of one locker with the injected error, then recovers', async () => {
    const shared = new MemoryLock();
    const a = shared.locker('a');
    const b = shared.locker('b');
    shared.inject({ type: 'error' }, { identity: 'a', operations: ['get'], count: 2 });
    await expect(b.get(live())).resolves.toBeUndefined();
    await expect(a.get(live())).rejects.toBeInstanceOf(UnavailableError);
    await expect(a.get(live())).rejects.toBeInstanceOf(UnavailableError);
    await expect(a.get(live())).resolves.toBeUndefined();
    expect(shared.calls).toBe(4);
  });

  it('throws the error given to the fault', async () => {
    const shared = new MemoryLock();
    shared.inject({ type: 'error', error: new ConflictError('boom') });
    await expect(shared.locker('a').create(record('a'), live())).rejects.toBeInstanceOf(ConflictError);
    expect(shared.current).toBeUndefined();
  });

  it('hangs a call until its signal aborts, without writing', async () => {
    const shared = new MemoryLock();
    shared.inject({ type: 'hang' });
    const abort = new AbortController();
    let settled = false;
    const call = shared
      .locker('a')
      .create(record('a'), abort.signal)
      .finally(() => {
        settled = true;
      });
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    abort.abort(new Error('deadline'));
    await expect(call).rejects.toBeInstanceOf(AbortedError);
    expect(shared.current).toBeUndefined();
  });

  it('applies a write whose response is lost, then hangs until the signal aborts', async () => {
    const shared = new MemoryLock();
    shared.inject({ type: 'lostResponse' }, { operations: ['create'] });
    const abort = new AbortController();
    const call = shared.locker('a').create(record('a'), abort.signal);
    await new Promise((r) => setImmediate(r));
    expect(shared.current?.record.holderIdentity).toBe('a');
    abort.abort();
    await expect(call).rejects.toBeInstanceOf(AbortedError);
  });

  it('makes an update conflict by rewriting the record just before it', async () => {
    const shared = new MemoryLock();
    const a = shared.locker('a');
    const version = await a.create(record('a'), live());
    shared.inject({ type: 'conflict' }, { operations: ['update'] });
    const error: unknown = await a.update(record('a'), version, live()).catch((e: unknown) => e);
    expect(isConflict(error)).toBe(true);
    expect(shared.current?.version).not.toBe(version);
    expect(shared.current?.record).toEqual(record('a'));
  });

  it('lets an outside writer replace the record, bumping the version', async () => {
    const shared = new MemoryLock();
    const v1 = await shared.locker('a').create(record('a'), live());
    const v2 = shared.set(record('intruder'));
    expect(v2).not.toBe(v1);
    expect((await shared.locker('b').get(live()))?.record.holderIdentity).toBe('intruder');
  });

  it('drops unused faults on clearFaults', async () => {
    const shared = new MemoryLock();
    shared.inject({ type: 'error' }, { count: 5 });
    shared.clearFaults();
    await expect(shared.locker('a').get(live())).resolves.toBeUndefined();
  });

  it('rejects a locker without identity and a fault with a bad count or operation', () => {
    const shared = new MemoryLock();
    expect(() => shared.locker('')).toThrow(OptionsError);
    expect(() => shared.inject({ type: 'hang' }, { count: 0 })).toThrow(OptionsError);
    expect(() => shared.inject({ type: 'hang' }, { operations: ['delete' as 'get'] })).toThrow(OptionsError);
  });
});
