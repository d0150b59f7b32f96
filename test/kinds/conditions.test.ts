/**
 * `Conditions()` from `@converge/kube`: a kind's status conditions as Kubernetes declares its own.
 * The CRD `crdsOf` makes from it is accepted and served by the embedded API server; conditions set
 * with `setStatusCondition` are written through the status subresource and read back; a condition
 * that breaks metav1.Condition's rules is refused with 422 naming the field.
 */
import { Conditions, crdsOf, defineKind, type ObjectOfKind, Type } from '@converge/kube';
import { type Condition, setStatusCondition } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';
import { call as callServer, served } from './http.ts';

const backup = defineKind({
  group: 'example.com',
  version: 'v1',
  kind: 'Backup',
  spec: Type.Object({ schedule: Type.String() }),
  status: Type.Object({ conditions: Type.Optional(Conditions()) }),
});
type Backup = ObjectOfKind<typeof backup>;

let server: ApiServer;

const call = (method: string, path: string, body?: unknown) => callServer(server, method, path, body);

beforeAll(async () => {
  server = createApiServer({});
  await server.listen();
});
afterAll(async () => {
  await server.close();
});

describe('Conditions()', () => {
  it('types status.conditions as setStatusCondition reads and returns them', () => {
    expectTypeOf<
      NonNullable<NonNullable<Backup['status']>['conditions']>[number]
    >().toMatchTypeOf<Condition>();
    const status: NonNullable<Backup['status']> = {};
    status.conditions = setStatusCondition(
      status.conditions,
      { type: 'Ready', status: 'True', reason: 'Done', message: '', observedGeneration: 1 },
      0,
    );
    expect(status.conditions).toHaveLength(1);
  });

  it('is a map list keyed by type in the CRD, which the server accepts; conditions round-trip through /status and bad ones get 422', async () => {
    const [crd] = crdsOf([backup]);
    const conditions =
      crd?.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.status?.properties?.conditions;
    expect(conditions).toMatchObject({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: expect.arrayContaining(['type', 'status', 'lastTransitionTime', 'reason', 'message']),
        properties: { status: { type: 'string', enum: ['True', 'False', 'Unknown'] } },
      },
    });
    const created = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const base = '/apis/example.com/v1/namespaces/default/backups';
    await served(server, base, 30_000);
    const object = await call('POST', base, {
      apiVersion: 'example.com/v1',
      kind: 'Backup',
      metadata: { name: 'nightly' },
      spec: { schedule: '@daily' },
    });
    expect(object.status).toBe(201);
    const stored = object.body as Backup;
    const withReady = {
      ...stored,
      status: {
        conditions: setStatusCondition(
          stored.status?.conditions,
          {
            type: 'Ready',
            status: 'False',
            reason: 'NoSnapshotYet',
            message: 'the first run is due at midnight',
            observedGeneration: stored.metadata.generation ?? 0,
          },
          Date.UTC(2026, 11, 6, 12),
        ),
      },
    };
    const updated = await call('PUT', `${base}/nightly/status`, withReady);
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((updated.body as Backup).status?.conditions).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'NoSnapshotYet',
        message: 'the first run is due at midnight',
        observedGeneration: 1,
        lastTransitionTime: '2026-12-06T12:00:00Z',
      },
    ]);
    const bad = await call('PUT', `${base}/nightly/status`, {
      ...(updated.body as Backup),
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'Maybe',
            reason: 'not camel case',
            message: '',
            lastTransitionTime: 'noon',
          },
        ],
      },
    });
    expect(bad.status).toBe(422);
    const fields = (bad.body as { details: { causes: { field: string }[] } }).details.causes.map(
      (c) => c.field,
    );
    expect(fields).toEqual(
      expect.arrayContaining([
        'status.conditions[0].lastTransitionTime',
        'status.conditions[0].reason',
        'status.conditions[0].status',
      ]),
    );
  });
});
