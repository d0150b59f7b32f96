import { BadRequestError, ConflictError, InvalidError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { PatchErrorCodes } from './errors.ts';
import type { ManagedFieldsEntry } from './managed-fields.ts';
import { type ServerSideApplyInput, serverSideApply } from './server-side-apply.ts';
import { updateManagedFields } from './update-managed-fields.ts';

const CONFIGMAP = patchSchemaFor('', 'v1', 'ConfigMap');
const T0 = '2026-11-01T10:00:00Z';
const T1 = '2026-11-01T10:01:00Z';
const T2 = '2026-11-01T10:02:00Z';

type Obj = Record<string, unknown> & {
  metadata?: Record<string, unknown> & { managedFields?: ManagedFieldsEntry[] };
};

function cm(data: Record<string, string> | undefined, metadata: object = {}): Obj {
  const object: Obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo', ...metadata } };
  if (data !== undefined) object.data = data;
  return object;
}

function apply(
  live: object | undefined,
  applied: object,
  manager: string,
  options: Partial<ServerSideApplyInput> = {},
): Obj {
  return serverSideApply({
    live,
    applied,
    manager,
    force: false,
    apiVersion: 'v1',
    schema: CONFIGMAP,
    now: T0,
    ...options,
  }).object as Obj;
}

function managers(object: Obj): string[] {
  return (object.metadata?.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`);
}

function entry(object: Obj, manager: string): ManagedFieldsEntry | undefined {
  return object.metadata?.managedFields?.find((e) => e.manager === manager);
}

function conflictOf(run: () => unknown): ConflictError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConflictError) return error;
    throw error;
  }
  throw new Error('expected a conflict');
}

describe('apply creates and records ownership', () => {
  it('creates the object from the configuration and records an Apply entry with its fields', () => {
    const object = apply(undefined, cm({ a: '1' }, { labels: { app: 'web' } }), 'mgr');
    expect(object.data).toEqual({ a: '1' });
    expect(object.metadata?.managedFields).toEqual([
      {
        manager: 'mgr',
        operation: 'Apply',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    ]);
  });

  it('applying the same configuration twice is a no-op the second time, time included', () => {
    const first = apply(undefined, cm({ a: '1' }), 'mgr');
    const second = apply(first, cm({ a: '1' }), 'mgr', { now: T1 });
    expect(second).toEqual(first);
    expect(entry(second, 'mgr')?.time).toBe(T0);
  });

  it('merges into the live object and keeps fields the configuration does not mention', () => {
    const live = apply(undefined, cm({ a: '1' }), 'one');
    const object = apply(live, cm({ b: '2' }), 'two', { now: T1 });
    expect(object.data).toEqual({ a: '1', b: '2' });
    expect(managers(object)).toEqual(['one/Apply', 'two/Apply']);
  });

  it('a null in the configuration leaves the field absent, and still conflicts with its owner', () => {
    const live = apply(undefined, cm({ a: '1', b: '1' }), 'one');
    const mine = { ...cm({ c: '1' }), data: { b: null, c: '1' } };
    expect(() => apply(live, mine, 'two')).toThrow('conflict with "one": .data.b');
    const object = apply(live, mine, 'two', { force: true, now: T1 });
    expect(object.data).toEqual({ a: '1', c: '1' });
    expect(entry(object, 'two')?.fieldsV1).toEqual({ 'f:data': { 'f:b': {}, 'f:c': {} } });
  });

  it('does not mutate its inputs', () => {
    const live = apply(undefined, cm({ a: '1' }), 'one');
    const applied = cm({ a: '1', b: '2' });
    const before = structuredClone({ live, applied });
    apply(live, applied, 'one', { now: T1 });
    expect({ live, applied }).toEqual(before);
  });
});

describe('removing fields', () => {
  it('removes a field its manager applied before and omits now', () => {
    const live = apply(undefined, cm({ a: '1', b: '2' }), 'mgr');
    const object = apply(live, cm({ b: '2' }), 'mgr', { now: T1 });
    expect(object.data).toEqual({ b: '2' });
    expect(entry(object, 'mgr')?.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
  });

  it('keeps a field two managers share when one drops it, and removes it when the other does too', () => {
    const shared = apply(apply(undefined, cm({ a: '1', b: '2' }), 'one'), cm({ a: '1' }), 'two', { now: T1 });
    expect(entry(shared, 'two')?.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    const oneDrops = apply(shared, cm({ b: '2' }), 'one', { now: T2 });
    expect(oneDrops.data).toEqual({ a: '1', b: '2' });
    const twoDrops = apply(oneDrops, cm(undefined, { labels: { x: 'y' } }), 'two', { now: T2 });
    expect(twoDrops.data).toEqual({ b: '2' });
  });

  it('removes a whole map the manager stops applying, unless another manager owns something in it', () => {
    const live = apply(undefined, cm({ a: '1' }, { labels: { app: 'web' } }), 'mgr');
    expect(apply(live, cm({ a: '1' }), 'mgr', { now: T1 }).metadata).toEqual({
      name: 'demo',
      managedFields: [expect.objectContaining({ manager: 'mgr' })],
    });
    const withOther = apply(live, cm(undefined, { labels: { team: 'x' } }), 'other', { now: T1 });
    const dropped = apply(withOther, cm(undefined), 'mgr', { now: T2 });
    expect(dropped.data).toBeUndefined();
    expect(dropped.metadata).toMatchObject({ labels: { team: 'x' } });
  });
});

describe('conflicts', () => {
  it('changing a value another applier owns is a 409 naming the manager and the field', () => {
    const live = apply(undefined, cm({ a: '1' }), 'one');
    const error = conflictOf(() => apply(live, cm({ a: '2' }), 'two'));
    expect(error.message).toBe('Apply failed with 1 conflict: conflict with "one": .data.a');
    expect(error.status).toBe(409);
    expect(error.details.causes).toEqual([
      { reason: 'FieldManagerConflict', field: '.data.a', message: 'conflict with "one"' },
    ]);
    expect((error.cause as { code?: string }).code).toBe(PatchErrorCodes.APPLY_CONFLICT);
  });

  it('applying the value the other manager set is no conflict: the field becomes shared', () => {
    const live = apply(undefined, cm({ a: '1' }), 'one');
    const object = apply(live, cm({ a: '1' }), 'two', { now: T1 });
    expect(entry(object, 'one')?.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    expect(entry(object, 'two')?.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
  });

  it('force takes the field over: the other manager loses it and its empty entry goes', () => {
    const live = apply(undefined, cm({ a: '1' }), 'one');
    const object = apply(live, cm({ a: '2' }), 'two', { force: true, now: T1 });
    expect(object.data).toEqual({ a: '2' });
    expect(managers(object)).toEqual(['two/Apply']);
  });

  it('an apply after an Update-owned field changed conflicts with the updater, naming its apiVersion', () => {
    const created = cm({ a: '1' });
    const live = {
      ...created,
      metadata: {
        name: 'demo',
        managedFields: updateManagedFields({
          live: undefined,
          updated: created,
          manager: 'kubectl-create',
          apiVersion: 'v1',
          now: T0,
          schema: CONFIGMAP,
        }),
      },
    };
    const error = conflictOf(() => apply(live, cm({ a: '2' }), 'kubectl', { now: T1 }));
    expect(error.message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a',
    );
  });

  it('lists several conflicts grouped by manager', () => {
    const live = apply(apply(undefined, cm({ a: '1', b: '1' }), 'one'), cm({ c: '1' }), 'two', { now: T1 });
    const error = conflictOf(() => apply(live, cm({ a: '2', b: '2', c: '2' }), 'three', { now: T2 }));
    expect(error.message).toBe(
      'Apply failed with 3 conflicts: conflicts with "one":\n- .data.a\n- .data.b\nconflicts with "two":\n- .data.c',
    );
    expect(error.details.causes?.map((c) => c.field)).toEqual(['.data.a', '.data.b', '.data.c']);
  });

  it('an object without managedFields is owned by before-first-apply', () => {
    const error = conflictOf(() => apply(cm({ a: '1' }), cm({ a: '2' }), 'mgr'));
    expect(error.message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
    );
    const object = apply(cm({ a: '1', b: '1' }), cm({ a: '2' }), 'mgr', { force: true });
    expect(managers(object)).toEqual(['mgr/Apply', 'before-first-apply/Update']);
    expect(entry(object, 'before-first-apply')?.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:b': {} } });
  });
});

describe('request validation', () => {
  it('a missing fieldManager is a 422 with the apiserver message', () => {
    const run = () => apply(undefined, cm({ a: '1' }), '');
    expect(run).toThrow(InvalidError);
    expect(run).toThrow(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  });

  it('managedFields in the configuration are refused', () => {
    const run = () => apply(undefined, cm({ a: '1' }, { managedFields: [] }), 'mgr');
    expect(run).toThrow(BadRequestError);
    expect(run).toThrow('metadata.managedFields must be nil');
  });

  it('a configuration of another apiVersion than the request is refused', () => {
    const run = () => apply(undefined, { ...cm({ a: '1' }), apiVersion: 'v2' }, 'mgr');
    expect(run).toThrow(
      'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
    );
  });

  it('reset fields are applied but not owned', () => {
    const withStatus = { ...cm({ a: '1' }), status: { phase: 'x' } };
    const object = apply(undefined, withStatus, 'mgr', { resetFields: [['status']] });
    expect(object.status).toEqual({ phase: 'x' });
    expect(entry(object, 'mgr')?.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
  });
});
