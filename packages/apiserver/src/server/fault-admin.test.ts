import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultErrorCodes } from './fault-errors.ts';
import { eventually, faultAdminClient, retrying } from './fault-test-support.ts';
import { startTestServer, type TestServer } from './test-support.ts';

const FAULTS = '/converge/faults';
const CM = '/api/v1/namespaces/default/configmaps';
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

function post(body: unknown): ReturnType<TestServer['request']> {
  return admin(FAULTS, { method: 'POST', body });
}

describe('the /converge/faults admin endpoint', () => {
  it('requires the bearer token on every route: 401 without it or with a wrong one', async () => {
    const routes: [string, string][] = [
      ['GET', FAULTS],
      ['POST', FAULTS],
      ['DELETE', FAULTS],
      ['DELETE', `${FAULTS}/fail-1`],
      ['POST', `${FAULTS}/drop-watches`],
      ['POST', `${FAULTS}/restart`],
    ];
    for (const [method, path] of routes) {
      const body = { type: 'failRatio', pathPattern: '/**', ratio: 1, status: 500 };
      for (const auth of [{ anonymous: true }, { token: 'wrong' }]) {
        const res = await t.request(path, { method, body, ...auth });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
      }
    }
    expect(t.server.faults.list()).toEqual([]);
    expect(t.server.faults.counters.restarts).toBe(0);
  });

  it('adds a rule from a JSON body (201 with its id) that then applies to requests', async () => {
    const res = await post({
      type: 'failRatio',
      pathPattern: CM,
      methods: ['GET'],
      ratio: 1,
      status: 429,
      retryAfterSeconds: 3,
    });
    expect(res.status).toBe(201);
    const rule = res.json as { id: string };
    expect(rule).toEqual({
      id: expect.stringMatching(/^fail-\d+$/),
      type: 'failRatio',
      pathPattern: CM,
      methods: ['GET'],
      ratio: 1,
      status: 429,
      retryAfterSeconds: 3,
      phase: 'before',
      injected: 0,
    });
    const failed = await t.request(CM);
    expect(failed.status).toBe(429);
    expect(failed.headers['retry-after']).toBe('3');
    const stall = await post({ type: 'stallWatches' });
    expect(stall.json).toMatchObject({ type: 'stallWatches', id: expect.stringMatching(/^stall-/) });
  });

  it('lists rules with the counters, and GET/DELETE one rule by id (404 when unknown)', async () => {
    const { id } = t.server.faults.failRatio({ pathPattern: '/version', ratio: 1, status: 503 });
    await t.request('/version');
    const list = await admin(FAULTS);
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({
      kind: 'FaultRuleList',
      items: [{ id, type: 'failRatio', injected: 1 }],
      counters: { failed: { 503: expect.any(Number) } },
      heldWatches: 0,
      openWatches: 0,
    });
    expect((await admin(`${FAULTS}/${id}`)).json).toMatchObject({ id, status: 503 });
    const removed = await admin(`${FAULTS}/${id}`, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(removed.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: id } });
    expect((await t.request('/version')).status).toBe(200);
    for (const method of ['GET', 'DELETE']) {
      const missing = await admin(`${FAULTS}/${id}`, { method });
      expect(missing.status).toBe(404);
      expect(missing.json).toMatchObject({ reason: 'NotFound', message: `fault rule "${id}" not found` });
    }
  });

  it('clears every rule with DELETE on the collection', async () => {
    t.server.faults.delay({ ms: 0 });
    t.server.faults.stallWatches();
    const res = await admin(FAULTS, { method: 'DELETE' });
    expect(res.json).toEqual({ removed: 2 });
    expect(t.server.faults.list()).toEqual([]);
  });

  it('answers malformed or invalid bodies with a 400 Status naming the problem, adding nothing', async () => {
    const cases: [unknown, RegExp][] = [
      [[{ type: 'delay', ms: 1 }], /must be a JSON object/],
      [{ ms: 1 }, /type: must be "delay", "failRatio" or "stallWatches", got undefined/],
      [{ type: 'explode' }, /type: must be/],
      [{ type: 'delay', ms: 1, extra: true }, /extra: unknown field for a delay rule/],
      [{ type: 'stallWatches', ms: 1 }, /ms: unknown field for a stallWatches rule/],
      [{ type: 'delay', ms: '100' }, /ms: must be an integer in 0\.\.3600000, got "100"/],
      [{ type: 'delay', ms: 1, methods: 'GET' }, /methods: must be a non-empty array/],
      [{ type: 'delay', ms: 1, pathPattern: 7 }, /pathPattern: must be a glob string/],
      [{ type: 'delay', ms: 1, pathPattern: 'no-slash' }, /pathPattern: must be a RegExp, or a glob/],
      [{ type: 'delay', ms: 1, pathPattern: `/${'x'.repeat(300)}` }, /at most 256 characters/],
      [
        { type: 'failRatio', pathPattern: '/**', ratio: 1.1, status: 500 },
        /ratio: must be a number in 0\.\.1/,
      ],
      [
        { type: 'failRatio', pathPattern: '/**', ratio: 1, status: '500' },
        /status: must be one of 409, 410, 429, 500, 503/,
      ],
      [{ type: 'failRatio', ratio: 1, status: 500 }, /pathPattern: is required/],
      [
        { type: 'failRatio', pathPattern: '/**', ratio: 1, status: 409, retryAfterSeconds: 1 },
        /only sent with status 429 or 503/,
      ],
      [
        { type: 'failRatio', pathPattern: '/**', ratio: 1, status: 500, phase: 'later' },
        /phase: must be "before" or "after"/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json).toMatchObject({
        kind: 'Status',
        reason: 'BadRequest',
        code: 400,
        message: expect.stringMatching(message),
      });
    }
    const broken = await admin(FAULTS, {
      method: 'POST',
      raw: '{"type": "delay",',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.json).toMatchObject({
      reason: 'BadRequest',
      message: expect.stringMatching(/^the body is not valid JSON/),
    });
    const empty = await admin(FAULTS, { method: 'POST' });
    expect(empty.status).toBe(400);
    expect(t.server.faults.list()).toEqual([]);
  });

  it('answers 415 for a body that is not JSON, 413 for one over 64 KiB, 405 for other methods', async () => {
    const yaml = await admin(FAULTS, {
      method: 'POST',
      raw: 'type: delay\nms: 1\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(yaml.status).toBe(415);
    const huge = await post({ type: 'delay', ms: 1, pathPattern: `/${'x'.repeat(70_000)}` });
    expect(huge.status).toBe(413);
    expect((await admin(FAULTS, { method: 'PUT', body: {} })).status).toBe(405);
    expect((await admin(`${FAULTS}/drop-watches`)).status).toBe(405);
    expect((await admin(`${FAULTS}/a/b`)).status).toBe(404);
    expect(t.server.faults.list()).toEqual([]);
  });

  it('is never faulted itself, so a rule failing every path can still be removed', async () => {
    const { id } = t.server.faults.failRatio({ pathPattern: '/**', ratio: 1, status: 500 });
    expect((await t.request('/version')).status).toBe(500);
    t.server.faults.delay({ ms: 3_600_000 });
    expect((await admin(FAULTS)).status).toBe(200);
    expect((await admin(`${FAULTS}/${id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('drops every open watch cleanly on POST drop-watches', async () => {
    const w = await t.watch(`${CM}?watch=true`);
    const res = await admin(`${FAULTS}/drop-watches`, { method: 'POST' });
    expect(res.json).toEqual({ dropped: 1 });
    expect(await w.ended).toBe('clean');
  });

  it('answers 202 to POST restart, then restarts with the state kept', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'kept' } } });
    const bad = await admin(`${FAULTS}/restart`, { method: 'POST', body: { downMs: 'soon' } });
    expect(bad.status).toBe(400);
    const res = await admin(`${FAULTS}/restart`, { method: 'POST', body: { downMs: 0 } });
    expect(res.status).toBe(202);
    expect(res.headers.connection).toBe('close');
    await eventually(() => t.server.faults.counters.restarts === 1);
    expect((await retrying(() => t.request(`${CM}/kept`))).status).toBe(200);
  });
});

describe('the admin endpoint in insecure mode', () => {
  it('still requires its own token where the rest of the API requires none: 401 without it, 201 with it', async () => {
    const insecure = await startTestServer({ insecure: true, faultAdmin: { token: 'admin-secret' } });
    try {
      const body = { type: 'failRatio', pathPattern: '/version', ratio: 1, status: 503 };
      const anonymous = await insecure.request(FAULTS, { method: 'POST', anonymous: true, body });
      expect(anonymous.status).toBe(401);
      expect(insecure.server.faults.list()).toEqual([]);
      const res = await insecure.request(FAULTS, { method: 'POST', token: 'admin-secret', body });
      expect(res.status).toBe(201);
      expect((await insecure.request('/version', { anonymous: true })).status).toBe(503);
    } finally {
      await insecure.close();
    }
  });
});

describe('fault error codes', () => {
  it('are stable strings under CONVERGE_ERR_APISERVER_FAULT_', () => {
    for (const code of Object.values(FaultErrorCodes))
      expect(code).toMatch(/^CONVERGE_ERR_APISERVER_FAULT_[A-Z_]+$/);
  });
});
