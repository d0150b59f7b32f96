import { BackendError } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseDecodeError, WatchLineTooLongError } from '../errors.ts';
import { LineDecoder } from './line-decoder.ts';
import { decodeWatchEvent } from './watch-event.ts';

/** Splits `bytes` at the given cut points (sorted, deduplicated, inside the buffer). */
function chunks(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    out.push(bytes.subarray(start, point));
    start = point;
  }
  return out;
}

function decodeAll(decoder: LineDecoder, parts: readonly Buffer[]): string[] {
  const lines = parts.flatMap((part) => decoder.push(part));
  const last = decoder.end();
  return last === undefined ? lines : [...lines, last];
}

describe('LineDecoder', () => {
  it('splits lines at any chunk boundary, also inside multi-byte UTF-8 characters', () => {
    const line = fc
      .string({ unit: 'grapheme', maxLength: 40 })
      .filter((s) => !/[\r\n]/.test(s) && s.trim() !== '');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 10 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
        expect(decodeAll(new LineDecoder(1 << 20), chunks(bytes, cuts))).toEqual(lines);
      }),
      { numRuns: 300 },
    );
  });

  it('drops \\r of \\r\\n endings and blank lines, and returns an unterminated last line from end()', () => {
    const decoder = new LineDecoder(100);
    expect(decoder.push(Buffer.from('{"a":1}\r\n\n  \n{"b"'))).toEqual(['{"a":1}']);
    expect(decoder.push(Buffer.from(':2}'))).toEqual([]);
    expect(decoder.end()).toBe('{"b":2}');
    expect(decoder.end()).toBeUndefined();
  });

  it('throws WatchLineTooLongError as soon as one line passes the cap, before its newline arrives', () => {
    const decoder = new LineDecoder(10);
    expect(decoder.push(Buffer.from('0123456789\nabc'))).toEqual(['0123456789']);
    expect(() => decoder.push(Buffer.from('defghijk'))).toThrow(WatchLineTooLongError);
  });

  it('decodes arbitrary bytes split anywhere into events or typed errors, never a crash', () => {
    const fragments = fc.oneof(
      fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
      fc
        .constantFrom(
          '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n',
          '{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}\n',
          '{"type":"BOOKMARK","object":{"metadata":{}}}\n',
          '{"type":"MODIFIED","object":[]}\n',
          '{"type":',
          '\n',
          '"\\u00e9"}',
          '\u00e9\u{1F600}',
        )
        .map((s) => Buffer.from(s)),
    );
    fc.assert(
      fc.property(
        fc.array(fragments, { maxLength: 15 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (parts, cuts) => {
          const decoder = new LineDecoder(64);
          const meta = { apiVersion: 'v1', kind: 'ConfigMap' };
          try {
            for (const line of decodeAll(decoder, chunks(Buffer.concat(parts), cuts)))
              decodeWatchEvent(line, meta);
          } catch (error) {
            const typed =
              error instanceof ResponseDecodeError ||
              error instanceof WatchLineTooLongError ||
              error instanceof BackendError;
            expect(typed, String(error)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
