import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultError, FaultErrorCodes } from './fault-errors.ts';
import { startTestServer, type TestServer } from './test-support.ts';

const CM = '/api/v1/namespaces/default/configmaps';
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  await t.request(CM, { method: 'POST', body: { metadata: { name: 'existing' }, data: { v: '0' } } });
});
afterEach(() => {
  t.server.faults.clear();
});
afterAll(async () => {
  await t.close();
});

async function exists(name: string): Promise<boolean> {
  return (await t.request(`${CM}/${name}`)).status === 200;
}

describe('faults.failRatio answers a proper metav1.Status', () => {
  it('409 Conflict names the object like kube-apiserver, and marks the rule in X-Converge-Fault', async () => {
    const { id } = t.server.faults.failRatio({
      pathPattern: `${CM}/*`,
      methods: ['PUT'],
      ratio: 1,
      status: 409,
    });
    const res = await t.request(`${CM}/existing`, {
      method: 'PUT',
      body: { metadata: { name: 'existing' } },
    });
    expect(res.status).toBe(409);
    expect(res.headers['x-converge-fault']).toBe(id);
    expect(res.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Operation cannot be fulfilled on configmaps "existing": the object has been modified; please apply your changes to the latest version and try again (injected fault ${id})`,
      reason: 'Conflict',
      details: { name: 'existing', kind: 'configmaps' },
      code: 409,
    });
    expect((await t.request(`${CM}/existing`)).status).toBe(200);
  });

  it('410 Expired on a list is an HTTP 410', async () => {
    t.server.faults.failRatio({ pathPattern: CM, methods: ['GET'], ratio: 1, status: 410 });
    const res = await t.request(`${CM}?resourceVersion=5`);
    expect(res.status).toBe(410);
    expect(res.json).toMatchObject({
      reason: 'Expired',
      code: 410,
      message: expect.stringMatching(/^too old resource version: 5 /),
    });
  });

  it('410 on a watch is a 200 whose only event is an ERROR carrying the 410 Status, then a clean end', async () => {
    t.server.faults.failRatio({ pathPattern: CM, methods: ['WATCH'], ratio: 1, status: 410 });
    const w = await t.watch(`${CM}?watch=true&resourceVersion=1`);
    expect(w.status).toBe(200);
    expect(await w.ended).toBe('clean');
    expect(w.events).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) },
    ]);
    expect((await t.request(CM)).status).toBe(200);
  });

  it('429 TooManyRequests carries Retry-After and details.retryAfterSeconds (1 unless set)', async () => {
    const rule = t.server.faults.failRatio({
      pathPattern: '/api/v1/**',
      ratio: 1,
      status: 429,
      retryAfterSeconds: 7,
    });
    const res = await t.request(CM);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.json).toMatchObject({
      reason: 'TooManyRequests',
      code: 429,
      details: { retryAfterSeconds: 7 },
    });
    rule.remove();
    t.server.faults.failRatio({ pathPattern: '/api/v1/**', ratio: 1, status: 429 });
    expect((await t.request(CM)).headers['retry-after']).toBe('1');
  });

  it('500 InternalError and 503 ServiceUnavailable (Retry-After only when set)', async () => {
    const internal = t.server.faults.failRatio({ pathPattern: CM, ratio: 1, status: 500 });
    const res = await t.request(CM);
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({
      reason: 'InternalError',
      message: `Internal error occurred: injected fault ${internal.id}`,
    });
    expect(res.headers['retry-after']).toBeUndefined();
    internal.remove();
    t.server.faults.failRatio({ pathPattern: CM, ratio: 1, status: 503 });
    const unavailable = await t.request(CM);
    expect(unavailable.status).toBe(503);
    expect(unavailable.json).toMatchObject({ reason: 'ServiceUnavailable', code: 503 });
    expect(unavailable.headers['retry-after']).toBeUndefined();
    t.server.faults.clear();
    t.server.faults.failRatio({ pathPattern: CM, ratio: 1, status: 503, retryAfterSeconds: 2 });
    expect((await t.request(CM)).headers['retry-after']).toBe('2');
  });

  it('a 500 on a watch is an HTTP 500, not a stream', async () => {
    t.server.faults.failRatio({ pathPattern: CM, methods: ['WATCH'], ratio: 1, status: 500 });
    const w = await t.watch(`${CM}?watch=true`);
    expect(w.status).toBe(500);
    expect(w.headers['content-type']).toBe('application/json');
  });
});

describe('faults.failRatio phases keep the store consistent', () => {
  it('before: the failed create is not applied', async () => {
    t.server.faults.failRatio({ pathPattern: CM, methods: ['POST'], ratio: 1, status: 500 });
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: 'never' } } });
    expect(res.status).toBe(500);
    expect(await exists('never')).toBe(false);
  });

  it('after: the write is applied but the client sees the error, and a retried create finds it', async () => {
    const before = t.server.faults.counters;
    t.server.faults.failRatio({
      pathPattern: CM,
      methods: ['POST'],
      ratio: 1,
      status: 500,
      phase: 'after',
      times: 1,
    });
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: 'lost-answer' } } });
    expect(res.status).toBe(500);
    expect(await exists('lost-answer')).toBe(true);
    const retry = await t.request(CM, { method: 'POST', body: { metadata: { name: 'lost-answer' } } });
    expect(retry.status).toBe(409);
    expect(retry.json).toMatchObject({ reason: 'AlreadyExists' });
    const after = t.server.faults.counters;
    expect(after.failed[500]).toBe(before.failed[500] + 1);
    expect(after.failedAfterApply).toBe(before.failedAfterApply + 1);
  });

  it('after: an update and a delete are applied exactly once behind their errors', async () => {
    t.server.faults.failRatio({
      pathPattern: `${CM}/*`,
      methods: ['PUT', 'DELETE'],
      ratio: 1,
      status: 503,
      phase: 'after',
    });
    const current = (await t.request(`${CM}/existing`)).json as { metadata: { resourceVersion: string } };
    const put = await t.request(`${CM}/existing`, {
      method: 'PUT',
      body: {
        metadata: { name: 'existing', resourceVersion: current.metadata.resourceVersion },
        data: { v: '1' },
      },
    });
    expect(put.status).toBe(503);
    t.server.faults.clear();
    const updated = (await t.request(`${CM}/existing`)).json as {
      data: { v: string };
      metadata: { resourceVersion: string };
    };
    expect(updated.data.v).toBe('1');
    expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(
      Number(current.metadata.resourceVersion),
    );
    t.server.faults.failRatio({
      pathPattern: `${CM}/*`,
      methods: ['DELETE'],
      ratio: 1,
      status: 500,
      phase: 'after',
    });
    expect((await t.request(`${CM}/existing`, { method: 'DELETE' })).status).toBe(500);
    expect(await exists('existing')).toBe(false);
  });

  it('after: a deletecollection (a streamed list answer) is applied behind its error', async () => {
    for (const name of ['batch-1', 'batch-2']) {
      await t.request(CM, { method: 'POST', body: { metadata: { name, labels: { batch: 'x' } } } });
    }
    t.server.faults.failRatio({
      pathPattern: CM,
      methods: ['DELETE'],
      ratio: 1,
      status: 500,
      phase: 'after',
    });
    expect((await t.request(`${CM}?labelSelector=batch%3Dx`, { method: 'DELETE' })).status).toBe(500);
    t.server.faults.clear();
    const left = (await t.request(`${CM}?labelSelector=batch%3Dx`)).json as { items: unknown[] };
    expect(left.items).toEqual([]);
  });

  it('after: a write that fails on its own answers its real error and counts no fault', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'taken' } } });
    const rule = t.server.faults.failRatio({
      pathPattern: CM,
      methods: ['POST'],
      ratio: 1,
      status: 500,
      phase: 'after',
    });
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: 'taken' } } });
    expect(res.status).toBe(409);
    expect(res.headers['x-converge-fault']).toBeUndefined();
    expect(t.server.faults.list().find((r) => r.id === rule.id)?.injected).toBe(0);
  });

  it('after on a read fails it before, as there is nothing to apply', async () => {
    const before = t.server.faults.counters.failedAfterApply;
    t.server.faults.failRatio({ pathPattern: CM, methods: ['GET'], ratio: 1, status: 500, phase: 'after' });
    expect((await t.request(CM)).status).toBe(500);
    expect(t.server.faults.counters.failedAfterApply).toBe(before);
  });
});

describe('fault rules', () => {
  it('fail only the first times requests, then leave the list', async () => {
    const { id } = t.server.faults.failRatio({ pathPattern: '/version', ratio: 1, status: 503, times: 2 });
    expect(t.server.faults.list().map((r) => r.id)).toEqual([id]);
    expect((await t.request('/version')).status).toBe(503);
    expect((await t.request('/version')).status).toBe(503);
    expect((await t.request('/version')).status).toBe(200);
    expect(t.server.faults.list()).toEqual([]);
  });

  it('never fail a request outside their path or methods, and ratio 0 never fails', async () => {
    t.server.faults.failRatio({ pathPattern: `${CM}/*`, methods: ['DELETE'], ratio: 1, status: 500 });
    t.server.faults.failRatio({ pathPattern: '/**', ratio: 0, status: 500 });
    expect((await t.request(CM)).status).toBe(200);
    expect((await t.request(`${CM}/missing`)).status).toBe(404);
    expect((await t.request('/api/v1/namespaces/default/secrets/x', { method: 'DELETE' })).status).toBe(404);
  });

  it('are listed oldest first with their options and counts, and removed by handle, id or clear()', async () => {
    const a = t.server.faults.delay({ pathPattern: /never-matches/, ms: 5 });
    const b = t.server.faults.failRatio({ pathPattern: '/version', methods: ['GET'], ratio: 1, status: 429 });
    const c = t.server.faults.stallWatches({ pathPattern: '/api/v1/pods' });
    await t.request('/version');
    expect(t.server.faults.list()).toEqual([
      { id: a.id, type: 'delay', pathRegExp: 'never-matches', ms: 5, injected: 0 },
      {
        id: b.id,
        type: 'failRatio',
        pathPattern: '/version',
        methods: ['GET'],
        ratio: 1,
        status: 429,
        retryAfterSeconds: 1,
        phase: 'before',
        injected: 1,
      },
      { id: c.id, type: 'stallWatches', pathPattern: '/api/v1/pods', injected: 0 },
    ]);
    expect(a.remove()).toBe(true);
    expect(a.remove()).toBe(false);
    expect(t.server.faults.remove(b.id)).toBe(true);
    expect(t.server.faults.clear()).toBe(1);
    expect(t.server.faults.list()).toEqual([]);
  });

  it('reject invalid options with a FaultError and add nothing', () => {
    let error: unknown;
    try {
      t.server.faults.failRatio({ pathPattern: '/**', ratio: 2, status: 500 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FaultError);
    expect((error as FaultError).code).toBe(FaultErrorCodes.INVALID_RULE);
    expect(t.server.faults.list()).toEqual([]);
  });
});
