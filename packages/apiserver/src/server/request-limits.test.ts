import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from './limits.ts';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

beforeAll(async () => {
  t = await startTestServer();
  await t.request(CM, { method: 'POST', body: { metadata: { name: 'target' }, data: { x: 'y' } } });
  await t.request('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    method: 'POST',
    body: {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    },
  });
  await t.request(WIDGETS, { method: 'POST', body: { metadata: { name: 'w' }, spec: { a: 1 } } });
});
afterAll(async () => {
  await t.close();
});

async function serverIsUp(): Promise<void> {
  const res = await t.request(`${CM}/target`);
  expect(res.status).toBe(200);
}

function expectStatus(
  res: { status: number; json: unknown },
  code: number,
  reason: string,
): Record<string, unknown> {
  expect(res.status).toBe(code);
  expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', code, reason });
  return res.json as Record<string, unknown>;
}

const nestedJson = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('bounded work per request (no crash, bounded memory)', () => {
  it('refuses a 1 KB JSON patch of 24 self-doubling copy ops with 422, and the server stays up', async () => {
    // Each copy of the whole document into a new member of itself doubles it.
    const patch = Array.from({ length: 24 }, (_, i) => ({
      op: 'copy',
      from: '',
      path: `/data/${String.fromCharCode(65 + i)}`,
    }));
    expect(JSON.stringify(patch).length).toBeLessThan(1000);
    const res = await t.request(`${CM}/target`, {
      method: 'PATCH',
      raw: JSON.stringify(patch),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(String(expectStatus(res, 422, 'Invalid').message)).toMatch(/accumulated size increase of copy/);
    await serverIsUp();
  });

  it('refuses a JSON patch of more than 10 000 operations with 413 before applying any', async () => {
    const patch = Array.from({ length: LIMITS.maxJsonPatchOperations + 1 }, () => ({
      op: 'test',
      path: '',
      value: 0,
    }));
    const res = await t.request(`${CM}/target`, {
      method: 'PATCH',
      raw: JSON.stringify(patch),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(expectStatus(res, 413, 'RequestEntityTooLarge').message).toBe(
      'The allowed maximum operations in a JSON patch is 10000, got 10001',
    );
  });

  it('answers JSON nested 100 000 deep with a 400, not a 500, on every JSON decoder', async () => {
    const deep = nestedJson(100_000);
    const bodies: [string, string, string][] = [
      ['POST', CM, `{"metadata":{"name":"deep"},"data":${deep}}`],
      ['PUT', `${CM}/target`, `{"metadata":{"name":"target"},"data":${deep}}`],
      ['PATCH', `${CM}/target`, `{"data":${deep}}`],
    ];
    for (const [method, path, raw] of bodies) {
      for (const type of method === 'PATCH'
        ? [
            'application/merge-patch+json',
            'application/strategic-merge-patch+json',
            'application/apply-patch+yaml',
          ]
        : ['application/json', 'application/yaml']) {
        const res = await t.request(`${path}${type.includes('apply') ? '?fieldManager=m' : ''}`, {
          method,
          raw,
          headers: { 'content-type': type },
        });
        expect(String(expectStatus(res, 400, 'BadRequest').message), `${method} ${type}`).toMatch(
          /nests deeper than 200 levels/,
        );
      }
    }
    await serverIsUp();
  });

  it('refuses a JSON patch whose result nests deeper than the limit with 400, not a stack overflow', async () => {
    // Each copy of /spec into its own deepest member doubles the depth: 2, 4, … 2^11 > 1000.
    await t.request(`${WIDGETS}/w`, {
      method: 'PUT',
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { a: {} } },
    });
    const patch: unknown[] = [];
    let path = '/spec/a';
    for (let i = 0; i < 11; i++) {
      patch.push({ op: 'copy', from: '/spec', path: `${path}/b` });
      path = `${path}/b${'/a'.repeat(2 ** i)}`.replace(/\/b(\/a)+$/, (m) => m);
    }
    const res = await t.request(`${WIDGETS}/w`, {
      method: 'PATCH',
      raw: JSON.stringify(patch),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status, res.text).toBeLessThan(500);
    await serverIsUp();
  });

  it('answers a YAML alias bomb with a 400', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${prev}`).join(',')}]`,
      );
    }
    const res = await t.request(CM, {
      method: 'POST',
      raw: `metadata:\n  name: bomb\ndata:\n  ${levels.join('\n  ')}\n`,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(String(expectStatus(res, 400, 'BadRequest').message)).toMatch(/alias/i);
    await serverIsUp();
  });

  it('answers a deeply nested 2 MB YAML body with a 400 (decoded off the event loop or refused by the pre-scan)', async () => {
    for (const raw of [
      `a:\n  - ${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}\n`,
      `a:\n${'- '.repeat(400_000)}x\n`,
    ]) {
      const res = await t.request(CM, {
        method: 'POST',
        raw,
        headers: { 'content-type': 'application/yaml' },
      });
      expectStatus(res, 400, 'BadRequest');
    }
    await serverIsUp();
  }, 60_000);

  it('rejects a body over 3 MiB with 413', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      raw: JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(LIMITS.maxBodyBytes) } }),
      headers: { 'content-type': 'application/json' },
    });
    expect(expectStatus(res, 413, 'RequestEntityTooLarge').message).toBe(
      'Request entity too large: limit is 3145728',
    );
  });

  it('refuses an object over 1.5 MiB serialized with 413, and one just under it is stored', async () => {
    const big = { metadata: { name: 'huge' }, spec: { blob: 'x'.repeat(LIMITS.maxObjectBytes) } };
    const res = await t.request(WIDGETS, { method: 'POST', body: big });
    expect(String(expectStatus(res, 413, 'RequestEntityTooLarge').message)).toMatch(/the limit is 1572864/);
    const fits = { metadata: { name: 'fits' }, spec: { blob: 'x'.repeat(LIMITS.maxObjectBytes - 4096) } };
    expect((await t.request(WIDGETS, { method: 'POST', body: fits })).status).toBe(201);
  });

  it('answers ConfigMap data over 1 MiB with 422 and a FieldValueTooLong cause (whole object, as upstream)', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: {
        metadata: { name: 'toolarge' },
        data: { a: 'x'.repeat(600_000) },
        binaryData: { b: Buffer.alloc(500_000).toString('base64') },
      },
    });
    const status = expectStatus(res, 422, 'Invalid');
    expect(status.message).toBe('ConfigMap "toolarge" is invalid: Too long: must have at most 1048576 bytes');
    expect(status.details).toMatchObject({ causes: [{ reason: 'FieldValueTooLong' }] });
    expect((status.details as { causes: { field?: string }[] }).causes[0]?.field ?? '').toBe('');
    const fits = await t.request(CM, {
      method: 'POST',
      body: { metadata: { name: 'fits' }, data: { a: 'x'.repeat(1_048_576) } },
    });
    expect(fits.status).toBe(201);
  });

  it('answers Secret data over 1 MiB (decoded) with 422 and a cause on data', async () => {
    const res = await t.request('/api/v1/namespaces/default/secrets', {
      method: 'POST',
      body: { metadata: { name: 's' }, data: { a: Buffer.alloc(1_048_577).toString('base64') } },
    });
    expect(expectStatus(res, 422, 'Invalid').details).toMatchObject({
      causes: [{ reason: 'FieldValueTooLong', field: 'data' }],
    });
  });

  it('answers Content-Type ";;;/=" with 415, not a JSON parse', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      raw: JSON.stringify({ metadata: { name: 'ct' } }),
      headers: { 'content-type': ';;;/=' },
    });
    expectStatus(res, 415, 'UnsupportedMediaType');
    expect((await t.request(`${CM}/ct`)).status).toBe(404);
  });

  it('creates with resourceVersion "abc" as kube-apiserver does: unparsable, so ignored (201), never a 500', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      body: { metadata: { name: 'rvabc', resourceVersion: 'abc' } },
    });
    expect(res.status, res.text).toBe(201);
    expect((res.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toMatch(
      /^[1-9][0-9]*$/,
    );
  });
});

describe('hostile sizes and depths on every decoder and patch path (no 5xx, no crash)', () => {
  const paths = [
    { method: 'POST', path: WIDGETS, type: 'application/json' },
    { method: 'POST', path: WIDGETS, type: 'application/yaml' },
    { method: 'PATCH', path: `${WIDGETS}/w`, type: 'application/merge-patch+json' },
    { method: 'PATCH', path: `${WIDGETS}/w`, type: 'application/json-patch+json' },
    { method: 'PATCH', path: `${CM}/target`, type: 'application/strategic-merge-patch+json' },
    { method: 'PATCH', path: `${WIDGETS}/w?fieldManager=fuzz`, type: 'application/apply-patch+yaml' },
  ] as const;
  const shapes = fc.record({
    depth: fc.oneof(
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 190, max: 270 }),
      fc.integer({ min: 500, max: 50_000 }),
    ),
    width: fc.integer({ min: 0, max: 2_000 }),
    arrays: fc.boolean(),
    copies: fc.integer({ min: 0, max: 30 }),
    route: fc.integer({ min: 0, max: paths.length - 1 }),
  });

  it('answers a typed 4xx or success, never a 5xx, and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(shapes, async ({ depth, width, arrays, copies, route }) => {
        const { method, path, type } = paths[route] as (typeof paths)[number];
        const open = arrays ? '['.repeat(depth) : '{"a":'.repeat(depth);
        const close = arrays ? ']'.repeat(depth) : '}'.repeat(depth);
        const value = `${open}${JSON.stringify('v'.repeat(width))}${close}`;
        let raw: string;
        if (type === 'application/json-patch+json') {
          const ops = [{ op: 'add', path: '/spec/x', value: 0 }];
          for (let i = 0; i < copies; i++)
            ops.push({ op: 'copy', from: '/spec', path: `/spec/k${i}` } as never);
          raw = `[{"op":"add","path":"/spec/v","value":${value}},${JSON.stringify(ops).slice(1)}`;
        } else {
          const name = path.includes('target') ? 'target' : 'w';
          const kind = path.includes('widgets') ? '"apiVersion":"example.com/v1","kind":"Widget",' : '';
          raw = `{${kind}"metadata":{"name":"${method === 'POST' ? `n${depth}-${width}` : name}"},"spec":{"v":${value}}}`;
        }
        const res = await t.request(path, { method, raw, headers: { 'content-type': type } });
        if (res.status >= 500)
          throw new Error(`${method} ${type} depth ${depth} → ${res.status} ${res.text.slice(0, 300)}`);
        if (res.status >= 400) expect(res.json).toMatchObject({ kind: 'Status', code: res.status });
      }),
      { numRuns: 60 },
    );
    await serverIsUp();
  }, 120_000);
});
