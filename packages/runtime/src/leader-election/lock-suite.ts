import { describe, expect, it } from 'vitest';
import { isAlreadyExists, isConflict } from '../backend/index.ts';
import type { LeaderLock } from './lock.ts';
import type { LeaderRecord } from './record.ts';

/** Two lockers with distinct identities over one fresh record that does not exist yet. */
export type LockPair = readonly [LeaderLock, LeaderLock];

const record = (holder: string, transitions: number, at = '2024-05-06T07:08:09.123000Z'): LeaderRecord => ({
  holderIdentity: holder,
  leaseDurationMs: 15_000,
  acquireTime: at,
  renewTime: at,
  leaderTransitions: transitions,
});

const live = (): AbortSignal => new AbortController().signal;

/**
 * The conformance suite every {@link LeaderLock} passes (the memory lock, the Lease lock, the NATS
 * KV lock): a missing record reads as undefined, writes round-trip, create never overwrites, and
 * every update names a version — a stale one is a ConflictError, so of two racing writers exactly
 * one wins. Needs vitest.
 *
 * @example
 * runLeaderLockSuite('LeaseLock on the store', () => {
 *   const backend = new Store({ types: [leaseType] });
 *   const lock = (identity: string) => new LeaseLock({ backend, namespace: 'default', name: 'l', identity });
 *   return [lock('a'), lock('b')];
 * });
 */
export function runLeaderLockSuite(name: string, makePair: () => LockPair | Promise<LockPair>): void {
  describe(`LeaderLock conformance: ${name}`, () => {
    it('reads a record that does not exist yet as undefined', async () => {
      const [a] = await makePair();
      expect(await a.get(live())).toBeUndefined();
    });

    it('creates a record that every locker reads back field for field with the version create returned', async () => {
      const [a, b] = await makePair();
      const version = await a.create(record('a', 0), live());
      expect(typeof version).toBe('string');
      expect(await b.get(live())).toEqual({ record: record('a', 0), version });
    });

    it('never lets create overwrite an existing record', async () => {
      const [a, b] = await makePair();
      await a.create(record('a', 0), live());
      const error: unknown = await b.create(record('b', 1), live()).catch((e: unknown) => e);
      expect(isAlreadyExists(error)).toBe(true);
      expect((await a.get(live()))?.record.holderIdentity).toBe('a');
    });

    it('replaces the record when the update names the current version, and returns a new version', async () => {
      const [a, b] = await makePair();
      const v1 = await a.create(record('a', 0), live());
      const next = record('b', 1, '2024-05-06T07:08:30.000000Z');
      const v2 = await b.update(next, v1, live());
      expect(v2).not.toBe(v1);
      expect(await a.get(live())).toEqual({ record: next, version: v2 });
    });

    it('rejects an update naming a stale version with a ConflictError and keeps the record', async () => {
      const [a, b] = await makePair();
      const v1 = await a.create(record('a', 0), live());
      const v2 = await a.update(record('a', 0, '2024-05-06T07:08:11.000000Z'), v1, live());
      const error: unknown = await b.update(record('b', 1), v1, live()).catch((e: unknown) => e);
      expect(isConflict(error)).toBe(true);
      expect(await b.get(live())).toEqual({
        record: record('a', 0, '2024-05-06T07:08:11.000000Z'),
        version: v2,
      });
    });

    it('lets exactly one of two updates naming the same version win', async () => {
      const [a, b] = await makePair();
      const v1 = await a.create(record('', 0), live());
      const results = await Promise.allSettled([
        a.update(record('a', 1), v1, live()),
        b.update(record('b', 1), v1, live()),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost.map((r) => isConflict(r.reason))).toEqual([true]);
      const winner = results[0]?.status === 'fulfilled' ? 'a' : 'b';
      expect((await a.get(live()))?.record.holderIdentity).toBe(winner);
    });

    it('rejects a call whose signal already aborted and writes nothing', async () => {
      const [a] = await makePair();
      const aborted = AbortSignal.abort(new Error('stop'));
      await expect(a.create(record('a', 0), aborted)).rejects.toThrow();
      expect(await a.get(live())).toBeUndefined();
    });

    it('describes itself for logs and carries its identity', async () => {
      const [a, b] = await makePair();
      expect(a.describe()).toMatch(/\S/);
      expect(a.describe()).toBe(b.describe());
      expect(a.identity).not.toBe(b.identity);
    });
  });
}
