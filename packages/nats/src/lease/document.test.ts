import { formatMicroTime, InvalidError, type LeaderRecord } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeKvLease, encodeKvLease, type KvLeaseDocument } from './document.ts';
import { KvLeaseInvalidError } from './errors.ts';
import { malformedLeaseValue } from './test-harness.ts';

const where = { bucket: 'leases', key: 'default.operator', revision: 42 };
const text = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

const leaderRecord: fc.Arbitrary<LeaderRecord> = fc.record({
  holderIdentity: fc.string({ unit: 'binary' }),
  leaseDurationMs: fc.double({ min: 0, max: 1e12, noNaN: true }).map((ms) => ms + 0),
  acquireTime: fc.oneof(
    fc.constant(''),
    fc.integer({ min: 0, max: 253_402_300_799_999 }).map(formatMicroTime),
  ),
  renewTime: fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 253_402_300_799_999 }).map(formatMicroTime)),
  leaderTransitions: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
});

describe('KvLease documents', () => {
  it('round-trip every leader record, field for field', () => {
    fc.assert(
      fc.property(leaderRecord, (record) => {
        expect(decodeKvLease(encodeKvLease(record), where).record).toEqual(record);
      }),
    );
  });

  it('read a document without spec, or with an empty one, as a free record', () => {
    const free = {
      holderIdentity: '',
      leaseDurationMs: 0,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 0,
    };
    expect(decodeKvLease(text({ apiVersion: 'converge.dev/v1', kind: 'KvLease' }), where).record).toEqual(
      free,
    );
    expect(
      decodeKvLease(text({ apiVersion: 'converge.dev/v1', kind: 'KvLease', spec: {} }), where).record,
    ).toEqual(free);
  });

  it('keep the fields of the document they replace that they do not know', () => {
    const base = {
      apiVersion: 'converge.dev/v1',
      kind: 'KvLease',
      extra: [1],
      spec: { note: 'x', holderIdentity: 'old' },
    };
    const { document } = decodeKvLease(text(base), where);
    const record: LeaderRecord = {
      holderIdentity: 'new',
      leaseDurationMs: 10,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 1,
    };
    expect(JSON.parse(new TextDecoder().decode(encodeKvLease(record, document as KvLeaseDocument)))).toEqual({
      apiVersion: 'converge.dev/v1',
      kind: 'KvLease',
      extra: [1],
      spec: { note: 'x', holderIdentity: 'new', leaseDurationMs: 10, leaseTransitions: 1 },
    });
  });

  it('never decode malformed bytes to anything but a KvLeaseInvalidError naming the bucket, key and problem', () => {
    fc.assert(
      fc.property(malformedLeaseValue, ({ bytes, mentions }) => {
        let error: unknown;
        try {
          decodeKvLease(bytes, where);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(KvLeaseInvalidError);
        expect(error).toMatchObject({ bucket: 'leases', key: 'default.operator', revision: 42 });
        expect((error as Error).message).toContain('nats:leases/default.operator');
        expect((error as Error).message).toContain(mentions);
      }),
      { numRuns: 500 },
    );
  });

  it('say what is wrong: not JSON, another version, a wrongly typed field', () => {
    const problem = (bytes: Uint8Array): string => {
      try {
        decodeKvLease(bytes, where);
        return 'no error';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problem(new Uint8Array([0xff, 0xfe]))).toContain('is not UTF-8 JSON');
    expect(problem(text({ apiVersion: 'converge.dev/v2', kind: 'KvLease' }))).toContain('"converge.dev/v2"');
    expect(
      problem(text({ apiVersion: 'converge.dev/v1', kind: 'KvLease', spec: { holderIdentity: null } })),
    ).toBe(
      'invalid leader record in nats:leases/default.operator: spec.holderIdentity must be a string, got null (revision 42)',
    );
  });

  it('refuse to encode a record they could not decode, with an InvalidError', () => {
    const record: LeaderRecord = {
      holderIdentity: 'a',
      leaseDurationMs: 1,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 0,
    };
    expect(() => encodeKvLease({ ...record, leaseDurationMs: -1 })).toThrow(InvalidError);
    expect(() => encodeKvLease({ ...record, leaseDurationMs: Number.POSITIVE_INFINITY })).toThrow(
      InvalidError,
    );
    expect(() => encodeKvLease({ ...record, leaderTransitions: 0.5 })).toThrow(InvalidError);
    expect(() => encodeKvLease({ ...record, acquireTime: 'now' })).toThrow(InvalidError);
  });
});
