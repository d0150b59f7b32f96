import { OptionsError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { CREATION_TIMESTAMP, NAME } from './descriptions.ts';
import { type ToTableInput, toTable } from './index.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);

const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'shop',
    uid: 'c0ffee',
    resourceVersion: '41',
    creationTimestamp: '2026-01-10T11:57:00Z',
    labels: { app: 'shop' },
    managedFields: [{ manager: 'kubectl', operation: 'Update' }],
  },
  data: { mode: 'fast' },
};

const input = (overrides: Partial<ToTableInput> = {}): ToTableInput => ({
  objects: [configMap],
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  includeObject: 'Metadata',
  resourceVersion: '42',
  nowMs: now,
  ...overrides,
});

describe('toTable', () => {
  it('builds a meta.k8s.io/v1 Table with column definitions and PartialObjectMetadata rows', () => {
    expect(toTable(input({ continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ', remainingItemCount: 7 }))).toEqual({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '42', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ', remainingItemCount: 7 },
      columnDefinitions: [
        { name: 'Name', type: 'string', format: 'name', description: NAME, priority: 0 },
        {
          name: 'Data',
          type: 'string',
          format: '',
          description: expect.stringContaining('Data contains the configuration data.'),
          priority: 0,
        },
        { name: 'Age', type: 'string', format: '', description: CREATION_TIMESTAMP, priority: 0 },
      ],
      rows: [
        {
          cells: ['settings', 1, '3m'],
          object: {
            kind: 'PartialObjectMetadata',
            apiVersion: 'meta.k8s.io/v1',
            metadata: configMap.metadata,
          },
        },
      ],
    });
  });

  it('serializes every column key, as Go writes format and priority even when empty', () => {
    const json = JSON.stringify(toTable(input()));
    expect(json).toContain('{"name":"Age","type":"string","format":"","description":');
    expect(json).toContain('"priority":0}');
  });

  it('follows includeObject: the object with its type, or null', () => {
    const bare = { metadata: { name: 'typeless' } };
    const full = toTable(input({ objects: [configMap, bare], includeObject: 'Object' }));
    expect(full.rows.map((r) => r.object)).toEqual([
      configMap,
      { ...bare, apiVersion: 'v1', kind: 'ConfigMap' },
    ]);
    expect(toTable(input({ includeObject: 'None' })).rows[0]?.object).toBeNull();
    expect(JSON.stringify(toTable(input({ includeObject: 'None' })).rows[0])).toBe(
      '{"cells":["settings",1,"3m"],"object":null}',
    );
  });

  it('answers in v1beta1 with PartialObjectMetadata of the same version', () => {
    const table = toTable(input({ tableVersion: 'v1beta1' }));
    expect(table.apiVersion).toBe('meta.k8s.io/v1beta1');
    expect(table.rows[0]?.object).toMatchObject({
      apiVersion: 'meta.k8s.io/v1beta1',
      kind: 'PartialObjectMetadata',
    });
  });

  it('leaves column definitions null for watch events after the first', () => {
    const table = toTable(input({ noHeaders: true }));
    expect(table.columnDefinitions).toBeNull();
    expect(table.rows[0]?.cells).toEqual(['settings', 1, '3m']);
  });

  it('omits an empty resourceVersion and continue from the metadata', () => {
    expect(toTable(input({ resourceVersion: '', continue: '' })).metadata).toEqual({});
  });

  it('prints an empty list as no rows', () => {
    expect(toTable(input({ objects: [] })).rows).toEqual([]);
  });

  it('uses a CRD’s printer columns for custom resources, and NAME AGE for kinds without a printer', () => {
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', creationTimestamp: '2026-01-10T10:00:00Z' },
      spec: { size: 'L' },
    };
    const custom = toTable(
      input({
        objects: [widget],
        group: 'example.com',
        kind: 'Widget',
        printerColumns: [{ name: 'Size', type: 'string', jsonPath: '.spec.size' }],
      }),
    );
    expect(custom.columnDefinitions?.map((c) => c.name)).toEqual(['Name', 'Size']);
    expect(custom.rows[0]?.cells).toEqual(['w1', 'L']);

    const unknown = toTable(input({ objects: [widget], group: 'example.com', kind: 'Widget' }));
    expect(unknown.columnDefinitions?.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Age', 'date'],
    ]);
    expect(unknown.rows[0]?.cells).toEqual(['w1', '120m']);
  });

  it('prefers the printer columns it is given over a built-in printer of the same group and kind', () => {
    const table = toTable(
      input({ printerColumns: [{ name: 'Mode', type: 'string', jsonPath: '.data.mode' }] }),
    );
    expect(table.rows[0]?.cells).toEqual(['settings', 'fast']);
  });

  it('rejects a non-finite nowMs', () => {
    expect(() => toTable(input({ nowMs: Number.NaN }))).toThrow(OptionsError);
  });

  it('keeps row conditions from the printer', () => {
    const pod = {
      metadata: { name: 'done' },
      spec: { containers: [{ name: 'a' }] },
      status: { phase: 'Succeeded' },
    };
    const table = toTable(input({ objects: [pod], kind: 'Pod' }));
    expect(table.rows[0]?.conditions).toEqual([
      {
        type: 'Completed',
        status: 'True',
        reason: 'Succeeded',
        message: 'The pod has completed successfully.',
      },
    ]);
  });
});
