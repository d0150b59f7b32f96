import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreCorruptError } from '../errors.ts';
import { encodeRecord, type LogRecord, readLog } from './log-reader.ts';
import { frame, LOG_MAGIC } from './record-codec.ts';

const recordArbitrary = fc.record({
  typeId: fc.constantFrom('/v1/configmaps', 'example.com/v1/widgets'),
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  deleted: fc.boolean(),
  data: fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
});

type Spec = typeof recordArbitrary extends fc.Arbitrary<infer T> ? T : never;

function buildLog(specs: Spec[]): {
  bytes: Buffer;
  records: LogRecord[];
  ends: number[];
} {
  const records: LogRecord[] = specs.map((s, i) => ({
    revision: i + 2,
    typeId: s.typeId,
    key: `default\u0000${s.name}`,
    object: s.deleted
      ? undefined
      : ({
          metadata: { name: s.name, namespace: 'default', resourceVersion: String(i + 2) },
          data: s.data,
        } as never),
  }));
  const parts = [LOG_MAGIC, ...records.map((r) => frame(encodeRecord(r)))];
  const ends: number[] = [];
  let offset = 0;
  for (const part of parts) {
    offset += part.length;
    ends.push(offset);
  }
  return { bytes: Buffer.concat(parts), records, ends };
}

const logs = fc.array(recordArbitrary, { minLength: 1, maxLength: 12 }).map(buildLog);

describe('log reader', () => {
  it('reads back every record written', () => {
    fc.assert(
      fc.property(logs, ({ bytes, records }) => {
        const read = readLog(bytes, 'log');
        expect(read.records).toEqual(records);
        expect(read.torn).toBe(false);
        expect(read.validLength).toBe(bytes.length);
      }),
    );
  });

  it('a log cut at any byte yields exactly the complete records before the cut, as a torn tail', () => {
    fc.assert(
      fc.property(logs, fc.nat(), ({ bytes, records, ends }, seed) => {
        const cut = seed % (bytes.length + 1);
        const read = readLog(bytes.subarray(0, cut), 'log');
        const complete = ends.filter((end) => end <= cut).length - 1;
        expect(read.records).toEqual(records.slice(0, Math.max(0, complete)));
        expect(read.validLength).toBe(complete < 0 ? 0 : (ends[complete] as number));
        expect(read.torn).toBe(cut !== read.validLength);
      }),
      { numRuns: 500 },
    );
  });

  it('flipped bytes give a prefix of the written records or a StoreCorruptError, never anything else', () => {
    fc.assert(
      fc.property(
        logs,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 3 }),
        ({ bytes, records }, flips) => {
          const damaged = Buffer.from(bytes);
          for (const [at, mask] of flips) {
            const i = at % damaged.length;
            damaged[i] = (damaged[i] as number) ^ mask;
          }
          try {
            const read = readLog(damaged, 'log');
            expect(records.slice(0, read.records.length)).toEqual(read.records);
            expect(read.records.length).toBeLessThan(records.length + 1);
          } catch (error) {
            expect(error).toBeInstanceOf(StoreCorruptError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('random bytes are a StoreCorruptError or an empty log, never a record', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (raw) => {
        try {
          expect(readLog(Buffer.from(raw), 'log').records).toEqual([]);
        } catch (error) {
          expect(error).toBeInstanceOf(StoreCorruptError);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('damage before the last record is corruption, reported with the offset of the bad record', () => {
    const { bytes, ends } = buildLog([
      { typeId: '/v1/configmaps', name: 'a', deleted: false, data: {} },
      { typeId: '/v1/configmaps', name: 'b', deleted: false, data: {} },
    ]);
    const damaged = Buffer.from(bytes);
    const inFirstPayload = (ends[0] as number) + 20;
    damaged[inFirstPayload] = (damaged[inFirstPayload] as number) ^ 1;
    const error = (() => {
      try {
        readLog(damaged, 'log');
        return undefined;
      } catch (e) {
        return e as StoreCorruptError;
      }
    })();
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect(error?.offset).toBe(ends[0]);
    expect(error?.code).toBe('CONVERGE_ERR_STORE_CORRUPT');
  });

  it('a last record whose payload never reached the disk (zeros) is a torn tail, not corruption', () => {
    const { bytes, records, ends } = buildLog([
      { typeId: '/v1/configmaps', name: 'a', deleted: false, data: {} },
      { typeId: '/v1/configmaps', name: 'b', deleted: false, data: { k: 'v' } },
    ]);
    const zeroedPayload = Buffer.from(bytes);
    zeroedPayload.fill(0, (ends[1] as number) + 12);
    expect(readLog(zeroedPayload, 'log')).toEqual({
      records: records.slice(0, 1),
      validLength: ends[1],
      torn: true,
    });
    const zeroedTail = Buffer.concat([bytes, Buffer.alloc(40)]);
    expect(readLog(zeroedTail, 'log')).toEqual({ records, validLength: bytes.length, torn: true });
  });

  it('records out of revision order are corruption', () => {
    const a = frame(encodeRecord({ revision: 5, typeId: 't', key: 'n\u0000a', object: undefined }));
    const b = frame(encodeRecord({ revision: 5, typeId: 't', key: 'n\u0000b', object: undefined }));
    expect(() => readLog(Buffer.concat([LOG_MAGIC, a, b]), 'log')).toThrow(StoreCorruptError);
  });
});
