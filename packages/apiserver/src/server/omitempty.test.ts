import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { omitEmpty } from './omitempty.ts';
import { startTestServer, type TestServer } from './test-support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('omitempty: empty maps and lists are neither stored nor echoed (as Go encodes them)', () => {
  it('drops labels {}, annotations {}, finalizers [] and data {} of a ConfigMap on create, update and patch', async () => {
    const created = await server.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: {
        metadata: { name: 'e', labels: {}, annotations: {}, finalizers: [], ownerReferences: [] },
        data: {},
      },
    });
    expect(created.status).toBe(201);
    const meta = (created.json as { metadata: Record<string, unknown> }).metadata;
    expect(Object.keys(meta).sort()).toEqual([
      'creationTimestamp',
      'managedFields',
      'name',
      'namespace',
      'resourceVersion',
      'uid',
    ]);
    expect(created.json).not.toHaveProperty('data');
    const patched = await server.request('/api/v1/namespaces/default/configmaps/e', {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      raw: JSON.stringify({ metadata: { labels: {} }, data: {} }),
    });
    expect(patched.status).toBe(200);
    expect((patched.json as { metadata: Record<string, unknown> }).metadata).not.toHaveProperty('labels');
    // a no-op: the resourceVersion does not move
    expect((patched.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe(
      meta.resourceVersion,
    );
  });

  it('drops empty optional lists and maps inside built-in specs, keeps required ones', () => {
    const pod = {
      metadata: { name: 'p', labels: {} },
      spec: {
        containers: [{ name: 'c', image: 'i', env: [], ports: [], resources: { limits: {} } }],
        volumes: [],
        nodeSelector: {},
        tolerations: [],
      },
    };
    const storage = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
    omitEmpty({ storage }, pod);
    expect(pod).toEqual({
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'i', resources: {} }] },
    });
    const role = { metadata: { name: 'r' }, rules: [] };
    omitEmpty(
      { storage: { ...storage, group: 'rbac.authorization.k8s.io', kind: 'Role', plural: 'roles' } },
      role,
    );
    expect(role).toEqual({ metadata: { name: 'r' }, rules: [] });
    const podSpecOnly = { metadata: {}, spec: { containers: [] } };
    omitEmpty({ storage }, podSpecOnly);
    expect(podSpecOnly.spec.containers).toEqual([]);
  });

  it('custom resources: only metadata is Go-encoded, so spec keeps its empty values', () => {
    const object = { metadata: { name: 'w', labels: {}, finalizers: [] }, spec: { items: [], tags: {} } };
    omitEmpty(
      {
        storage: { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true },
        crd: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'widgets.example.com' },
        },
      },
      object,
    );
    expect(object).toEqual({ metadata: { name: 'w' }, spec: { items: [], tags: {} } });
  });

  it('is idempotent, keeps non-empty values and never throws on any JSON (fast-check)', () => {
    const storage = {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      namespaced: true,
    };
    const empty = fc.constantFrom<unknown>([], {});
    const value = fc.oneof(empty, fc.jsonValue({ maxDepth: 4 }));
    const object = fc.record({
      metadata: fc.record({ labels: value, annotations: value, finalizers: value, name: fc.string() }),
      spec: fc.record({
        template: fc.record({ spec: fc.record({ containers: value, volumes: value, nodeSelector: value }) }),
      }),
    });
    fc.assert(
      fc.property(object, (input) => {
        const once = structuredClone(input) as Record<string, unknown>;
        omitEmpty({ storage }, once);
        const twice = structuredClone(once);
        omitEmpty({ storage }, twice);
        expect(twice).toEqual(once);
        const meta = once.metadata as Record<string, unknown>;
        for (const key of ['labels', 'annotations', 'finalizers']) {
          const v = meta[key];
          if (Array.isArray(v)) expect(v.length).toBeGreaterThan(0);
          else if (typeof v === 'object' && v !== null) expect(Object.keys(v).length).toBeGreaterThan(0);
        }
        const podSpec = (once.spec as { template: { spec: Record<string, unknown> } }).template.spec;
        // required: never dropped (items may lose their own empty fields)
        const before = input.spec.template.spec.containers;
        if (Array.isArray(before)) expect((podSpec.containers as unknown[]).length).toBe(before.length);
        else expect(podSpec.containers).toEqual(before);
      }),
      { numRuns: 300 },
    );
  });
});
