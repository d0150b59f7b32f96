import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseDecodeError } from '../errors.ts';
import { ListDecoder } from './list-decoder.ts';

function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    out.push(bytes.subarray(start, point));
    start = point;
  }
  return out;
}

function decode(text: string, cuts: readonly number[] = [], limit = 1 << 20) {
  const decoder = new ListDecoder(limit);
  const items = split(Buffer.from(text, 'utf8'), cuts).flatMap((chunk) => decoder.push(chunk));
  return { items, envelope: decoder.end() };
}

/** Items with strings full of the characters a naive splitter trips on. */
const tricky = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => `${s}{}[]",:\\`.slice(0, 20));
const item = fc.record({
  metadata: fc.record({ name: tricky, labels: fc.dictionary(tricky, tricky, { maxKeys: 3 }) }),
  data: fc.jsonValue({ maxDepth: 3 }),
});

describe('ListDecoder', () => {
  it('cuts items out of a list split at any byte, whatever the formatting, and parses the rest at the end', () => {
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 8 }),
        fc.constantFrom(undefined, 1, 2),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        (items, indent, itemsFirst, cuts) => {
          const metadata = { resourceVersion: '42', continue: 'tok' };
          const list = itemsFirst
            ? { items, kind: 'ConfigMapList', apiVersion: 'v1', metadata }
            : { kind: 'ConfigMapList', apiVersion: 'v1', metadata, items };
          const result = decode(JSON.stringify(list, null, indent), cuts);
          expect(result.items).toEqual(JSON.parse(JSON.stringify(items)));
          expect(result.envelope).toEqual({ kind: 'ConfigMapList', apiVersion: 'v1', metadata, items: [] });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('accepts an empty list and items: null', () => {
    expect(decode('{"metadata":{"resourceVersion":"1"},"items":[]}').items).toEqual([]);
    expect(decode('{"metadata":{"resourceVersion":"1"},"items":null}').envelope).toMatchObject({
      items: null,
    });
  });

  const malformed: [string, string, string][] = [
    ['a truncated list', '{"metadata":{},"items":[{"a":1}', '(body)'],
    ['a list that is an array', '[{"a":1}]', '(body)'],
    ['an item that is not an object', '{"items":[{"a":1}, 7]}', 'items[1]'],
    ['an item that is not JSON', '{"items":[{"a":tru}]}', 'items[0]'],
    ['data after the list', '{"items":[]} {}', '(body)'],
    ['a broken envelope', '{"metadata":{"a" 1},"items":[]}', '(body)'],
  ];
  for (const [what, text, field] of malformed) {
    it(`throws a ResponseDecodeError on ${field} for ${what}`, () => {
      try {
        decode(text);
        expect.fail('expected a ResponseDecodeError');
      } catch (error) {
        expect(error).toBeInstanceOf(ResponseDecodeError);
        expect((error as ResponseDecodeError).field).toBe(field);
      }
    });
  }

  it('throws a ResponseDecodeError naming the item larger than the cap, across chunks', () => {
    const big = JSON.stringify({ items: [{ a: 'x' }, { a: 'y'.repeat(100) }] });
    expect(() => decode(big, [10, 20, 30, 40], 50)).toThrow(/items\[1\]: is larger than 50 bytes/);
  });

  it('never throws anything but ResponseDecodeError on arbitrary bytes', () => {
    const fragment = fc.oneof(
      fc.constantFrom('{', '}', '[', ']', '"items"', ':', ',', '"', '\\', '"metadata":{}', ' ', '1', 'null'),
      fc.string({ maxLength: 5 }),
    );
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (parts, cuts) => {
          try {
            decode(parts.join(''), cuts, 64);
          } catch (error) {
            expect(error, String(error)).toBeInstanceOf(ResponseDecodeError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
