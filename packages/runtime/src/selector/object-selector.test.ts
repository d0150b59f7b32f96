import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import { DEFAULT_SELECTABLE_FIELDS } from './field-selector.ts';
import { fieldValueAtPath } from './field-value.ts';
import { objectSelector } from './object-selector.ts';

interface Pod extends KubeObject {
  readonly spec?: { readonly nodeName?: string; readonly replicas?: number; readonly paused?: boolean };
}

const web: Pod = {
  metadata: { namespace: 'default', name: 'web', labels: { app: 'web' } },
  spec: { nodeName: 'n1' },
};
const api: Pod = { metadata: { namespace: 'default', name: 'api', labels: { app: 'api', tier: 'be' } } };
const sys: Pod = { metadata: { namespace: 'kube-system', name: 'dns', labels: { app: 'dns' } } };
const node: Pod = { metadata: { name: 'node-1' } };
const all = [web, api, sys, node];

function names(selected: (object: KubeObject) => boolean): (string | undefined)[] {
  return all.filter(selected).map((object) => object.metadata.name);
}

describe('objectSelector', () => {
  it('empty options select every object', () => {
    expect(names(objectSelector({}))).toEqual(['web', 'api', 'dns', 'node-1']);
    expect(names(objectSelector({ namespace: '', labelSelector: '', fieldSelector: '' }))).toHaveLength(4);
  });

  it('a namespace selects the objects in it only', () => {
    expect(names(objectSelector({ namespace: 'default' }))).toEqual(['web', 'api']);
  });

  it('a label selector selects by labels, with objects without labels treated as having none', () => {
    expect(names(objectSelector({ labelSelector: 'app!=web' }))).toEqual(['api', 'dns', 'node-1']);
    expect(names(objectSelector({ labelSelector: 'app in (web,dns)' }))).toEqual(['web', 'dns']);
  });

  it('a field selector selects by metadata.name and metadata.namespace, a missing namespace being empty', () => {
    expect(names(objectSelector({ fieldSelector: 'metadata.name=api' }))).toEqual(['api']);
    expect(names(objectSelector({ fieldSelector: 'metadata.namespace=' }))).toEqual(['node-1']);
  });

  it('namespace, labels and fields must all hold', () => {
    const selected = objectSelector({
      namespace: 'default',
      labelSelector: 'app',
      fieldSelector: 'metadata.name!=web',
    });
    expect(names(selected)).toEqual(['api']);
  });

  it('reads other fields with the given reader once they are allowed', () => {
    const allowed = [...DEFAULT_SELECTABLE_FIELDS, 'spec.nodeName'];
    expect(names(objectSelector({ fieldSelector: 'spec.nodeName=n1' }, fieldValueAtPath, allowed))).toEqual([
      'web',
    ]);
    const reader = (object: KubeObject, path: string): string | undefined =>
      path === 'spec.nodeName' ? (object.metadata.name === 'dns' ? 'n1' : undefined) : undefined;
    expect(names(objectSelector({ fieldSelector: 'spec.nodeName=n1' }, reader, allowed))).toEqual(['dns']);
  });

  it('throws a 400 when it is built, for bad selectors and fields not allowed', () => {
    expect(() => objectSelector({ labelSelector: 'app in ()' })).toThrow(BadRequestError);
    expect(() => objectSelector({ fieldSelector: 'spec.nodeName=n1' })).toThrow(
      'field label not supported: spec.nodeName',
    );
    expect(() => objectSelector({ namespace: 7 as unknown as string })).toThrow(BadRequestError);
  });
});

describe('fieldValueAtPath', () => {
  it('reads strings, and numbers and booleans as their string form', () => {
    const pod: Pod = { metadata: { name: 'p' }, spec: { nodeName: 'n1', replicas: 3, paused: false } };
    expect(fieldValueAtPath(pod, 'metadata.name')).toBe('p');
    expect(fieldValueAtPath(pod, 'spec.nodeName')).toBe('n1');
    expect(fieldValueAtPath(pod, 'spec.replicas')).toBe('3');
    expect(fieldValueAtPath(pod, 'spec.paused')).toBe('false');
  });

  it('gives undefined for missing paths, objects, arrays and null', () => {
    const object = { metadata: { name: 'p', finalizers: ['a'] }, spec: null } as unknown as KubeObject;
    expect(fieldValueAtPath(object, 'metadata')).toBeUndefined();
    expect(fieldValueAtPath(object, 'metadata.finalizers')).toBeUndefined();
    expect(fieldValueAtPath(object, 'metadata.finalizers.0')).toBeUndefined();
    expect(fieldValueAtPath(object, 'spec.nodeName')).toBeUndefined();
    expect(fieldValueAtPath(object, 'status.phase')).toBeUndefined();
  });

  it('never follows inherited properties such as constructor or __proto__', () => {
    const object: KubeObject = { metadata: { name: 'p' } };
    expect(fieldValueAtPath(object, 'constructor.name')).toBeUndefined();
    expect(fieldValueAtPath(object, '__proto__.constructor.name')).toBeUndefined();
    expect(fieldValueAtPath(object, 'metadata.toString')).toBeUndefined();
  });
});
