import { ConflictError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { goJson } from './json.ts';
import { LAST_APPLIED_ANNOTATION } from './last-applied.ts';
import type { ManagedFieldsEntry } from './managed-fields.ts';
import { serverSideApply } from './server-side-apply.ts';
import { applyStrategicMergePatch } from './strategic-merge.ts';
import { updateManagedFields } from './update-managed-fields.ts';

const SCHEMA = patchSchemaFor('', 'v1', 'ConfigMap');
const T0 = '2026-11-01T10:00:00Z';

type ConfigMap = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; managedFields?: ManagedFieldsEntry[] };
  data?: Record<string, string>;
};

const manifest = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'demo' },
  data,
});

/** What `kubectl apply -f` (client-side) leaves behind: the object, its annotation, an Update entry. */
function clientSideApplied(data: Record<string, string>): ConfigMap {
  const object = manifest(data);
  const created = {
    ...object,
    metadata: { name: 'demo', annotations: { [LAST_APPLIED_ANNOTATION]: `${goJson(object)}\n` } },
  };
  const managedFields = updateManagedFields({
    live: undefined,
    updated: created,
    manager: 'kubectl-client-side-apply',
    apiVersion: 'v1',
    now: T0,
    schema: SCHEMA,
  });
  return { ...created, metadata: { ...created.metadata, managedFields } };
}

function serverSide(live: object, data: Record<string, string>, manager = 'kubectl'): ConfigMap {
  return serverSideApply({
    live,
    applied: manifest(data),
    manager,
    force: false,
    apiVersion: 'v1',
    schema: SCHEMA,
    now: '2026-11-01T11:00:00Z',
  }).object as ConfigMap;
}

describe('kubectl apply --server-side on an object managed by client-side apply', () => {
  it('takes over the fields the last client-side apply set, without a conflict', () => {
    const live = clientSideApplied({ a: '1' });
    const object = serverSide(live, { a: '2' });
    expect(object.data).toEqual({ a: '2' });
    const csa = object.metadata.managedFields?.find((e) => e.manager === 'kubectl-client-side-apply');
    expect(csa?.fieldsV1).toEqual({
      'f:data': {},
      'f:metadata': { 'f:annotations': { '.': {}, [`f:${LAST_APPLIED_ANNOTATION}`]: {} } },
    });
  });

  it('rewrites the last-applied annotation to the configuration it applied', () => {
    const object = serverSide(clientSideApplied({ a: '1' }), { a: '2' });
    expect(object.metadata.annotations?.[LAST_APPLIED_ANNOTATION]).toBe(
      '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"name":"demo"}}\n',
    );
  });

  it('still conflicts on a field someone else changed after the client-side apply', () => {
    const live = clientSideApplied({ a: '1' });
    const edited = applyStrategicMergePatch(
      live,
      { data: { a: 'edited' } },
      SCHEMA as NonNullable<typeof SCHEMA>,
    ) as ConfigMap;
    edited.metadata.managedFields = updateManagedFields({
      live,
      updated: edited,
      manager: 'kubectl-edit',
      apiVersion: 'v1',
      now: T0,
      schema: SCHEMA,
    });
    expect(() => serverSide(edited, { a: '2' })).toThrow(
      'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a',
    );
  });

  it('is reserved to the kubectl field manager: another applier conflicts with the client-side apply', () => {
    const run = () => serverSide(clientSideApplied({ a: '1' }), { a: '2' }, 'my-operator');
    expect(run).toThrow(ConflictError);
    expect(run).toThrow('conflict with "kubectl-client-side-apply" using v1: .data.a');
  });

  it('leaves objects without the annotation without one', () => {
    const created = serverSide({ ...manifest({ a: '1' }), metadata: { name: 'demo' } }, { a: '1' });
    expect(created.metadata.annotations).toBeUndefined();
  });
});
