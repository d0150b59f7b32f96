import {
  AbortedError,
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  InternalError,
  NotFoundError,
  UnavailableError,
} from '@converge/runtime';
import { JetStreamApiError } from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { fromNatsError } from './errors.ts';

const where = { bucket: 'leases', key: 'operator' };
const apiError = (code: number, errCode: number, description: string): JetStreamApiError =>
  new JetStreamApiError({ code, err_code: errCode, description });

describe('fromNatsError', () => {
  it('maps a wrong last sequence to ConflictError on update and AlreadyExistsError on create', () => {
    const wrong = apiError(400, 10071, 'wrong last sequence: 4');
    expect(fromNatsError(wrong, 'update', where)).toBeInstanceOf(ConflictError);
    expect(fromNatsError(wrong, 'create', where)).toBeInstanceOf(AlreadyExistsError);
    expect(
      fromNatsError(apiError(400, 10164, 'wrong last sequence unknown'), 'update', where),
    ).toBeInstanceOf(ConflictError);
  });

  it('maps connection trouble to a retryable UnavailableError, keeping the NATS error as cause', () => {
    const errors = [
      new TimeoutError(),
      new ClosedConnectionError(),
      new RequestError('no responders', { cause: new NoRespondersError('$KV.leases.operator') }),
      new RequestError('request failed'),
      apiError(503, 10008, 'JetStream system temporarily unavailable'),
      apiError(503, 10039, 'jetstream not enabled for account'),
    ];
    for (const error of errors) {
      const mapped = fromNatsError(error, 'get', where);
      expect(mapped).toBeInstanceOf(UnavailableError);
      expect((mapped as UnavailableError).retryable).toBe(true);
      expect(mapped.cause).toBe(error);
      expect(mapped.message).toContain('nats:leases/operator');
    }
  });

  it('maps a missing stream, permission errors, bad requests and anything else to their backend errors', () => {
    expect(fromNatsError(apiError(404, 10059, 'stream not found'), 'get', where)).toBeInstanceOf(
      NotFoundError,
    );
    const denied = new PermissionViolationError('denied', 'publish', '$KV.leases.operator');
    expect(fromNatsError(denied, 'update', where)).toBeInstanceOf(ForbiddenError);
    expect(fromNatsError(new RequestError('denied', { cause: denied }), 'update', where)).toBeInstanceOf(
      ForbiddenError,
    );
    expect(
      fromNatsError(apiError(400, 10054, 'message size exceeds maximum'), 'update', where),
    ).toBeInstanceOf(BadRequestError);
    expect(fromNatsError(apiError(500, 10999, 'something'), 'update', where)).toBeInstanceOf(InternalError);
    expect(fromNatsError(new Error('surprise'), 'get', where)).toBeInstanceOf(InternalError);
    expect(fromNatsError('a string', 'get', where)).toMatchObject({
      name: 'InternalError',
      cause: 'a string',
    });
  });

  it('passes Converge errors through unchanged', () => {
    const aborted = new AbortedError('get aborted');
    expect(fromNatsError(aborted, 'get', where)).toBe(aborted);
  });
});
