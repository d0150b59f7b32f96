import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ADMIN_DURATION_MS, MAX_ADMIN_RULES } from './fault-admin-body.ts';
import { FaultErrorCodes } from './fault-errors.ts';
import { faultAdminClient } from './fault-test-support.ts';
import { startTestServer, type TestServer } from './test-support.ts';

const FAULTS = '/converge/faults';
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ faultAdmin: true });
});
afterEach(() => {
  t.server.faults.clear();
});
afterAll(async () => {
  await t.close();
});

const admin = faultAdminClient(() => t);

describe('the fault admin endpoint is kept apart from the API', () => {
  it('is not served unless enabled: 404 with the API token (405 for writes, as any unknown path), nothing added, no restart', async () => {
    const plain = await startTestServer();
    try {
      expect(plain.server.faultAdminToken).toBeUndefined();
      const listed = await plain.request(FAULTS);
      expect(listed.status).toBe(404);
      expect(listed.json).toMatchObject({ kind: 'Status', reason: 'NotFound' });
      const body = { type: 'failRatio', pathPattern: '/**', ratio: 1, status: 500 };
      for (const path of [FAULTS, `${FAULTS}/restart`, `${FAULTS}/drop-watches`]) {
        const res = await plain.request(path, { method: 'POST', body });
        expect(res.status, `POST ${path}`).toBe(405);
      }
      expect(plain.server.faults.list()).toEqual([]);
      expect(plain.server.faults.counters.restarts).toBe(0);
      // In process, injection stays available.
      plain.server.faults.failRatio({ pathPattern: '/version', ratio: 1, status: 503 });
      expect((await plain.request('/version')).status).toBe(503);
    } finally {
      await plain.close();
    }
  });

  it('a kubeconfig token cannot reach /converge/faults: 403 on every route, nothing added or restarted', async () => {
    expect(t.server.faultAdminToken).toBeDefined();
    expect(t.server.faultAdminToken).not.toBe(t.server.token);
    const body = { type: 'failRatio', pathPattern: '/**', ratio: 1, status: 500 };
    for (const [method, path] of [
      ['GET', FAULTS],
      ['POST', FAULTS],
      ['DELETE', FAULTS],
      ['POST', `${FAULTS}/drop-watches`],
      ['POST', `${FAULTS}/restart`],
    ] as const) {
      const res = await t.request(path, { method, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.json).toMatchObject({ reason: 'Forbidden', code: 403 });
    }
    expect(t.server.faults.list()).toEqual([]);
    expect(t.server.faults.counters.restarts).toBe(0);
    // …and the admin token opens nothing else: the API still wants the API token.
    const other = await t.request('/api/v1/namespaces', { token: t.server.faultAdminToken as string });
    expect(other.status).toBe(401);
  });

  it('refuses an admin token equal to the API token (the two must stay apart)', async () => {
    await expect(
      startTestServer({ token: 'same-token', faultAdmin: { token: 'same-token' } }),
    ).rejects.toThrow(/faultAdmin\.token/);
  });
});

describe('the fault admin endpoint is bounded', () => {
  it('a catastrophic pattern cannot hang the loop: a RegExp is refused (422), a hostile glob matches in linear time', async () => {
    const regexp = await admin(FAULTS, {
      method: 'POST',
      body: { type: 'delay', ms: 0, pathRegExp: '(a+)+$' },
    });
    expect(regexp.status).toBe(422);
    expect(regexp.json).toMatchObject({
      reason: 'Invalid',
      details: { causes: [{ field: 'pathRegExp' }] },
    });
    // Compiled to a backtracking RegExp, this glob would take ~n^60 steps on a long run of `a`s.
    const glob = `/${'*a'.repeat(60)}*b`;
    expect(glob.length).toBeLessThanOrEqual(256);
    const rule = await admin(FAULTS, {
      method: 'POST',
      body: { type: 'failRatio', pathPattern: glob, ratio: 1, status: 503 },
    });
    expect(rule.status).toBe(201);
    const miss = await t.request(`/${'a'.repeat(6_000)}`);
    expect(miss.status).toBe(404);
    const hit = await t.request(`/${'a'.repeat(6_000)}b`);
    expect(hit.status).toBe(503);
    expect((await t.request('/version')).status).toBe(200);
  });

  it('downMs over the bound is 422 naming the field, and the server does not restart', async () => {
    const res = await admin(`${FAULTS}/restart`, {
      method: 'POST',
      body: { downMs: MAX_ADMIN_DURATION_MS + 1 },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      code: 422,
      details: { causes: [{ field: 'downMs' }] },
    });
    expect((await admin(`${FAULTS}/restart`, { method: 'POST', body: { downMs: 3_600_000 } })).status).toBe(
      422,
    );
    expect(t.server.faults.counters.restarts).toBe(0);
    expect((await t.request('/version')).status).toBe(200);
  });

  it('a delay over the bound is 422, and no more than 100 rules can be active', async () => {
    const slow = await admin(FAULTS, { method: 'POST', body: { type: 'delay', ms: 3_600_000 } });
    expect(slow.status).toBe(422);
    expect(slow.json).toMatchObject({ code: 422, details: { causes: [{ field: 'ms' }] } });
    for (let i = 0; i < MAX_ADMIN_RULES; i++) {
      const res = await admin(FAULTS, {
        method: 'POST',
        body: { type: 'delay', ms: 0, pathPattern: `/n${i}` },
      });
      expect(res.status).toBe(201);
    }
    const over = await admin(FAULTS, { method: 'POST', body: { type: 'delay', ms: 0, pathPattern: '/x' } });
    expect(over.status).toBe(422);
    expect(over.json).toMatchObject({ message: expect.stringMatching(/at most 100 fault rules/) });
    expect(t.server.faults.list()).toHaveLength(MAX_ADMIN_RULES);
  });

  it('any admin body gives a 2xx or a typed 4xx, never a 5xx or a hang (fuzzed)', async () => {
    const value = fc.oneof(
      fc.integer({ min: -10, max: 4_000_000 }),
      fc.double(),
      fc.string({ maxLength: 40 }),
      fc.constantFrom('/**', '/api/*', '**/x', '*', '/a?c/**', 'GET', 'WATCH', 'before', 'after'),
      fc.constantFrom(409, 410, 429, 500, 503, 0.5, 1, 60_000, 60_001),
      fc.array(fc.constantFrom('GET', 'PUT', 'WATCH', 'get', 1), { maxLength: 3 }),
      fc.boolean(),
      fc.constant(null),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
    );
    const key = fc.constantFrom(
      'type',
      'pathPattern',
      'pathRegExp',
      'methods',
      'ms',
      'times',
      'ratio',
      'status',
      'retryAfterSeconds',
      'phase',
      'downMs',
      'other',
    );
    const body = fc.oneof(
      fc
        .dictionary(key, value, { maxKeys: 6 })
        .chain((d) =>
          fc.constantFrom('delay', 'failRatio', 'stallWatches', 'nope').map((type) => ({ type, ...d })),
        ),
      fc.dictionary(key, value, { maxKeys: 6 }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    const route = fc.constantFrom(`${FAULTS}`, `${FAULTS}/restart`);
    await fc.assert(
      fc.asyncProperty(route, body, async (path, payload) => {
        // Restarts that would be accepted are left out: this property is about the decoder.
        if (path.endsWith('/restart') && !(await rejectsRestart(payload))) return;
        const res = await admin(path, { method: 'POST', raw: JSON.stringify(payload), headers: json });
        expect(
          res.status === 201 || (res.status >= 400 && res.status < 500),
          `${res.status} ${res.text}`,
        ).toBe(true);
        if (res.status >= 400) {
          expect(res.json).toMatchObject({ kind: 'Status', code: res.status });
          expect((res.json as { message?: unknown }).message).toEqual(expect.any(String));
        }
        t.server.faults.clear();
      }),
      { numRuns: 300 },
    );
    expect(t.server.faults.counters.restarts).toBe(0);
  });
});

const json = { 'content-type': 'application/json' };

/** Whether a restart body is one the decoder refuses (so sending it cannot restart the server). */
async function rejectsRestart(payload: unknown): Promise<boolean> {
  const { parseRestartRequest } = await import('./fault-admin-body.ts');
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return true;
  try {
    parseRestartRequest(payload as Record<string, unknown>);
    return false;
  } catch {
    return true;
  }
}

describe('fault admin error codes', () => {
  it('name the admin refusals: OVER_LIMIT and ADMIN_FORBIDDEN', () => {
    expect(FaultErrorCodes.OVER_LIMIT).toBe('CONVERGE_ERR_APISERVER_FAULT_OVER_LIMIT');
    expect(FaultErrorCodes.ADMIN_FORBIDDEN).toBe('CONVERGE_ERR_APISERVER_FAULT_ADMIN_FORBIDDEN');
  });
});
