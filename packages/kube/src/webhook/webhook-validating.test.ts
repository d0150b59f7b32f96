import { type AdmissionRequest, allowed, denied } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeErrorCodes } from '../errors.ts';
import {
  admissionReview,
  type RunningServer,
  responseOf,
  runServer,
  type Website,
  website,
} from './webhook-test-support.ts';

describe('validating webhooks over HTTPS', () => {
  let running: RunningServer;
  const seen: AdmissionRequest<Website>[] = [];

  beforeAll(async () => {
    running = await runServer((server) => {
      server.validating<Website>('/validate-website', {
        validate(request) {
          seen.push(request);
          const domain = request.object?.spec.domain ?? request.oldObject?.spec.domain ?? '';
          if (domain.includes(' ')) {
            return denied('spec.domain must not contain spaces', {
              code: 422,
              reason: 'Invalid',
              details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.domain' }] },
              warnings: ['check spec.domain'],
            });
          }
          if (domain.endsWith('.test')) return denied('test domains are not allowed here');
          if (domain.startsWith('old.')) return allowed({ warnings: ['old. domains are deprecated'] });
          return allowed();
        },
      });
      server.validating('/throws', {
        validate() {
          throw new Error('database unreachable');
        },
      });
      server.validating('/returns-nothing', {
        validate: () => undefined as never,
      });
    });
  });
  afterAll(() => running.stop());

  it('admits a valid object, echoing the uid in an admission.k8s.io/v1 review', async () => {
    const answer = await running.post('/validate-website', admissionReview({ object: website() }));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'b4a3f1d2-0000-4000-8000-000000000001', allowed: true },
    });
  });

  it('denies with the message, code, reason, details and warnings the validator gave', async () => {
    const answer = await running.post(
      '/validate-website',
      admissionReview({ uid: 'deny-1', object: website({ domain: 'my blog' }) }),
    );
    expect(responseOf(answer)).toEqual({
      uid: 'deny-1',
      allowed: false,
      status: {
        metadata: {},
        status: 'Failure',
        code: 422,
        reason: 'Invalid',
        message: 'spec.domain must not contain spaces',
        details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.domain' }] },
      },
      warnings: ['check spec.domain'],
    });
  });

  it('denies with 403 Forbidden by default, as controller-runtime does', async () => {
    const answer = await running.post(
      '/validate-website',
      admissionReview({ object: website({ domain: 'a.test' }) }),
    );
    expect(responseOf(answer)).toMatchObject({
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'test domains are not allowed here' },
    });
  });

  it('returns the warnings of an admitted request', async () => {
    const answer = await running.post(
      '/validate-website',
      admissionReview({ object: website({ domain: 'old.x' }) }),
    );
    expect(responseOf(answer)).toEqual({
      uid: 'b4a3f1d2-0000-4000-8000-000000000001',
      allowed: true,
      warnings: ['old. domains are deprecated'],
    });
  });

  it('hands the handler every field of the request, dryRun and options included', async () => {
    seen.length = 0;
    const old = website({ domain: 'old.example.com' });
    await running.post(
      '/validate-website',
      admissionReview({
        uid: 'fields-1',
        operation: 'UPDATE',
        subResource: 'status',
        object: website(),
        oldObject: old,
        dryRun: true,
        options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl' },
        userInfo: { username: 'bob', uid: 'u-2', groups: ['devs'], extra: { scopes: ['a', 'b'] } },
      }),
    );
    expect(seen).toHaveLength(1);
    const request = seen[0] as AdmissionRequest<Website>;
    expect({ ...request, signal: undefined }).toEqual({
      uid: 'fields-1',
      reviewVersion: 'admission.k8s.io/v1',
      operation: 'UPDATE',
      kind: { group: 'example.com', version: 'v1', kind: 'Website' },
      resource: { group: 'example.com', version: 'v1', resource: 'websites' },
      subResource: 'status',
      requestKind: { group: 'example.com', version: 'v1', kind: 'Website' },
      requestResource: { group: 'example.com', version: 'v1', resource: 'websites' },
      requestSubResource: 'status',
      name: 'blog',
      namespace: 'default',
      userInfo: { username: 'bob', uid: 'u-2', groups: ['devs'], extra: { scopes: ['a', 'b'] } },
      object: website(),
      oldObject: old,
      dryRun: true,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl' },
      signal: undefined,
    });
    expect(request.signal.aborted).toBe(false);
  });

  it('validates a DELETE, which carries object: null and the deleted object as oldObject', async () => {
    seen.length = 0;
    const answer = await running.post(
      '/validate-website',
      admissionReview({ operation: 'DELETE', object: null, oldObject: website({ domain: 'gone.test' }) }),
    );
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(seen[0]?.object).toBeNull();
    expect(seen[0]?.oldObject?.spec.domain).toBe('gone.test');
  });

  it('answers an admission.k8s.io/v1beta1 review in v1beta1', async () => {
    const answer = await running.post(
      '/validate-website',
      admissionReview({ uid: 'beta-1', object: website({ domain: 'x.test' }) }, 'admission.k8s.io/v1beta1'),
    );
    expect(answer.json).toMatchObject({
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      response: { uid: 'beta-1', allowed: false },
    });
  });

  it('turns a throwing handler into a denial with code 500 and its message, logs it, and keeps serving', async () => {
    const answer = await running.post('/throws', admissionReview({ uid: 'throw-1', object: website() }));
    expect(answer.status).toBe(200);
    expect(responseOf(answer)).toEqual({
      uid: 'throw-1',
      allowed: false,
      status: {
        metadata: {},
        status: 'Failure',
        code: 500,
        reason: 'InternalError',
        message: 'webhook /throws: the handler threw: database unreachable',
      },
    });
    const logged = running.logger.records.find((r) => r.message === 'Admission handler failed');
    expect(logged?.fields.code).toBe(KubeErrorCodes.WEBHOOK_HANDLER_FAILED);
    const next = await running.post('/validate-website', admissionReview({ object: website() }));
    expect(responseOf(next).allowed).toBe(true);
  });

  it('denies with code 500 when the validator returns something that is not allowed() or denied()', async () => {
    const answer = await running.post('/returns-nothing', admissionReview({ object: website() }));
    expect(responseOf(answer)).toMatchObject({
      allowed: false,
      status: {
        code: 500,
        message: 'webhook /returns-nothing: the validator returned undefined, not allowed() or denied()',
      },
    });
  });
});

describe('admission handler timeout', () => {
  it('denies with code 504 once the timeout passes on the clock, and aborts the handler signal', async () => {
    const clock = new VirtualClock();
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let signal: AbortSignal | undefined;
    const running = await runServer(
      (server) => {
        server.validating('/slow', {
          validate(request) {
            signal = request.signal;
            entered();
            return new Promise(() => {});
          },
        });
      },
      { clock, timeoutMs: 3_000 },
    );
    try {
      const pending = running.post('/slow', admissionReview({ uid: 'slow-1', object: website() }));
      await inside;
      await clock.advance(2_999);
      expect(signal?.aborted).toBe(false);
      await clock.advance(1);
      const answer = await pending;
      expect(responseOf(answer)).toEqual({
        uid: 'slow-1',
        allowed: false,
        status: {
          metadata: {},
          status: 'Failure',
          code: 504,
          reason: 'Timeout',
          message: 'webhook /slow did not answer within 3000 ms',
        },
      });
      expect(signal?.aborted).toBe(true);
      const logged = running.logger.records.find((r) => r.message === 'Admission handler timed out');
      expect(logged?.fields.code).toBe(KubeErrorCodes.WEBHOOK_HANDLER_TIMEOUT);
    } finally {
      await running.stop();
    }
  });

  it("uses the API server's shorter ?timeout= instead of timeoutMs", async () => {
    const clock = new VirtualClock();
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const running = await runServer(
      (server) => {
        server.validating('/slow', {
          validate() {
            entered();
            return new Promise(() => {});
          },
        });
      },
      { clock, timeoutMs: 10_000 },
    );
    try {
      const pending = running.post('/slow?timeout=2s', admissionReview({ object: website() }));
      await inside;
      await clock.advance(2_000);
      expect(responseOf(await pending)).toMatchObject({
        allowed: false,
        status: { code: 504, message: 'webhook /slow did not answer within 2000 ms' },
      });
    } finally {
      await running.stop();
    }
  });
});
