import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ExpiredError,
  ForbiddenError,
  InternalError,
  InvalidError,
  NotFoundError,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
  UnsupportedError,
} from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../errors.ts';
import { errorFromResponse, errorFromStatus, retryAfterSeconds, type Status } from './status-error.ts';

const status = (reason: string, code: number, details?: Status['details']): Status => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message: `${reason} happened`,
  reason,
  code,
  ...(details === undefined ? {} : { details }),
});

describe('errors from metav1.Status', () => {
  const byReason: [string, number, abstract new (...args: never[]) => Error][] = [
    ['NotFound', 404, NotFoundError],
    ['AlreadyExists', 409, AlreadyExistsError],
    ['Conflict', 409, ConflictError],
    ['Invalid', 422, InvalidError],
    ['BadRequest', 400, BadRequestError],
    ['Expired', 410, ExpiredError],
    ['Gone', 410, ExpiredError],
    ['Forbidden', 403, ForbiddenError],
    ['Unauthorized', 401, UnauthorizedError],
    ['ServiceUnavailable', 503, UnavailableError],
    ['Timeout', 504, TimeoutError],
    ['ServerTimeout', 500, TimeoutError],
    ['TooManyRequests', 429, TooManyRequestsError],
    ['UnsupportedMediaType', 415, UnsupportedError],
    ['MethodNotAllowed', 405, UnsupportedError],
    ['InternalError', 500, InternalError],
  ];
  for (const [reason, code, type] of byReason) {
    it(`maps reason ${reason} to ${type.name}, keeping the message`, () => {
      const error = errorFromStatus(status(reason, code));
      expect(error).toBeInstanceOf(type);
      expect(error.message).toBe(`${reason} happened`);
    });
  }

  it('falls back to the code when the reason is unknown or missing', () => {
    expect(errorFromStatus({ kind: 'Status', code: 404 })).toBeInstanceOf(NotFoundError);
    expect(errorFromStatus({ kind: 'Status', reason: 'Whatever', code: 422 })).toBeInstanceOf(InvalidError);
    expect(errorFromStatus({ kind: 'Status' }, 503)).toBeInstanceOf(UnavailableError);
    expect(errorFromStatus({ kind: 'Status', code: 502 })).toBeInstanceOf(UnavailableError);
    expect(errorFromStatus({ kind: 'Status', code: 418 })).toBeInstanceOf(BadRequestError);
  });

  it('carries details: name, group, resource kind, uid, causes and retryAfterSeconds', () => {
    const error = errorFromStatus(
      status('Invalid', 422, {
        name: 'w',
        group: 'example.com',
        kind: 'Widget',
        uid: 'u-1',
        causes: [
          { reason: 'FieldValueInvalid', message: 'bad', field: 'spec.size' },
          { message: 'no field' },
        ],
        retryAfterSeconds: 2,
      }),
    );
    expect(error.details).toEqual({
      name: 'w',
      group: 'example.com',
      kind: 'Widget',
      uid: 'u-1',
      causes: [
        { reason: 'FieldValueInvalid', message: 'bad', field: 'spec.size' },
        { reason: '', message: 'no field', field: '' },
      ],
      retryAfterSeconds: 2,
    });
    expect((error as InvalidError).causes[0]?.field).toBe('spec.size');
  });

  it('takes retryAfterSeconds from the Retry-After header when the Status has none', () => {
    expect(errorFromStatus(status('TooManyRequests', 429), 429, 7).details.retryAfterSeconds).toBe(7);
    expect(
      errorFromStatus(status('TooManyRequests', 429, { retryAfterSeconds: 3 }), 429, 7).details
        .retryAfterSeconds,
    ).toBe(3);
  });

  it('makes a "too large resource version" timeout an ExpiredError, so informers relist instead of retrying it', () => {
    const error = errorFromStatus(
      status('Timeout', 504, {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      }),
    );
    expect(error).toBeInstanceOf(ExpiredError);
  });

  it('maps a body that is not a Status by HTTP status, quoting the start of the body', () => {
    const error = errorFromResponse(502, '<html>Bad Gateway</html>');
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toContain('HTTP 502: <html>Bad Gateway</html>');
    expect(errorFromResponse(404, JSON.stringify(status('NotFound', 404)))).toBeInstanceOf(NotFoundError);
    expect(errorFromResponse(429, '', 4).details.retryAfterSeconds).toBe(4);
  });
});

describe('retryAfterSeconds', () => {
  it('reads delta-seconds and HTTP dates, and ignores garbage', () => {
    expect(retryAfterSeconds('5', 0)).toBe(5);
    expect(retryAfterSeconds(['2'], 0)).toBe(2);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterSeconds('Tue, 01 Jan 2030 00:00:10 GMT', now)).toBe(10);
    expect(retryAfterSeconds('Mon, 31 Dec 2029 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(undefined, now)).toBeUndefined();
  });
});
