import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const SITES = '/apis/example.com/v1/namespaces/default/websites';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

type Obj = { metadata: Record<string, unknown>; spec?: Record<string, unknown>; [k: string]: unknown };

beforeAll(async () => {
  t = await startTestServer();
  const res = await t.request('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    method: 'POST',
    body: {
      metadata: { name: 'websites.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'websites', kind: 'Website' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            additionalPrinterColumns: [{ name: 'Host', type: 'string', jsonPath: '.spec.host' }],
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    required: ['host'],
                    properties: {
                      host: { type: 'string' },
                      replicas: { type: 'integer', minimum: 0, default: 1 },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    },
  });
  expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await t.close();
});

describe('custom resources through the CRD module', () => {
  it('applies schema defaults on create', async () => {
    const res = await t.request(SITES, {
      method: 'POST',
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Website',
        metadata: { name: 'a' },
        spec: { host: 'a.example.com' },
      },
    });
    expect(res.status, res.text).toBe(201);
    expect((res.json as Obj).spec).toEqual({ host: 'a.example.com', replicas: 1 });
  });

  it('rejects values that break the schema with 422 and field causes', async () => {
    const res = await t.request(SITES, {
      method: 'POST',
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Website',
        metadata: { name: 'bad' },
        spec: { host: 'x', replicas: 'three' },
      },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({
      reason: 'Invalid',
      details: { kind: 'Website', group: 'example.com', causes: [{ field: 'spec.replicas' }] },
    });
  });

  it('prunes unknown fields with a warning, and rejects them under fieldValidation=Strict', async () => {
    const body = {
      apiVersion: 'example.com/v1',
      kind: 'Website',
      metadata: { name: 'p' },
      spec: { host: 'p', colour: 'red' },
    };
    const strict = await t.request(`${SITES}?fieldValidation=Strict`, { method: 'POST', body });
    expect(strict.status).toBe(400);
    expect(strict.json).toMatchObject({ message: 'strict decoding error: unknown field "spec.colour"' });
    const warned = await t.request(SITES, { method: 'POST', body });
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toBe('299 - "unknown field \\"spec.colour\\""');
    expect((warned.json as Obj).spec).toEqual({ host: 'p', replicas: 1 });
  });

  it('serves the CRD module OpenAPI document for the custom group version', async () => {
    const doc = (await t.request('/openapi/v3/apis/example.com/v1')).json as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const schema = Object.values(doc.components.schemas).find((s) => s.properties?.spec !== undefined);
    expect(JSON.stringify(schema)).toContain('"host"');
  });
});

describe('tables through the table module', () => {
  it('answers kubectl-style Table requests with the kind columns and one row per object', async () => {
    await t.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'cm' }, data: { a: '1', b: '2' } },
    });
    const res = await t.request('/api/v1/namespaces/default/configmaps?limit=500', {
      headers: { accept: TABLE },
    });
    expect(res.headers['content-type']).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
    const table = res.json as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string } }[];
      metadata: { resourceVersion: string };
    };
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(table.rows[0]?.cells.slice(0, 2)).toEqual(['cm', 2]);
    expect(table.rows[0]?.object.kind).toBe('PartialObjectMetadata');
    expect(Number(table.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it('uses a CRD version additionalPrinterColumns', async () => {
    const res = await t.request(`${SITES}/a`, { headers: { accept: TABLE } });
    const table = res.json as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Host']);
    expect(table.rows[0]?.cells).toEqual(['a', 'a.example.com']);
  });

  it('streams Table watch events, column definitions only on the first', async () => {
    const rv = (
      (await t.request('/api/v1/namespaces/default/configmaps')).json as {
        metadata: { resourceVersion: string };
      }
    ).metadata.resourceVersion;
    const w = await t.watch(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`, {
      headers: { accept: TABLE },
    });
    await t.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'w1' } },
    });
    await t.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'w2' } },
    });
    await w.waitFor(2);
    expect(w.events.map((e) => e.object.kind)).toEqual(['Table', 'Table']);
    expect(Array.isArray(w.events[0]?.object.columnDefinitions)).toBe(true);
    expect(w.events[1]?.object.columnDefinitions ?? null).toBeNull();
    w.abort();
  });

  it('answers an invalid includeObject with 400', async () => {
    const res = await t.request('/api/v1/namespaces/default/configmaps?includeObject=Everything', {
      headers: { accept: TABLE },
    });
    expect(res.status).toBe(400);
  });
});
