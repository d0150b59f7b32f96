import { ExpiredError, InternalError, TooManyRequestsError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { ResponseDecodeError } from '../errors.ts';
import { decodeWatchEvent } from './watch-event.ts';

const META = { apiVersion: 'example.com/v1', kind: 'Widget' };
const line = (value: unknown): string => JSON.stringify(value);

describe('decodeWatchEvent', () => {
  it('decodes ADDED, MODIFIED and DELETED, filling in apiVersion and kind the server left out', () => {
    for (const type of ['ADDED', 'MODIFIED', 'DELETED'] as const) {
      expect(decodeWatchEvent(line({ type, object: { metadata: { name: 'w' } } }), META)).toEqual({
        type,
        object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
      });
    }
    const kept = decodeWatchEvent(
      line({ type: 'ADDED', object: { apiVersion: 'x/v2', kind: 'X', metadata: {} } }),
      META,
    );
    expect(kept).toMatchObject({ object: { apiVersion: 'x/v2', kind: 'X' } });
  });

  it('decodes a BOOKMARK, marking the one that ends the initial events', () => {
    expect(
      decodeWatchEvent(line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } }), META),
    ).toEqual({
      type: 'BOOKMARK',
      resourceVersion: '9',
    });
    const end = { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } };
    expect(decodeWatchEvent(line({ type: 'BOOKMARK', object: { metadata: end } }), META)).toEqual({
      type: 'BOOKMARK',
      resourceVersion: '10',
      initialEventsEnd: true,
    });
  });

  it('throws the typed error of an ERROR event: 410 Expired, 429 with retryAfterSeconds, 500', () => {
    const status = (code: number, reason: string, details = {}) =>
      line({
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: `m${code}`,
          reason,
          code,
          details,
        },
      });
    expect(() => decodeWatchEvent(status(410, 'Expired'), META)).toThrow(ExpiredError);
    expect(() => decodeWatchEvent(status(410, 'Gone'), META)).toThrow(ExpiredError);
    expect(() => decodeWatchEvent(status(500, 'InternalError'), META)).toThrow(InternalError);
    try {
      decodeWatchEvent(status(429, 'TooManyRequests', { retryAfterSeconds: 3 }), META);
      expect.fail('expected a TooManyRequestsError');
    } catch (error) {
      expect(error).toBeInstanceOf(TooManyRequestsError);
      expect((error as TooManyRequestsError).details.retryAfterSeconds).toBe(3);
    }
  });

  const malformed: [string, string, string][] = [
    ['text that is not JSON', 'not json', '(line)'],
    ['JSON that is not an object', '[1,2]', '(line)'],
    ['an event without object', line({ type: 'ADDED' }), 'object'],
    ['an object without metadata', line({ type: 'ADDED', object: { spec: {} } }), 'object.metadata'],
    ['an unknown type', line({ type: 'CHANGED', object: { metadata: {} } }), 'type'],
    [
      'a BOOKMARK without resourceVersion',
      line({ type: 'BOOKMARK', object: { metadata: {} } }),
      'object.metadata.resourceVersion',
    ],
    ['an ERROR without a Status', line({ type: 'ERROR', object: { metadata: {} } }), 'object'],
  ];
  for (const [what, text, field] of malformed) {
    it(`${what} is a ResponseDecodeError on ${field}`, () => {
      try {
        decodeWatchEvent(text, META);
        expect.fail('expected a ResponseDecodeError');
      } catch (error) {
        expect(error).toBeInstanceOf(ResponseDecodeError);
        expect((error as ResponseDecodeError).field).toBe(field);
      }
    });
  }
});
