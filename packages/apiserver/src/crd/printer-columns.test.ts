import { describe, expect, it } from 'vitest';
import { crdInfo, DEFAULT_PRINTER_COLUMNS, type PrinterColumn } from './crd-info.ts';
import { CrdJsonPathError } from './errors.ts';
import { findResults, parseJsonPath } from './jsonpath.ts';
import { printerColumnValues, tableColumnDefinitions } from './printer-columns.ts';
import { selectableFieldValues } from './selectable-fields.ts';
import { pipelineCrd, websiteCrd } from './testdata/crds.ts';

const website = {
  metadata: {
    name: 'w1',
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { 'example.com/owner': 'ops' },
  },
  spec: {
    domain: 'a.example',
    replicas: 3,
    tier: 'pro',
    paths: ['/a', '/b'],
    weight: 2.5,
    tls: { enabled: true },
  },
  status: {
    conditions: [
      { type: 'Progressing', status: 'False' },
      { type: 'Ready', status: 'True' },
    ],
  },
};
const col = (jsonPath: string, type = 'string'): PrinterColumn => ({
  name: 'X',
  type,
  priority: 0,
  jsonPath,
});

describe('printerColumnValues', () => {
  it('evaluates the Website columns, including a filter on conditions', () => {
    const columns = crdInfo(websiteCrd).versions[0]?.printerColumns ?? [];
    expect(printerColumnValues(website, columns)).toEqual([
      'a.example',
      3,
      'True',
      'pro',
      '2026-01-01T00:00:00Z',
    ]);
  });

  it("serves kube's default Age column for CRDs without columns", () => {
    const columns = crdInfo(pipelineCrd).versions[0]?.printerColumns ?? [];
    expect(columns).toBe(DEFAULT_PRINTER_COLUMNS);
    expect(printerColumnValues(website, columns)).toEqual(['2026-01-01T00:00:00Z']);
  });

  it('gives null for missing values and values of the wrong type', () => {
    expect(
      printerColumnValues(website, [
        col('.spec.nope'),
        col('.spec.domain', 'integer'),
        col('.spec.replicas', 'boolean'),
      ]),
    ).toEqual([null, null, null]);
  });

  it("converts numbers to the column type and prints other values as kubectl's JSONPath does", () => {
    expect(
      printerColumnValues(website, [
        col('.spec.weight', 'integer'),
        col('.spec.replicas', 'number'),
        col('.spec.replicas'),
        col('.spec.paths'),
        col('.spec.tls'),
        col('.spec.tls.enabled', 'boolean'),
      ]),
    ).toEqual([2, 3, '3', '[/a /b]', 'map[enabled:true]', true]);
  });

  it('marks unparsable dates as <invalid>', () => {
    expect(
      printerColumnValues({ metadata: { creationTimestamp: 'yesterday' } }, [
        col('.metadata.creationTimestamp', 'date'),
      ]),
    ).toEqual(['<invalid>']);
  });

  it('throws CrdJsonPathError for an expression it cannot parse', () => {
    expect(() => printerColumnValues(website, [col('.spec[')])).toThrow(CrdJsonPathError);
  });
});

describe('JSONPath', () => {
  const find = (path: string): unknown[] => findResults(parseJsonPath(path), website);

  it('supports indexes, negative indexes, slices and wildcards', () => {
    expect(find('.spec.paths[0]')).toEqual(['/a']);
    expect(find('.spec.paths[-1]')).toEqual(['/b']);
    expect(find('.spec.paths[0:1]')).toEqual(['/a']);
    expect(find('.status.conditions[*].type')).toEqual(['Progressing', 'Ready']);
  });

  it('supports escaped dots, bracket names, recursive descent and the braces kubectl writes', () => {
    expect(find('.metadata.annotations.example\\.com/owner')).toEqual(['ops']);
    expect(find("{.metadata.annotations['example.com/owner']}")).toEqual(['ops']);
    expect(find('..enabled')).toEqual([true]);
  });

  it('supports filters with comparisons and existence', () => {
    expect(find('.status.conditions[?(@.status!="True")].type')).toEqual(['Progressing']);
    expect(find('.status.conditions[?(@.type)].status')).toEqual(['False', 'True']);
    expect(
      findResults(parseJsonPath('.items[?(@.n > 1)].n'), { items: [{ n: 1 }, { n: 2 }, { n: 3 }] }),
    ).toEqual([2, 3]);
  });
});

describe('tableColumnDefinitions', () => {
  it('starts with Name and describes undocumented columns by their JSONPath', () => {
    const defs = tableColumnDefinitions([col('.spec.domain')]);
    expect(defs.map((d) => [d.name, d.type, d.format])).toEqual([
      ['Name', 'string', 'name'],
      ['X', 'string', ''],
    ]);
    expect(defs[1]?.description).toBe('Custom resource definition column (in JSONPath format): .spec.domain');
  });
});

describe('selectableFieldValues', () => {
  it('gives names and the selectable fields as Go prints them, empty when absent', () => {
    expect(
      selectableFieldValues(
        website,
        ['.spec.tier', '.spec.replicas', '.spec.tls.enabled', '.spec.none'],
        true,
      ),
    ).toEqual({
      'metadata.name': 'w1',
      'metadata.namespace': '',
      'spec.tier': 'pro',
      'spec.replicas': '3',
      'spec.tls.enabled': 'true',
      'spec.none': '',
    });
    expect(selectableFieldValues({ metadata: { name: 'c' } }, [], false)).toEqual({ 'metadata.name': 'c' });
  });
});
