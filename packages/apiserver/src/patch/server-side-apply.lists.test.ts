import { ConflictError, InvalidError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { cpuMs } from '../cpu-test-support.ts';
import { patchSchemaFor } from './builtin-schemas.ts';
import type { ManagedFieldsEntry } from './managed-fields.ts';
import type { PatchSchema } from './schema.ts';
import { type ServerSideApplyInput, serverSideApply } from './server-side-apply.ts';

/* Server-side apply of lists (by key, as sets, atomic) and of subresources. */

const CONFIGMAP = patchSchemaFor('', 'v1', 'ConfigMap');
const T0 = '2026-11-01T10:00:00Z';
const T1 = '2026-11-01T10:01:00Z';
const T2 = '2026-11-01T10:02:00Z';

type Obj = Record<string, unknown> & {
  metadata?: Record<string, unknown> & { managedFields?: ManagedFieldsEntry[] };
};

const cm = (metadata: object): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'demo', ...metadata },
});

function apply(
  live: object | undefined,
  applied: object,
  manager: string,
  options: Partial<ServerSideApplyInput> = {},
): Obj {
  const input = {
    live,
    applied,
    manager,
    force: false,
    apiVersion: 'v1',
    schema: CONFIGMAP,
    now: T0,
    ...options,
  };
  return serverSideApply(input).object as Obj;
}

const entry = (object: Obj, manager: string) =>
  object.metadata?.managedFields?.find((e) => e.manager === manager);

function conflictOf(run: () => unknown): ConflictError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConflictError) return error;
    throw error;
  }
  throw new Error('expected a conflict');
}

describe('lists', () => {
  const DEPLOYMENT = patchSchemaFor('apps', 'v1', 'Deployment');
  const deploy = (containers: object[]) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { template: { spec: { containers } } },
  });
  const onDeployment = { apiVersion: 'apps/v1', schema: DEPLOYMENT };

  it('managers own containers by name: each adds its own, a conflict names the container', () => {
    const one = apply(undefined, deploy([{ name: 'app', image: 'a:1' }]), 'one', onDeployment);
    const two = apply(one, deploy([{ name: 'log', image: 'l:1' }]), 'two', { ...onDeployment, now: T1 });
    expect((two.spec as { template: { spec: { containers: unknown } } }).template.spec.containers).toEqual([
      { name: 'app', image: 'a:1' },
      { name: 'log', image: 'l:1' },
    ]);
    expect(entry(two, 'two')?.fieldsV1).toEqual({
      'f:spec': {
        'f:template': {
          'f:spec': { 'f:containers': { 'k:{"name":"log"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
    const error = conflictOf(() => apply(two, deploy([{ name: 'app', image: 'a:2' }]), 'two', onDeployment));
    expect(error.message).toBe(
      'Apply failed with 1 conflict: conflict with "one": .spec.template.spec.containers[name="app"].image',
    );
    const dropped = apply(two, deploy([]), 'two', { ...onDeployment, now: T2 });
    expect(JSON.stringify(dropped.spec)).not.toContain('"log"');
  });

  it('keys container ports by containerPort and the defaulted protocol', () => {
    const object = apply(
      undefined,
      deploy([{ name: 'app', ports: [{ containerPort: 80 }] }]),
      'one',
      onDeployment,
    );
    expect(JSON.stringify(entry(object, 'one')?.fieldsV1)).toContain(
      'k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}',
    );
  });

  it('finalizers are a set: two managers each add one, and each owns only its value', () => {
    const one = apply(undefined, cm({ finalizers: ['a/x'] }), 'one');
    const two = apply(one, cm({ finalizers: ['b/y'] }), 'two', { now: T1 });
    expect(two.metadata).toMatchObject({ finalizers: ['a/x', 'b/y'] });
    expect(entry(two, 'two')?.fieldsV1).toEqual({ 'f:metadata': { 'f:finalizers': { 'v:"b/y"': {} } } });
    const oneDrops = apply(two, cm({}), 'one', { now: T2 });
    expect(oneDrops.metadata).toMatchObject({ finalizers: ['b/y'] });
  });

  it('applies sets of 20 000 values over 20 000 live ones without quadratic work', () => {
    const values = (from: number) => Array.from({ length: 20_000 }, (_, i) => `f/${from + i}`);
    const live = apply(undefined, cm({ finalizers: values(0) }), 'one');
    const started = cpuMs();
    const object = apply(live, cm({ finalizers: values(10_000) }), 'two', { now: T1 });
    expect(cpuMs() - started).toBeLessThan(3_000);
    expect(object.metadata?.finalizers).toHaveLength(30_000);
  });

  it('a list without schema is atomic: a second manager changing it conflicts on the whole list', () => {
    const widget = (items: object[]) => ({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { items },
    });
    const options = { apiVersion: 'example.com/v1', schema: undefined };
    const live = apply(undefined, widget([{ name: 'a' }]), 'one', options);
    expect(entry(live, 'one')?.fieldsV1).toEqual({ 'f:spec': { 'f:items': {} } });
    const error = conflictOf(() => apply(live, widget([{ name: 'b' }]), 'two', options));
    expect(error.message).toBe('Apply failed with 1 conflict: conflict with "one": .spec.items');
  });

  it('an apply with two containers of the same name is an InvalidError naming the list', () => {
    const run = () => apply(undefined, deploy([{ name: 'a' }, { name: 'a' }]), 'one', onDeployment);
    expect(run).toThrow(InvalidError);
    expect(run).toThrow('.spec.template.spec.containers: duplicate entries for key [name="a"]');
  });
});

describe('apply with a CRD schema', () => {
  it('uses a subresource in the manager identity and in conflict messages', () => {
    const schema: PatchSchema = { type: 'struct', fields: { status: { type: 'struct' } } };
    const options = { apiVersion: 'example.com/v1', schema, subresource: 'status' };
    const widget = (phase: string) => ({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      status: { phase },
    });
    const live = apply(undefined, widget('a'), 'ctrl', options);
    expect(entry(live, 'ctrl')?.subresource).toBe('status');
    const error = conflictOf(() => apply(live, widget('b'), 'other', options));
    expect(error.message).toBe(
      'Apply failed with 1 conflict: conflict with "ctrl" with subresource "status": .status.phase',
    );
  });
});
