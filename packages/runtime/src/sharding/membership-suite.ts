import { describe, expect, it } from 'vitest';
import { isAlreadyExists, isConflict, isNotFound } from '../backend/index.ts';
import { isConvergeError } from '../errors.ts';
import type { Membership } from './membership.ts';
import type { MemberRecord, VersionedMemberRecord } from './record.ts';

/** Fresh memberships over one store: two handles on one group, and one on another group. */
export interface MembershipFixture {
  readonly group: Membership;
  /** Another handle on the same group (another replica's). */
  readonly same: Membership;
  /** A handle on a different group in the same store. */
  readonly other: Membership;
}

const live = (): AbortSignal => new AbortController().signal;

const record = (identity: string, extra: Partial<MemberRecord> = {}): MemberRecord => ({
  identity,
  epoch: 1_765_000_000_123,
  claim: ['replica-a', 'replica-b'],
  revoked: { 'replica-c': 17 },
  leaseDurationMs: 1_500,
  renewTime: '2026-12-07T01:02:03.456000Z',
  ...extra,
});

const byIdentity = (records: readonly VersionedMemberRecord[]): MemberRecord[] =>
  records.map((r) => r.record).sort((a, b) => (a.identity < b.identity ? -1 : 1));

/**
 * The conformance suite every {@link Membership} passes (memory, Leases, NATS KV): records
 * round-trip field for field, create never overwrites, updates and deletes name a version (stale:
 * ConflictError; gone: NotFoundError on update, nothing on delete), a group lists only its own
 * records, and one scripted sequence of events leaves the same membership on every implementation.
 * Needs vitest.
 *
 * @example
 * runMembershipSuite('LeaseMembership on the store', () => {
 *   const backend = new Store({ types: [leaseType] });
 *   const on = (group: string) => new LeaseMembership({ backend, namespace: 'default', group });
 *   return { group: on('shards'), same: on('shards'), other: on('others') };
 * });
 */
export function runMembershipSuite(
  name: string,
  make: () => MembershipFixture | Promise<MembershipFixture>,
): void {
  describe(`Membership conformance: ${name}`, () => {
    it('lists nothing before anyone joined', async () => {
      const { group } = await make();
      expect(await group.list(live())).toEqual([]);
    });

    it('round-trips a record field for field, with the version create returned', async () => {
      const { group, same } = await make();
      const version = await group.create(record('replica-a'), live());
      expect(typeof version).toBe('string');
      expect(version).not.toBe('');
      const listed = await same.list(live());
      expect(listed).toEqual([{ record: record('replica-a'), version }]);
    });

    it('never overwrites on create', async () => {
      const { group, same } = await make();
      await group.create(record('replica-a'), live());
      const error = await same.create(record('replica-a', { epoch: 9 }), live()).catch((e: unknown) => e);
      expect(isAlreadyExists(error)).toBe(true);
      expect(byIdentity(await group.list(live()))[0]?.epoch).toBe(1_765_000_000_123);
    });

    it('updates only the version read: a stale one is a ConflictError, a missing record a NotFoundError', async () => {
      const { group, same } = await make();
      const v1 = await group.create(record('replica-a'), live());
      const v2 = await group.update(record('replica-a', { claim: [] }), v1, live());
      expect(v2).not.toBe(v1);
      const stale = await same.update(record('replica-a', { epoch: 2 }), v1, live()).catch((e: unknown) => e);
      expect(isConflict(stale)).toBe(true);
      const missing = await same.update(record('replica-z'), v1, live()).catch((e: unknown) => e);
      expect(isNotFound(missing)).toBe(true);
      expect(await group.list(live())).toEqual([{ record: record('replica-a', { claim: [] }), version: v2 }]);
    });

    it('deletes only the version named, and a delete of a record already gone succeeds', async () => {
      const { group, same } = await make();
      const v1 = await group.create(record('replica-a'), live());
      const v2 = await group.update(record('replica-a', { epoch: 1_765_000_000_124 }), v1, live());
      expect(isConflict(await same.delete('replica-a', v1, live()).catch((e: unknown) => e))).toBe(true);
      await same.delete('replica-a', v2, live());
      expect(await group.list(live())).toEqual([]);
      await group.delete('replica-a', v2, live());
      // A member that comes back creates its record afresh.
      await group.create(record('replica-a'), live());
      expect(byIdentity(await same.list(live()))).toEqual([record('replica-a')]);
    });

    it('lists only the records of its own group', async () => {
      const { group, other } = await make();
      await group.create(record('replica-a'), live());
      await other.create(record('replica-a', { epoch: 5 }), live());
      await other.create(record('replica-b'), live());
      expect(byIdentity(await group.list(live()))).toEqual([record('replica-a')]);
      expect(byIdentity(await other.list(live())).map((r) => r.identity)).toEqual(['replica-a', 'replica-b']);
    });

    it('rejects a call whose signal already aborted', async () => {
      const { group } = await make();
      const controller = new AbortController();
      controller.abort();
      const error = await group.list(controller.signal).catch((e: unknown) => e);
      expect(isConvergeError(error) || (error instanceof Error && error.name === 'AbortError')).toBe(true);
    });

    it('shows the same membership after the same events as every other implementation', async () => {
      const { group, same } = await make();
      const a = await group.create(record('replica-a', { claim: [] }), live());
      const b = await same.create(record('replica-b', { claim: [], revoked: {} }), live());
      await group.update(record('replica-a', { claim: ['replica-a', 'replica-b'], revoked: {} }), a, live());
      const b2 = await same.update(
        record('replica-b', { claim: ['replica-a', 'replica-b'], revoked: {} }),
        b,
        live(),
      );
      const c = await same.create(record('replica-c', { epoch: 3, claim: [], revoked: {} }), live());
      await group.delete('replica-c', c, live());
      await same.update(
        record('replica-b', { epoch: 1_765_000_000_124, claim: [], revoked: { 'replica-c': 4 } }),
        b2,
        live(),
      );
      expect(byIdentity(await group.list(live()))).toEqual([
        record('replica-a', { claim: ['replica-a', 'replica-b'], revoked: {} }),
        record('replica-b', { epoch: 1_765_000_000_124, claim: [], revoked: { 'replica-c': 4 } }),
      ]);
    });
  });
}
