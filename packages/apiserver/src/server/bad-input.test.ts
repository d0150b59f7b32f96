import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  t = await startTestServer();
  await t.request(CM, { method: 'POST', body: { metadata: { name: 'existing' }, data: { a: '1' } } });
});
afterAll(async () => {
  await t.close();
});

function status(res: { json: unknown }): Record<string, unknown> {
  expect(res.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure' });
  return res.json as Record<string, unknown>;
}

describe('malformed bodies', () => {
  it('answers malformed JSON with a 400 BadRequest Status', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      raw: '{"metadata": {',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(status(res)).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: expect.stringContaining('json parse error'),
    });
  });

  it('answers malformed YAML with a 400', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      raw: 'metadata:\n  name: [unclosed\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(res.status).toBe(400);
    expect(status(res).message).toMatch(/^error converting YAML to JSON/);
  });

  it('answers a body that is not an object (array, string, null) with a 400', async () => {
    for (const raw of ['[]', '"text"', 'null', '42']) {
      const res = await t.request(CM, {
        method: 'POST',
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, raw).toBe(400);
    }
  });

  it('answers mistyped well-known fields (metadata.name as a number) with a 400', async () => {
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: 5 } } });
    expect(res.status).toBe(400);
  });

  it('rejects a body over 3 MiB with 413 and closes the connection', async () => {
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(3 * 1024 * 1024) } });
    const res = await t.request(CM, {
      method: 'POST',
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(status(res)).toMatchObject({
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: limit is 3145728',
      code: 413,
    });
    expect(res.headers.connection).toBe('close');
  });
});

describe('bodies that do not match the request', () => {
  it('rejects a kind that does not match the path with 400', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k' } },
    });
    expect(res.status).toBe(400);
    expect(status(res).message).toBe(
      'the kind in the data (Secret) does not match the expected kind (ConfigMap)',
    );
  });

  it('rejects an apiVersion that does not match the path with 400', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'k' } },
    });
    expect(res.status).toBe(400);
    expect(status(res).message).toBe(
      'the API version in the data (apps/v1) does not match the expected API version (v1)',
    );
  });

  it('rejects a namespace that does not match the path with 400', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: { metadata: { name: 'k', namespace: 'kube-system' } },
    });
    expect(res.status).toBe(400);
    expect(status(res).message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });

  it('rejects a PUT whose name differs from the URL with 400', async () => {
    const res = await t.request(`${CM}/existing`, { method: 'PUT', body: { metadata: { name: 'other' } } });
    expect(res.status).toBe(400);
    expect(status(res).message).toBe(
      'the name of the object (other) does not match the name on the URL (existing)',
    );
  });

  it('rejects invalid names with 422 and field causes', async () => {
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: 'Not_Valid' } } });
    expect(res.status).toBe(422);
    expect(status(res)).toMatchObject({
      reason: 'Invalid',
      details: {
        name: 'Not_Valid',
        kind: 'ConfigMap',
        causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }],
      },
    });
    const missing = await t.request(CM, { method: 'POST', body: { metadata: {} } });
    expect(missing.status).toBe(422);
    expect(status(missing).message).toBe(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it('rejects unknown fields with fieldValidation=Strict (400) and warns by default', async () => {
    const strict = await t.request(`${CM}?fieldValidation=Strict`, {
      method: 'POST',
      body: { metadata: { name: 's1' }, datta: { a: '1' } },
    });
    expect(strict.status).toBe(400);
    expect(status(strict).message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta"',
    );
    const warned = await t.request(CM, {
      method: 'POST',
      body: { metadata: { name: 's2' }, datta: { a: '1' } },
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toBe('299 - "unknown field \\"datta\\""');
    expect((warned.json as Record<string, unknown>).datta).toBeUndefined();
  });

  it('rejects resourceVersion on create with the upstream 500', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: { metadata: { name: 'rv', resourceVersion: '5' } },
    });
    expect(res.status).toBe(500);
    expect(status(res).message).toContain('resourceVersion should not be set on objects to be created');
  });
});

describe('unknown paths, methods and media types', () => {
  it('answers an unknown resource with 404 and empty details', async () => {
    for (const path of [
      '/api/v1/namespaces/default/widgets',
      '/apis/nope.io/v1/things',
      '/api/v2/pods',
      '/nothing/here',
    ]) {
      const res = await t.request(path);
      expect(res.status, path).toBe(404);
      expect(status(res)).toMatchObject({
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
        details: {},
      });
    }
  });

  it('answers a missing object with 404 naming it', async () => {
    const res = await t.request(`${CM}/missing`);
    expect(status(res)).toMatchObject({
      reason: 'NotFound',
      message: 'configmaps "missing" not found',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });
  });

  it('answers an unsupported request media type with 415', async () => {
    const res = await t.request(CM, { method: 'POST', raw: 'x', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(status(res)).toMatchObject({
      reason: 'UnsupportedMediaType',
      message: expect.stringContaining('the body of the request was in an unknown format'),
    });
  });

  it('answers an unsupported patch type with 415 listing the accepted patch types', async () => {
    const res = await t.request(`${CM}/existing`, {
      method: 'PATCH',
      raw: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(415);
    expect(status(res).message).toMatch(/application\/json-patch\+json, application\/merge-patch\+json/);
  });

  it('answers an unacceptable Accept header with 406', async () => {
    const res = await t.request(`${CM}/existing`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(406);
    expect(status(res).reason).toBe('NotAcceptable');
  });

  it('answers methods a path does not serve with 405', async () => {
    expect((await t.request(`${CM}/existing`, { method: 'POST', body: {} })).status).toBe(405);
    expect((await t.request(CM, { method: 'PUT', body: {} })).status).toBe(405);
    expect((await t.request('/api/v1/configmaps', { method: 'POST', body: {} })).status).toBe(405);
    expect((await t.request('/version', { method: 'DELETE' })).status).toBe(405);
  });
});

describe('bad parameters', () => {
  it('answers a bad label selector with 400', async () => {
    const res = await t.request(`${CM}?labelSelector=${encodeURIComponent('a in (')}`);
    expect(res.status).toBe(400);
  });

  it('answers a non-numeric limit or timeoutSeconds with 400', async () => {
    expect((await t.request(`${CM}?limit=ten`)).status).toBe(400);
    expect((await t.request(`${CM}?watch=true&timeoutSeconds=soon`)).status).toBe(400);
  });

  it('answers a malformed watch resourceVersion with 400 before streaming', async () => {
    const res = await t.request(`${CM}?watch=true&resourceVersion=abc`);
    expect(res.status).toBe(400);
  });

  it('answers dryRun values other than All, and bad fieldValidation, with 422', async () => {
    const dry = await t.request(`${CM}?dryRun=Yes`, { method: 'POST', body: { metadata: { name: 'd' } } });
    expect(status(dry)).toMatchObject({
      code: 422,
      details: { kind: 'CreateOptions', causes: [{ field: 'dryRun' }] },
    });
    const fv = await t.request(`${CM}?fieldValidation=Loose`, {
      method: 'POST',
      body: { metadata: { name: 'd' } },
    });
    expect(fv.status).toBe(422);
  });

  it('answers force on a non-apply patch with 422', async () => {
    const res = await t.request(`${CM}/existing?force=true`, {
      method: 'PATCH',
      body: { data: { b: '2' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(422);
    expect(status(res).message).toContain('force: Forbidden: may not be specified for non-apply patch');
  });

  it('answers bad DeleteOptions with 422 (unknown policy, orphanDependents with a policy)', async () => {
    const policy = await t.request(`${CM}/existing`, {
      method: 'DELETE',
      body: { propagationPolicy: 'Sideways' },
    });
    expect(status(policy)).toMatchObject({ code: 422, details: { kind: 'DeleteOptions' } });
    const both = await t.request(`${CM}/existing`, {
      method: 'DELETE',
      body: { propagationPolicy: 'Orphan', orphanDependents: true },
    });
    expect(both.status).toBe(422);
    expect((await t.request(`${CM}/existing`)).status).toBe(200);
  });

  it('answers a failed JSON patch test with 422 and a malformed JSON patch with 400', async () => {
    const failed = await t.request(`${CM}/existing`, {
      method: 'PATCH',
      body: [{ op: 'test', path: '/data/a', value: 'nope' }],
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(failed.status).toBe(422);
    const malformed = await t.request(`${CM}/existing`, {
      method: 'PATCH',
      body: [{ op: 'jump', path: '/x' }],
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(malformed.status).toBe(400);
  });

  it('answers a patch that sets a stale resourceVersion with 409', async () => {
    const res = await t.request(`${CM}/existing`, {
      method: 'PATCH',
      body: { metadata: { resourceVersion: '1' }, data: { z: '1' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(409);
    expect(status(res).reason).toBe('Conflict');
  });

  it('answers a patch that renames the object with 400', async () => {
    const res = await t.request(`${CM}/existing`, {
      method: 'PATCH',
      body: { metadata: { name: 'renamed' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(400);
  });
});
