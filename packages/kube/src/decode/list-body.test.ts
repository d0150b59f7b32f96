import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseDecodeError } from '../errors.ts';
import { decodeListBody } from './list-body.ts';

function body(text: string, chunk = 7): AsyncIterable<Buffer> {
  const bytes = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) parts.push(bytes.subarray(i, i + chunk));
  return Readable.from(parts);
}

describe('decodeListBody', () => {
  it('decodes the same list whether it is small (one JSON.parse) or large (split item by item)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ metadata: fc.record({ name: fc.string() }), data: fc.jsonValue({ maxDepth: 2 }) }),
          { maxLength: 10 },
        ),
        async (items) => {
          const text = JSON.stringify({ kind: 'List', metadata: { resourceVersion: '3' }, items });
          const whole = await decodeListBody(body(text), 1 << 20, 1 << 20);
          const split = await decodeListBody(body(text), 1 << 20, 16);
          const expected = JSON.parse(JSON.stringify(items));
          expect(whole.items).toEqual(expected);
          expect(split.items).toEqual(expected);
          expect(whole.envelope).toEqual({ kind: 'List', metadata: { resourceVersion: '3' } });
          expect(split.envelope).toEqual({ kind: 'List', metadata: { resourceVersion: '3' }, items: [] });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rejects malformed small bodies with a ResponseDecodeError naming the field', async () => {
    for (const [text, field] of [
      ['not json', '(body)'],
      ['[1]', '(body)'],
      ['{"items":{}}', 'items'],
    ] as const) {
      const error = await decodeListBody(body(text), 1 << 20).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ResponseDecodeError);
      expect((error as ResponseDecodeError).field).toBe(field);
    }
  });
});
