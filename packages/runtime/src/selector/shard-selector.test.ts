import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { objectSelector } from './object-selector.ts';
import { fnv1a64 } from './shard-hash.ts';
import { matchesShard, parseShardSelector, shardSelectorFor } from './shard-selector.ts';

const LOWER = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
const UPPER = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

describe('fnv1a64', () => {
  it('matches the published FNV-1a 64 test vectors', () => {
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n);
  });

  it('equals the plain bigint definition on any string, ASCII or not', () => {
    const reference = (value: string): bigint =>
      [...new TextEncoder().encode(value)].reduce(
        (h, b) => ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn,
        0xcbf29ce484222325n,
      );
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.uuid()), (value) => {
        expect(fnv1a64(value)).toBe(reference(value));
      }),
      { numRuns: 300 },
    );
  });

  it('hashes the UTF-8 bytes, not UTF-16 code units', () => {
    // 'é' is 0xc3 0xa9 in UTF-8: two rounds of the byte loop
    const manual = [0xc3, 0xa9].reduce(
      (h, b) => ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn,
      0xcbf29ce484222325n,
    );
    expect(fnv1a64('é')).toBe(manual);
  });
});

describe('parseShardSelector', () => {
  it('reads one range with its field and half-open bounds', () => {
    const selector = parseShardSelector(LOWER);
    expect(selector.field).toBe('object.metadata.uid');
    expect(selector.ranges).toEqual([{ start: 0n, end: 0x8000000000000000n }]);
    expect(selector.toString()).toBe(LOWER);
  });

  it('reads ranges joined by ||, parentheses, no spaces and extra spaces alike', () => {
    const both = `${LOWER} || ${UPPER}`;
    expect(parseShardSelector(both).toString()).toBe(both);
    expect(parseShardSelector(`(${LOWER}) || (${UPPER})`).ranges).toHaveLength(2);
    expect(
      parseShardSelector(
        'shardRange(object.metadata.uid,\'0x0000000000000000\',"0x8000000000000000")',
      ).toString(),
    ).toBe(LOWER);
    expect(
      parseShardSelector(
        "  shardRange( object.metadata.namespace ,  '0x00000000000000aa' , '0x00000000000000ff' ) ",
      ).field,
    ).toBe('object.metadata.namespace');
  });

  it.each([
    ['', 'empty shard selector is not allowed'],
    ['   ', 'empty shard selector is not allowed'],
    ["shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')", "must have '0x' prefix"],
    ["shardRange(object.metadata.uid, '0x', '0x8000000000000000')", "hex value is required after '0x'"],
    ["shardRange(object.metadata.name, '0x00', '0x80')", 'unsupported field path "object.metadata.name"'],
    ["invalidFunc(object.metadata.uid, '0x00', '0x80')", 'unsupported function "invalidFunc"'],
    ["shardRange(object.metadata.uid, '0x000000000000000000', '0x80')", 'hex value too long'],
    ["shardRange(object.metadata.uid, '0x0g', '0x80')", 'invalid hex character "g"'],
    [
      "shardRange(object.metadata.uid, '0xFFFFFFFFFFFFFFFF', '0x10000000000000000')",
      'invalid hex character "F"',
    ],
    [`${LOWER} && ${UPPER}`, 'unsupported operator "&&"'],
    ['shardRange(object.metadata.uid, 0, 8)', 'must be a string literal'],
    ["object.metadata.uid > '0x0'", 'unsupported operator ">"'],
    ["shardRange(object.metadata.uid, '0x0000000000000000')", 'requires exactly 3 arguments, got 2'],
    ["shardRange(object.metadata.uid, hex(0), '0x8000000000000000')", 'must be a string literal'],
    [
      `${LOWER} || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')`,
      'all shard ranges must use the same field',
    ],
    ["shardRange(object.metadata.uid, '0x0', '0x8000000000000000')", 'did you mean "0x0000000000000000"'],
    [
      "shardRange(object.metadata.uid, '0x11111111111111111', '0x8000000000000000')",
      "must be '0x10000000000000000'",
    ],
    [
      "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
      'shard range start 0x8000000000000000 must be less than end 0x8000000000000000',
    ],
    [`${LOWER} ||`, 'expected shardRange( at position'],
    [`${LOWER})`, 'expected "||" or the end'],
    ["shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'", 'expected "," or ")"'],
    [
      "shardRange(object.metadata.uid, '0x0000000000000000, '0x8000000000000000')",
      'unterminated string literal',
    ],
    [
      "shardRange(object.metadata.uid, '0x\\x30', '0x8000000000000000')",
      'escape sequences are not supported',
    ],
    ['shardRange', 'expected shardRange() call or || operator'],
  ])('refuses %j with a BadRequestError', (text, message) => {
    let thrown: unknown;
    try {
      parseShardSelector(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequestError);
    expect((thrown as BadRequestError).status).toBe(400);
    expect((thrown as Error).message).toMatch(/^invalid shard selector: /);
    expect((thrown as Error).message).toContain(message);
  });

  it('never crashes on arbitrary input: a selector or a BadRequestError', () => {
    const pieces = fc.constantFrom(
      'shardRange',
      '(',
      ')',
      ',',
      '||',
      '&&',
      ' ',
      'object.metadata.uid',
      'object.metadata.namespace',
      "'0x0000000000000000'",
      "'0x8000000000000000'",
      "'0x10000000000000000'",
      "'0x",
      '"',
      '0',
      '.',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(pieces).map((p) => p.join('')),
        ),
        (text) => {
          try {
            const selector = parseShardSelector(text);
            expect(parseShardSelector(selector.toString()).toString()).toBe(selector.toString());
          } catch (error) {
            expect(error).toBeInstanceOf(BadRequestError);
          }
        },
      ),
    );
  });
});

describe('matchesShard', () => {
  it('keeps objects whose hash is in [start, end): the start in, the end out', () => {
    const uid = 'test-uid-123';
    const hash = fnv1a64(uid);
    const at = (start: bigint, end: bigint): string =>
      `shardRange(object.metadata.uid, '0x${start.toString(16).padStart(16, '0')}', '0x${end.toString(16).padStart(16, '0')}')`;
    expect(matchesShard({ metadata: { uid } }, at(hash, hash + 1n))).toBe(true);
    expect(matchesShard({ metadata: { uid } }, at(hash - 1n, hash))).toBe(false);
  });

  it('hashes the namespace when asked, and a missing field as the empty string', () => {
    const selector = parseShardSelector(
      "shardRange(object.metadata.namespace, '0xcbf29ce484222325', '0xcbf29ce484222326')",
    );
    expect(selector.matches({ metadata: {} })).toBe(true);
    expect(selector.matches({ metadata: { namespace: '' } })).toBe(true);
    expect(selector.matches({ metadata: { namespace: 'default' } })).toBe(false);
  });

  it('joins ranges with OR', () => {
    expect(matchesShard({ metadata: { uid: 'x' } }, `${LOWER} || ${UPPER}`)).toBe(true);
  });

  it('is applied by objectSelector with the other selectors', () => {
    const upper = objectSelector({ shardSelector: UPPER, labelSelector: 'app=web' });
    const lower = objectSelector({ shardSelector: LOWER });
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', uid: 'u-1', labels: { app: 'web' } },
    };
    expect(upper(object) || lower(object)).toBe(true);
    expect(upper(object) && lower(object)).toBe(false);
    expect(objectSelector({ shardSelector: '' })(object)).toBe(true);
    expect(() => objectSelector({ shardSelector: 'nope' })).toThrow(BadRequestError);
  });
});

describe('shardSelectorFor', () => {
  it('splits the hash space into equal halves for two shards', () => {
    expect(shardSelectorFor(0, 2)).toBe(LOWER);
    expect(shardSelectorFor(1, 2)).toBe(UPPER);
    expect(shardSelectorFor(0, 1)).toBe(
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
    );
    expect(shardSelectorFor(0, 4, 'namespace')).toContain('object.metadata.namespace');
  });

  it('gives n disjoint shards that select every uid exactly once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.array(fc.string(), { maxLength: 30 }), (n, uids) => {
        const shards = Array.from({ length: n }, (_, i) => parseShardSelector(shardSelectorFor(i, n)));
        for (const uid of uids) {
          const owners = shards.filter((s) => s.matches({ metadata: { uid } }));
          expect(owners).toHaveLength(1);
        }
        for (let i = 1; i < n; i++) {
          expect((shards[i] as (typeof shards)[0]).ranges[0]?.start).toBe(
            (shards[i - 1] as (typeof shards)[0]).ranges[0]?.end,
          );
        }
      }),
    );
  });

  it.each([
    [0, 0],
    [-1, 2],
    [2, 2],
    [0.5, 2],
    [0, Number.NaN],
  ])('refuses shard %d of %d with an OptionsError', (index, count) => {
    expect(() => shardSelectorFor(index, count)).toThrow(OptionsError);
  });
});
