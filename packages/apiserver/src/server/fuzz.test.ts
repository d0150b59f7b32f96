import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requests } from './fuzz-arbitraries.ts';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
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
            subresources: {
              status: {},
              scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
            },
          },
        ],
      },
    },
  });
});
afterAll(async () => {
  await t.close();
});

/** The one 5xx kube-apiserver answers for client input: a resourceVersion in a create body. */
function allowedServerError(status: number, body: unknown): boolean {
  return (
    status === 500 &&
    String((body as { message?: unknown } | undefined)?.message).includes(
      'resourceVersion should not be set on objects to be created',
    )
  );
}

describe('fuzzing the HTTP surface', () => {
  it('answers thousands of random and mutated requests without a 5xx, and the store stays consistent', async () => {
    await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'fuzz' } } });
    await fc.assert(
      fc.asyncProperty(requests, async (r) => {
        const headers: Record<string, string> = {};
        if (r.contentType !== '') headers['content-type'] = r.contentType;
        if (r.accept !== '') headers.accept = r.accept;
        const isWatch = `${r.path}${r.query}`.includes('watch');
        const res = await t.request(`${r.path}${r.query}`, {
          method: r.method,
          ...(r.method === 'GET' || isWatch ? {} : { raw: r.body }),
          headers,
        });
        if (res.status >= 500 && !allowedServerError(res.status, res.json)) {
          throw new Error(`${r.method} ${r.path}${r.query} → ${res.status} ${res.text}`);
        }
        if (res.status >= 400 && res.status !== 405) {
          expect(res.json, `${r.method} ${r.path}${r.query}`).toMatchObject({
            kind: 'Status',
            status: 'Failure',
            code: res.status,
          });
        }
      }),
      { numRuns: 2_000 },
    );
    expect((await t.request('/version')).status).toBe(200);
    const store = t.server.store;
    await store.gcSettled();
    for (const type of store.types()) {
      const list = await store.list(type);
      expect(Number(list.resourceVersion)).toBeLessThanOrEqual(store.revision);
      const keys = list.items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
      expect(new Set(keys).size).toBe(keys.length);
      for (const object of list.items) {
        expect(Number(object.metadata.resourceVersion)).toBeLessThanOrEqual(store.revision);
        expect(object.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
        if (type.namespaced) {
          const ns = await t.request(`/api/v1/namespaces/${object.metadata.namespace ?? ''}`);
          expect(ns.status, `${type.plural} ${keys.join(',')}`).toBe(200);
        }
      }
      const path = `${type.group === '' ? '/api/v1' : `/apis/${type.group}/${type.version}`}/${type.plural}`;
      const served = await t.request(path);
      expect(served.status, path).toBe(200);
      expect((served.json as { items: unknown[] }).items).toHaveLength(list.items.length);
    }
  }, 120_000);
});
