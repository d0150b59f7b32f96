import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { MAX_UPDATE_MANAGERS, type ManagedFieldsEntry } from './managed-fields.ts';
import { updateManagedFields } from './update-managed-fields.ts';

const SCHEMA = patchSchemaFor('', 'v1', 'ConfigMap');

const cm = (data: Record<string, string>, managedFields?: unknown) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'demo',
    uid: 'u-1',
    resourceVersion: '5',
    ...(managedFields === undefined ? {} : { managedFields }),
  },
  data,
});

function update(live: object | undefined, updated: object, manager: string, now = '2026-11-01T10:00:00Z') {
  return updateManagedFields({ live, updated, manager, apiVersion: 'v1', now, schema: SCHEMA });
}

function withFields(object: ReturnType<typeof cm>, managedFields: ManagedFieldsEntry[]) {
  return { ...object, metadata: { ...object.metadata, managedFields } };
}

describe('updateManagedFields', () => {
  it('a create records the creator as owner of every field it set, maps it created marked with "."', () => {
    expect(update(undefined, cm({ a: '1' }), 'kubectl-create')).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      },
    ]);
  });

  it('an update takes the fields it changes from their owners and adds to its own entry', () => {
    const live = withFields(cm({ a: '1', b: '1' }), update(undefined, cm({ a: '1', b: '1' }), 'creator'));
    const fields = update(live, cm({ a: '2', b: '1', c: '3' }), 'editor', '2026-11-01T11:00:00Z');
    expect(fields.map((f) => [f.manager, f.fieldsV1])).toEqual([
      ['creator', { 'f:data': { '.': {}, 'f:b': {} } }],
      ['editor', { 'f:data': { 'f:a': {}, 'f:c': {} } }],
    ]);
  });

  it('removing a field removes it from every owner, and an emptied entry disappears', () => {
    const live = withFields(cm({ a: '1' }), update(undefined, cm({ a: '1' }), 'creator'));
    const later = update(live, { ...cm({}), data: undefined }, 'editor');
    expect(later).toEqual([]);
  });

  it('a write that changes nothing leaves the entries as they were, times included', () => {
    const fields = update(undefined, cm({ a: '1' }), 'creator');
    const live = withFields(cm({ a: '1' }), fields);
    expect(update(live, cm({ a: '1' }), 'editor', '2026-11-02T00:00:00Z')).toEqual(fields);
  });

  it('does not start tracking an existing object that has no managedFields', () => {
    expect(update(cm({ a: '1' }), cm({ a: '2' }), 'editor')).toEqual([]);
  });

  it('an update sending managedFields: [] clears them', () => {
    const live = withFields(cm({ a: '1' }), update(undefined, cm({ a: '1' }), 'creator'));
    expect(update(live, cm({ a: '2' }, []), 'editor')).toEqual([]);
  });

  it('an update may replace the managedFields with valid ones of its own', () => {
    const live = withFields(cm({ a: '1' }), update(undefined, cm({ a: '1' }), 'creator'));
    const sent = [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ];
    expect(update(live, cm({ a: '1' }, sent), 'kubectl-patch')).toEqual(sent);
  });

  it('ignores managedFields it cannot decode and keeps the live ones', () => {
    const fields = update(undefined, cm({ a: '1' }), 'creator');
    const live = withFields(cm({ a: '1' }), fields);
    expect(update(live, cm({ a: '1' }, [{ operation: 'Nope' }]), 'editor')).toEqual(fields);
  });

  it('a write to a subresource ignores the managedFields it carries and records the subresource', () => {
    const live = withFields(cm({ a: '1' }), update(undefined, cm({ a: '1' }), 'creator'));
    const fields = updateManagedFields({
      live,
      updated: cm({ a: '2' }, []),
      manager: 'ctrl',
      apiVersion: 'v1',
      now: '2026-11-01T12:00:00Z',
      subresource: 'status',
      schema: SCHEMA,
    });
    expect(fields.map((f) => [f.manager, f.subresource])).toEqual([
      ['creator', undefined],
      ['ctrl', 'status'],
    ]);
  });

  it('an empty manager is recorded as unknown', () => {
    expect(update(undefined, cm({ a: '1' }), '')[0]?.manager).toBe('unknown');
  });

  it(`keeps at most ${MAX_UPDATE_MANAGERS} update entries, folding the oldest into ancient-changes`, () => {
    let live = withFields(cm({}), update(undefined, cm({ k0: 'x' }), 'm0', '2026-11-01T00:00:00Z'));
    for (let i = 1; i <= 11; i++) {
      const data = { ...live.data, [`k${i}`]: 'x' };
      const next = cm(data);
      const at = `2026-11-01T00:${String(i).padStart(2, '0')}:00Z`;
      live = withFields(next, update(live, next, `m${i}`, at));
    }
    const names = (live.metadata.managedFields ?? []).map((f) => f.manager);
    expect(names).toHaveLength(MAX_UPDATE_MANAGERS);
    expect(names).toContain('ancient-changes');
    expect(names).not.toContain('m0');
    const ancient = live.metadata.managedFields?.find((f) => f.manager === 'ancient-changes');
    expect(ancient?.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
  });
});
