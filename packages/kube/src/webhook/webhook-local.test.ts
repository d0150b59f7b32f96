/**
 * `WebhookServer.localDispatcher`: the in-process way an API server in the same process (`converge
 * dev`) calls the webhooks — given only where an HTTPS call would succeed (this server's URL, a CA
 * bundle that trusts its certificate for the name), and answering exactly as HTTPS does.
 */
import { allowed, denied } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookServer } from './webhook-server.ts';
import {
  admissionReview,
  type RunningServer,
  runServer,
  type Website,
  website,
} from './webhook-test-support.ts';

describe('a webhook server answering in process', () => {
  let running: RunningServer;
  let other: RunningServer;
  beforeAll(async () => {
    const register = (server: WebhookServer): void => {
      server.mutating<Website>('/default-website', {
        default(object) {
          object.spec.replicas ??= 1;
        },
      });
      server.validating<Website>('/validate-website', {
        validate(request) {
          return (request.object?.spec.replicas ?? 0) > 5 ? denied('at most 5 replicas') : allowed();
        },
      });
    };
    running = await runServer(register, { maxAdmissionBodyBytes: 64 * 1024 });
    other = await runServer(register);
  });
  afterAll(async () => {
    await running.stop();
    await other.stop();
  });

  const signal = new AbortController().signal;

  it('is offered only for its own https URL, under a CA bundle that trusts its certificate for the name', () => {
    const { server, url, ca } = running;
    const port = new URL(url).port;
    expect(server.localDispatcher(new URL(`https://127.0.0.1:${port}/x`), ca, undefined)).toBeTypeOf(
      'function',
    );
    expect(server.localDispatcher(new URL(`https://localhost:${port}/x`), ca, undefined)).toBeTypeOf(
      'function',
    );
    // another port, scheme or host: not this server
    expect(
      server.localDispatcher(new URL(`https://127.0.0.1:${Number(port) + 1}/x`), ca, undefined),
    ).toBeUndefined();
    expect(server.localDispatcher(new URL(`http://127.0.0.1:${port}/x`), ca, undefined)).toBeUndefined();
    expect(server.localDispatcher(new URL(`https://10.1.2.3:${port}/x`), ca, undefined)).toBeUndefined();
    // a CA that did not issue its certificate, or none (the system roots would not trust it either)
    expect(
      server.localDispatcher(new URL(`https://127.0.0.1:${port}/x`), other.ca, undefined),
    ).toBeUndefined();
    expect(
      server.localDispatcher(new URL(`https://127.0.0.1:${port}/x`), undefined, undefined),
    ).toBeUndefined();
    expect(
      server.localDispatcher(new URL(`https://127.0.0.1:${port}/x`), 'not a PEM', undefined),
    ).toBeUndefined();
    // a service's name its certificate does not carry
    expect(
      server.localDispatcher(new URL(`https://127.0.0.1:${port}/x`), ca, 'web.default.svc'),
    ).toBeUndefined();
    // a bundle holding the right CA among others is fine
    expect(
      server.localDispatcher(new URL(`https://127.0.0.1:${port}/x`), `${other.ca}\n${ca}`, 'localhost'),
    ).toBeTypeOf('function');
  });

  it('answers every review as HTTPS does: a patch, a denial, an unknown path, a body over the limit', async () => {
    const { server, url, ca } = running;
    const dispatch = server.localDispatcher(new URL(url), ca, undefined);
    if (dispatch === undefined) throw new Error('no local dispatch for the server itself');
    const cases: [string, unknown][] = [
      ['/default-website?timeout=10s', admissionReview({ object: website() })],
      ['/validate-website', admissionReview({ object: website({ replicas: 9 }) })],
      ['/validate-website', admissionReview({ object: website({ replicas: 2 }) })],
      ['/no-such-hook', admissionReview({ object: website() })],
      ['/validate-website', admissionReview({ object: { ...website(), padding: 'x'.repeat(70 * 1024) } })],
      ['/validate-website', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }],
    ];
    const answers: unknown[] = [];
    for (const [path, review] of cases) {
      const overHttps = await running.post(path, review);
      const local = await dispatch(path, JSON.stringify(review), signal);
      expect(local.status, path).toBe(overHttps.status);
      expect(JSON.parse(local.body), path).toEqual(overHttps.json);
      answers.push({ code: local.status, body: JSON.parse(local.body) as unknown });
    }
    // the cases are what they say: a patch, a denial, an allowance, 404, 413, 400
    expect(answers).toMatchObject([
      { code: 200, body: { response: { allowed: true, patchType: 'JSONPatch' } } },
      { code: 200, body: { response: { allowed: false, status: { message: 'at most 5 replicas' } } } },
      { code: 200, body: { response: { allowed: true } } },
      { code: 404, body: { kind: 'Status', code: 404 } },
      { code: 413, body: { kind: 'Status', code: 413 } },
      { code: 400, body: { kind: 'Status', code: 400 } },
    ]);
  });

  it('is not offered before the server listens', () => {
    const idle = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      tls: { generate: { hosts: ['127.0.0.1'] } },
    });
    expect(idle.localDispatcher(new URL('https://127.0.0.1:443/x'), running.ca, undefined)).toBeUndefined();
  });
});
