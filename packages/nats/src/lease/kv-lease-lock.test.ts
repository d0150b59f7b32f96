import {
  AbortedError,
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  type LeaderRecord,
  LeaderRecordInvalidError,
  NotFoundError,
  OptionsError,
  UnavailableError,
} from '@converge/runtime';
import { runLeaderLockSuite } from '@converge/runtime/testing/leader-lock-suite';
import type { KV } from '@nats-io/kv';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl, uniqueSuffix } from '../test-harness.ts';
import { KvLeaseInvalidError } from './errors.ts';
import { KvLeaseLock } from './kv-lease-lock.ts';
import { DEFAULT_LEASE_HISTORY } from './options.ts';
import { connectTo, createTestBucket, malformedLeaseValue, type TestBucket } from './test-harness.ts';

let connection: NatsConnection;
const buckets: TestBucket[] = [];
const live = (): AbortSignal => new AbortController().signal;

beforeAll(async () => {
  connection = await connectTo(await sharedNatsUrl());
});
afterEach(async () => {
  await Promise.all(buckets.splice(0).map((b) => b.destroy()));
});
afterAll(async () => {
  await connection.close();
});

async function bucket(history = 1): Promise<TestBucket> {
  const created = await createTestBucket(connection, history);
  buckets.push(created);
  return created;
}

const lockOn = (kv: KV, identity: string, key = 'operator'): KvLeaseLock =>
  new KvLeaseLock({ kv, key, identity });

const record: LeaderRecord = {
  holderIdentity: 'a',
  leaseDurationMs: 15_000,
  acquireTime: '2024-05-06T07:08:09.123000Z',
  renewTime: '2024-05-06T07:08:10.456000Z',
  leaderTransitions: 7,
};
const put = (kv: KV, value: unknown, key = 'operator'): Promise<number> =>
  kv.put(key, typeof value === 'string' ? value : JSON.stringify(value));

runLeaderLockSuite('KvLeaseLock on NATS', async () => {
  const { kv } = await bucket();
  return [lockOn(kv, 'a'), lockOn(kv, 'b')];
});

describe('KvLeaseLock', () => {
  it('stores a versioned Lease-like JSON document under its key, and its revision as the version', async () => {
    const { kv, name } = await bucket();
    const version = await lockOn(kv, 'a').create(record, live());
    const entry = await kv.get('operator');
    expect(entry?.revision).toBe(Number(version));
    expect(entry?.json()).toEqual({
      apiVersion: 'converge.dev/v1',
      kind: 'KvLease',
      spec: {
        holderIdentity: 'a',
        leaseDurationMs: 15_000,
        acquireTime: '2024-05-06T07:08:09.123000Z',
        renewTime: '2024-05-06T07:08:10.456000Z',
        leaseTransitions: 7,
      },
    });
    expect(lockOn(kv, 'a').describe()).toBe(`nats:${name}/operator`);
  });

  it('keeps a lease duration that is not whole seconds exactly, and omits empty times', async () => {
    const { kv } = await bucket();
    const lock = lockOn(kv, 'a');
    const released = {
      ...record,
      holderIdentity: '',
      leaseDurationMs: 1_500,
      acquireTime: '',
      renewTime: '',
    };
    await lock.create(released, live());
    expect((await kv.get('operator'))?.json()).toEqual({
      apiVersion: 'converge.dev/v1',
      kind: 'KvLease',
      spec: { holderIdentity: '', leaseDurationMs: 1_500, leaseTransitions: 7 },
    });
    expect((await lock.get(live()))?.record).toEqual(released);
  });

  it('reads a key whose last operation is a delete or a purge as no record, and creates over it', async () => {
    const { kv } = await bucket(5);
    const lock = lockOn(kv, 'a');
    const v1 = await lock.create(record, live());
    await kv.delete('operator');
    expect(await lock.get(live())).toBeUndefined();
    const v2 = await lock.create(record, live());
    expect(Number(v2)).toBeGreaterThan(Number(v1));
    expect(await lock.get(live())).toEqual({ record, version: v2 });
    await kv.purge('operator');
    expect(await lock.get(live())).toBeUndefined();
    await expect(lock.update(record, v2, live())).rejects.toBeInstanceOf(ConflictError);
    await lock.create(record, live());
    await expect(lock.create(record, live())).rejects.toBeInstanceOf(AlreadyExistsError);
  });

  it('rejects an update of a key that was never written with a ConflictError, naming the NATS error as cause', async () => {
    const { kv } = await bucket();
    const error: unknown = await lockOn(kv, 'a')
      .update(record, '1', live())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).cause).toMatchObject({ name: 'JetStreamApiError', code: 10071 });
    expect(await kv.get('operator')).toBeNull();
  });

  it('rejects a version that is not a revision with a ConflictError, without writing', async () => {
    const { kv } = await bucket();
    const lock = lockOn(kv, 'a');
    const version = await lock.create(record, live());
    for (const bad of ['', '0', '-1', '01', '1.5', 'abc', ' 1', '99999999999999999999']) {
      await expect(lock.update(record, bad, live())).rejects.toBeInstanceOf(ConflictError);
    }
    expect((await lock.get(live()))?.version).toBe(version);
  });

  it('keeps fields of the document it does not know when it updates it', async () => {
    const { kv } = await bucket();
    await put(kv, {
      apiVersion: 'converge.dev/v1',
      kind: 'KvLease',
      metadata: { note: 'keep' },
      spec: { holderIdentity: 'old', leaseDurationMs: 10_000, strategy: 'OldestEmulationVersion' },
    });
    const lock = lockOn(kv, 'a');
    const current = await lock.get(live());
    expect(current?.record).toEqual({
      holderIdentity: 'old',
      leaseDurationMs: 10_000,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 0,
    });
    await lock.update(record, current?.version ?? '', live());
    expect((await kv.get('operator'))?.json()).toMatchObject({
      metadata: { note: 'keep' },
      spec: { holderIdentity: 'a', strategy: 'OldestEmulationVersion', leaseTransitions: 7 },
    });
  });

  it('reports an entry that is not a lease document as KvLeaseInvalidError naming bucket, key and revision', async () => {
    const { kv, name } = await bucket();
    const revision = await put(kv, {
      apiVersion: 'converge.dev/v1',
      kind: 'KvLease',
      spec: { leaseDurationMs: 'ten' },
    });
    const error: unknown = await lockOn(kv, 'a')
      .get(live())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KvLeaseInvalidError);
    expect(error).toBeInstanceOf(LeaderRecordInvalidError);
    expect(error).toMatchObject({
      code: 'CONVERGE_ERR_LEADER_RECORD_INVALID',
      bucket: name,
      key: 'operator',
      revision,
      lock: `nats:${name}/operator`,
    });
    expect((error as Error).message).toContain('spec.leaseDurationMs');
    expect((error as Error).message).toContain(`nats:${name}/operator`);
  });

  it('never crashes on a malformed entry: get rejects with KvLeaseInvalidError, and recovers once the entry is deleted', async () => {
    const { kv, name } = await bucket();
    const lock = lockOn(kv, 'a');
    await fc.assert(
      fc.asyncProperty(malformedLeaseValue, async ({ bytes, mentions }) => {
        const revision = await kv.put('operator', bytes);
        const error: unknown = await lock.get(live()).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KvLeaseInvalidError);
        expect(error).toMatchObject({ bucket: name, key: 'operator', revision });
        expect((error as Error).message).toContain(mentions);
      }),
      { numRuns: 150 },
    );
    await kv.delete('operator');
    expect(await lock.get(live())).toBeUndefined();
    const version = await lock.create(record, live());
    expect(await lock.get(live())).toEqual({ record, version });
  });

  it('refuses to write a record it could not read back, with an InvalidError, and writes nothing', async () => {
    const { kv } = await bucket();
    const lock = lockOn(kv, 'a');
    await expect(lock.create({ ...record, leaderTransitions: -1 }, live())).rejects.toBeInstanceOf(
      InvalidError,
    );
    await expect(lock.create({ ...record, renewTime: 'yesterday' }, live())).rejects.toBeInstanceOf(
      InvalidError,
    );
    await expect(lock.create({ ...record, leaseDurationMs: Number.NaN }, live())).rejects.toBeInstanceOf(
      InvalidError,
    );
    expect(await kv.get('operator')).toBeNull();
  });

  it('rejects at once, sending nothing, when the signal already aborted', async () => {
    const { kv } = await bucket();
    const lock = lockOn(kv, 'a');
    const aborted = AbortSignal.abort(new Error('stop'));
    await expect(lock.get(aborted)).rejects.toBeInstanceOf(AbortedError);
    await expect(lock.create(record, aborted)).rejects.toBeInstanceOf(AbortedError);
    const version = await lock.create(record, live());
    await expect(lock.update({ ...record, holderIdentity: 'b' }, version, aborted)).rejects.toMatchObject({
      code: 'CONVERGE_ERR_ABORTED',
      cause: new Error('stop'),
    });
    expect((await lock.get(live()))?.record.holderIdentity).toBe('a');
  });

  it('rejects promptly when the signal aborts while the call is in flight', async () => {
    const never = new Promise<never>(() => {});
    const kv = { get: () => never, create: () => never, update: () => never } as unknown as KV;
    const lock = new KvLeaseLock({ kv, bucket: 'hung', key: 'operator', identity: 'a' });
    for (const call of [
      (s: AbortSignal) => lock.get(s),
      (s: AbortSignal) => lock.create(record, s),
      (s: AbortSignal) => lock.update(record, '3', s),
    ]) {
      const abort = new AbortController();
      const pending = call(abort.signal);
      setTimeout(() => abort.abort(new Error('deadline')), 5);
      await expect(pending).rejects.toBeInstanceOf(AbortedError);
    }
  });

  it('maps a closed connection to a retryable UnavailableError with the NATS error as cause', async () => {
    const own = await connectTo(await sharedNatsUrl());
    const created = await bucket();
    const lock = new KvLeaseLock({
      kv: await new Kvm(own).open(created.name),
      key: 'operator',
      identity: 'a',
    });
    await own.close();
    const error: unknown = await lock.get(live()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).retryable).toBe(true);
    expect((error as Error).cause).toMatchObject({ name: 'ClosedConnectionError' });
  });

  it('reports a bucket that does not exist as NotFoundError, or UnavailableError where NATS only says no responders', async () => {
    const missing = `lease-missing-${uniqueSuffix()}`;
    const lock = new KvLeaseLock({
      kv: await new Kvm(connection).open(missing),
      key: 'operator',
      identity: 'a',
    });
    await expect(lock.get(live())).rejects.toBeInstanceOf(NotFoundError);
    await expect(lock.create(record, live())).rejects.toBeInstanceOf(NotFoundError);
    const error: unknown = await lock.update(record, '1', live()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain(`nats:${missing}/operator`);
  });
});

describe('KvLeaseLock.open', () => {
  it('creates a missing bucket keeping several revisions per key, and opens an existing one as it is', async () => {
    const name = `lease-open-${uniqueSuffix()}`;
    const lock = await KvLeaseLock.open({ connection, bucket: name, key: 'operator', identity: 'a' });
    const kv = await new Kvm(connection).open(name);
    buckets.push({ name, kv, destroy: async () => void (await kv.destroy()) });
    expect((await kv.status()).history).toBe(DEFAULT_LEASE_HISTORY);
    await lock.create(record, live());
    const again = await KvLeaseLock.open({
      connection,
      bucket: name,
      key: 'operator',
      identity: 'b',
      history: 3,
    });
    expect((await kv.status()).history).toBe(DEFAULT_LEASE_HISTORY);
    expect((await again.get(live()))?.record).toEqual(record);
    expect(again.describe()).toBe(`nats:${name}/operator`);
  });

  it('rejects with NotFoundError when the bucket is missing and createBucket is false', async () => {
    const name = `lease-absent-${uniqueSuffix()}`;
    await expect(
      KvLeaseLock.open({ connection, bucket: name, createBucket: false, key: 'k', identity: 'a' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    const { name: existing } = await bucket();
    const lock = await KvLeaseLock.open({
      connection,
      bucket: existing,
      createBucket: false,
      key: 'k',
      identity: 'a',
    });
    expect(await lock.get(live())).toBeUndefined();
  });

  it('defaults to the converge-leases bucket, and opens over a kv handle as the constructor does', async () => {
    const { kv, name } = await bucket();
    const lock = await KvLeaseLock.open({ kv, key: 'operator', identity: 'a' });
    expect(lock.describe()).toBe(`nats:${name}/operator`);
    const aborted = AbortSignal.abort();
    const error: unknown = await KvLeaseLock.open({ connection, key: 'k', identity: 'a' }, aborted).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AbortedError);
    expect((error as Error).message).toContain('nats:converge-leases/k');
  });
});

describe('KvLeaseLock options', () => {
  const kv = { get: () => null, create: () => 1, update: () => 2, bucket: 'b' } as unknown as KV;

  it('maps namespace and name to the key <namespace>.<name>, distinct pairs to distinct keys', () => {
    expect(new KvLeaseLock({ kv, namespace: 'default', name: 'op', identity: 'a' }).key).toBe('default.op');
    expect(new KvLeaseLock({ kv, namespace: 'default', name: 'op.v2', identity: 'a' }).key).toBe(
      'default.op.v2',
    );
    expect(new KvLeaseLock({ kv, namespace: 'default-op', name: 'v2', identity: 'a' }).key).toBe(
      'default-op.v2',
    );
    expect(new KvLeaseLock({ kv, namespace: 'x', name: 'y', identity: 'a' }).describe()).toBe('nats:b/x.y');
  });

  it('rejects invalid keys, names, namespaces, buckets, identities and handles with OptionsError naming the field', () => {
    const bad = (options: Record<string, unknown>, field: string): void => {
      expect(() => new KvLeaseLock({ kv, identity: 'a', key: 'k', ...options } as never)).toThrow(
        expect.objectContaining({ name: 'OptionsError', field }),
      );
    };
    for (const key of ['', '.k', 'k.', 'a..b', 'a b', 'a*', 'a>', 'ä', '_kv.x', 7]) bad({ key }, 'key');
    bad({ key: 'k', namespace: 'n', name: 'm' }, 'key');
    bad({ key: undefined }, 'key');
    bad({ key: undefined, namespace: 'a.b', name: 'm' }, 'namespace');
    bad({ key: undefined, namespace: 'Default', name: 'm' }, 'namespace');
    bad({ key: undefined, namespace: 'n' }, 'name');
    bad({ key: undefined, namespace: 'n', name: 'a b' }, 'name');
    bad({ identity: '' }, 'identity');
    bad({ bucket: 'a.b' }, 'bucket');
    bad({ kv: {} }, 'kv');
    bad({ kv: { get() {}, create() {}, update() {} } }, 'bucket');
    bad({ connection }, 'connection');
    expect(() => new KvLeaseLock(undefined as never)).toThrow(OptionsError);
  });

  it('rejects invalid open options with OptionsError before touching NATS', async () => {
    const open = (options: Record<string, unknown>) =>
      KvLeaseLock.open({ connection, identity: 'a', key: 'k', ...options } as never);
    await expect(open({ history: 0 })).rejects.toMatchObject({ field: 'history' });
    await expect(open({ history: 65 })).rejects.toMatchObject({ field: 'history' });
    await expect(open({ replicas: 1.5 })).rejects.toMatchObject({ field: 'replicas' });
    await expect(open({ createBucket: 'yes' })).rejects.toMatchObject({ field: 'createBucket' });
    await expect(open({ connection: {} })).rejects.toMatchObject({ field: 'connection' });
    await expect(open({ bucket: '' })).rejects.toMatchObject({ field: 'bucket' });
  });
});
