import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object/index.ts';
import {
  findStatusCondition,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
} from './conditions.ts';
import { AlreadyOwnedError, InvalidOwnerError } from './errors.ts';
import { addFinalizer, hasFinalizer, isBeingDeleted, removeFinalizer } from './finalizers.ts';
import { controllerOf, removeOwnerReference, setControllerReference, setOwnerReference } from './owner.ts';

const owner: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name: 'site', namespace: 'default', uid: 'u-1' },
};
const child: KubeObject = Object.freeze({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: Object.freeze({ name: 'cm', namespace: 'default' }),
});

describe('owner references', () => {
  it('setControllerReference adds a controller reference with blockOwnerDeletion and leaves the input untouched', () => {
    const owned = setControllerReference(owner, child);
    expect(owned.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'example.com/v1',
        kind: 'Website',
        name: 'site',
        uid: 'u-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(child.metadata.ownerReferences).toBeUndefined();
    expect(controllerOf(owned)?.uid).toBe('u-1');
  });

  it('setControllerReference is idempotent and refuses a second controller', () => {
    const once = setControllerReference(owner, child);
    expect(setControllerReference(owner, once).metadata.ownerReferences).toHaveLength(1);
    const other = { ...owner, metadata: { ...owner.metadata, name: 'other', uid: 'u-2' } };
    expect(() => setControllerReference(other, once)).toThrow(AlreadyOwnedError);
  });

  it('refuses cross-namespace owners and owners without uid, but allows cluster-scoped owners anywhere', () => {
    const elsewhere = { ...child, metadata: { ...child.metadata, namespace: 'other' } };
    expect(() => setControllerReference(owner, elsewhere)).toThrow(InvalidOwnerError);
    expect(() => setOwnerReference({ ...owner, metadata: { name: 'x' } }, child)).toThrow(InvalidOwnerError);
    const clusterOwner = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', uid: 'u-ns' } };
    expect(setOwnerReference(clusterOwner, elsewhere).metadata.ownerReferences?.[0]?.uid).toBe('u-ns');
  });

  it('setOwnerReference adds a non-controller reference and keeps an existing controller flag', () => {
    const plain = setOwnerReference(owner, child);
    expect(plain.metadata.ownerReferences?.[0]?.controller).toBeUndefined();
    const controlled = setOwnerReference(owner, setControllerReference(owner, child));
    expect(controlled.metadata.ownerReferences?.[0]?.controller).toBe(true);
    expect(removeOwnerReference(owner, controlled).metadata.ownerReferences).toEqual([]);
  });
});

describe('finalizers', () => {
  it('add and remove return copies and are idempotent', () => {
    const added = addFinalizer(child, 'example.com/cleanup');
    expect(hasFinalizer(added, 'example.com/cleanup')).toBe(true);
    expect(hasFinalizer(child, 'example.com/cleanup')).toBe(false);
    expect(addFinalizer(added, 'example.com/cleanup')).toBe(added);
    expect(removeFinalizer(added, 'example.com/cleanup').metadata.finalizers).toEqual([]);
    expect(removeFinalizer(child, 'x')).toBe(child);
    expect(isBeingDeleted(child)).toBe(false);
    expect(isBeingDeleted({ metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } })).toBe(true);
  });
});

describe('status conditions', () => {
  it('keeps lastTransitionTime while the status stays the same and moves it when the status changes', () => {
    const t0 = Date.UTC(2026, 0, 1);
    let c = setStatusCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Pending', message: '', observedGeneration: 1 },
      t0,
    );
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    c = setStatusCondition(
      c,
      { type: 'Ready', status: 'False', reason: 'StillPending', message: 'x', observedGeneration: 2 },
      t0 + 60_000,
    );
    expect(c[0]).toMatchObject({
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'StillPending',
      observedGeneration: 2,
    });
    c = setStatusCondition(
      c,
      { type: 'Ready', status: 'True', reason: 'Available', message: '' },
      t0 + 120_000,
    );
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T00:02:00Z');
    expect(isStatusConditionTrue(c, 'Ready')).toBe(true);
    expect(findStatusCondition(c, 'Missing')).toBeUndefined();
    expect(removeStatusCondition(c, 'Ready')).toEqual([]);
  });
});
