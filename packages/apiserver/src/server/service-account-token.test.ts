import { VirtualClock } from '@converge/runtime/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, tokenKeys, verifyToken } from './service-account-token.ts';
import { startTestServer, type TestServer } from './test-support.ts';

const START = Date.UTC(2026, 10, 26, 12, 0, 0);
const clock = new VirtualClock({ startMs: START });
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ token: 'token-a', clock });
  await server.request('/api/v1/namespaces/default/serviceaccounts', {
    method: 'POST',
    body: { metadata: { name: 'ci' } },
  });
});
afterAll(async () => {
  await server.close();
});

async function issue(spec: Record<string, unknown>): Promise<string> {
  const res = await server.request('/api/v1/namespaces/default/serviceaccounts/ci/token', {
    method: 'POST',
    body: { spec },
  });
  expect(res.status, res.text).toBe(201);
  return (res.json as { status: { token: string } }).status.token;
}

async function review(token: string, audiences?: string[]): Promise<Record<string, unknown>> {
  const res = await server.request('/apis/authentication.k8s.io/v1/tokenreviews', {
    method: 'POST',
    body: { spec: { token, ...(audiences === undefined ? {} : { audiences }) } },
  });
  expect(res.status).toBe(201);
  return (res.json as { status: Record<string, unknown> }).status;
}

describe('ServiceAccount tokens over time, audiences and keys', () => {
  it('expire: accepted until exp, then TokenReview reports it and requests are 401', async () => {
    const token = await issue({ expirationSeconds: 600 });
    const issued = await server.request('/api/v1/namespaces/default/serviceaccounts/ci/token', {
      method: 'POST',
      body: { spec: { expirationSeconds: 600 } },
    });
    expect((issued.json as { status: { expirationTimestamp: string } }).status.expirationTimestamp).toBe(
      '2026-11-26T12:10:00Z',
    );
    expect((await review(token)).authenticated).toBe(true);
    expect(
      (
        await server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          method: 'POST',
          token,
          body: {},
        })
      ).status,
    ).toBe(201);
    await clock.advance(601_000);
    expect(await review(token)).toEqual({
      user: {},
      error: '[invalid bearer token, service account token has expired]',
    });
    expect((await server.request('/api', { token })).status).toBe(401);
  });

  it('carry their audiences: a token for another audience is not the API server’s', async () => {
    const token = await issue({ audiences: ['vault'] });
    expect(await review(token)).toEqual({
      user: {},
      error: '[invalid bearer token, token audiences is invalid for the target audiences]',
    });
    const forVault = await review(token, ['vault', 'other']);
    expect([forVault.authenticated, forVault.audiences]).toEqual([true, ['vault']]);
    expect((await server.request('/api', { token })).status).toBe(401);
  });

  it('are signed: a changed payload, a foreign key or garbage is never accepted', async () => {
    const token = await issue({});
    const [h, p, s] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url')}.${s}`;
    expect((await review(forged)).error).toBe('[invalid bearer token, token could not be validated.]');
    expect((await server.request('/api', { token: forged })).status).toBe(401);
    const foreign = issueToken(tokenKeys('token-b'), {
      namespace: 'default',
      name: 'ci',
      uid: '',
      audiences: ['https://kubernetes.default.svc.cluster.local'],
      expirationSeconds: 3600,
      nowMs: clock.now(),
    }).token;
    expect((await review(foreign)).authenticated).toBeUndefined();
    expect((await server.request('/api', { token: foreign })).status).toBe(401);
  });

  it('verifyToken never throws on hostile input (fast-check)', () => {
    const keys = tokenKeys('token-a');
    const segment = fc.oneof(
      fc.string(),
      fc.base64String(),
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (parts) => {
        const verdict = verifyToken(keys, parts.join('.'), START);
        expect(verdict.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('end with their ServiceAccount: a deleted or re-created account’s token is a 401', async () => {
    await server.request('/api/v1/namespaces/default/serviceaccounts', {
      method: 'POST',
      body: { metadata: { name: 'gone' } },
    });
    const res = await server.request('/api/v1/namespaces/default/serviceaccounts/gone/token', {
      method: 'POST',
      body: {},
    });
    const token = (res.json as { status: { token: string } }).status.token;
    const who = { method: 'POST', token, body: {} };
    expect((await server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', who)).status).toBe(201);
    await server.request('/api/v1/namespaces/default/serviceaccounts/gone', { method: 'DELETE' });
    expect((await server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', who)).status).toBe(401);
    await server.request('/api/v1/namespaces/default/serviceaccounts', {
      method: 'POST',
      body: { metadata: { name: 'gone' } },
    });
    expect((await server.request('/apis/authentication.k8s.io/v1/selfsubjectreviews', who)).status).toBe(401);
  });
});
