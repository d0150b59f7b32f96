import { describe, expect, it } from 'vitest';
import { customResourcePrinter, type PrinterColumn } from './custom-columns.ts';
import { CREATION_TIMESTAMP, NAME } from './descriptions.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);

const widget = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w1', creationTimestamp: '2026-01-10T11:55:00Z' },
  spec: {
    replicas: 3,
    ratio: 0.25,
    big: 1234567.5,
    paused: true,
    selector: { tier: 'web', app: 'a<b>&c' },
    size: null,
    when: '2026-01-09T12:00:00Z',
    bad: 'tomorrow',
  },
  status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-10T11:00:00Z' }] },
};

const cellsOf = (columns: readonly PrinterColumn[], object: Record<string, unknown> = widget) =>
  customResourcePrinter(columns).row(object, now).cells;

describe('custom resource printer columns', () => {
  it('define NAME plus one column per printer column, with the CRD’s type, format, priority and description', () => {
    const printer = customResourcePrinter([
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', format: 'int32', priority: 1 },
      {
        name: 'Ready',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Ready")].status',
        description: 'Ready?',
      },
    ]);
    expect(printer.columns).toEqual([
      { name: 'Name', type: 'string', format: 'name', description: NAME, priority: 0 },
      {
        name: 'Replicas',
        type: 'integer',
        format: 'int32',
        description: 'Custom resource definition column (in JSONPath format): .spec.replicas',
        priority: 1,
      },
      { name: 'Ready', type: 'string', format: '', description: 'Ready?', priority: 0 },
    ]);
  });

  it('default to NAME AGE (a date column) when the CRD declares none', () => {
    const printer = customResourcePrinter([]);
    expect(printer.columns.map((c) => [c.name, c.type, c.description])).toEqual([
      ['Name', 'string', NAME],
      ['Age', 'date', CREATION_TIMESTAMP],
    ]);
    expect(printer.row(widget, now).cells).toEqual(['w1', '5m']);
  });

  it('print string columns as client-go prints JSONPath results', () => {
    const column = (jsonPath: string): PrinterColumn => ({ name: jsonPath, type: 'string', jsonPath });
    expect(
      cellsOf([
        column('.status.conditions[?(@.type=="Ready")].status'),
        column('.spec.replicas'),
        column('.spec.ratio'),
        column('.spec.big'),
        column('.spec.paused'),
        column('.spec.selector'),
        column('.spec.size'),
        column('.spec.missing'),
      ]),
    ).toEqual([
      'w1',
      'True',
      '3',
      '0.25',
      '1.2345675e+06',
      'true',
      '{"app":"a\\u003cb\\u003e\\u0026c","tier":"web"}',
      '<no value>',
      null,
    ]);
  });

  it('give integer, number and boolean columns values of their type, null for other types', () => {
    expect(
      cellsOf([
        { name: 'a', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'b', type: 'integer', jsonPath: '.spec.ratio' },
        { name: 'c', type: 'number', jsonPath: '.spec.replicas' },
        { name: 'd', type: 'boolean', jsonPath: '.spec.paused' },
        { name: 'e', type: 'integer', jsonPath: '.spec.paused' },
        { name: 'f', type: 'boolean', jsonPath: '.spec.size' },
        { name: 'g', type: 'unknown', jsonPath: '.spec.replicas' },
      ]),
    ).toEqual(['w1', 3, 0, 3, true, null, null, null]);
  });

  it('print date columns as ages, <invalid> for text that is not RFC 3339', () => {
    expect(
      cellsOf([
        { name: 'When', type: 'date', jsonPath: '.spec.when' },
        { name: 'Transition', type: 'date', jsonPath: '.status.conditions[0].lastTransitionTime' },
        { name: 'Bad', type: 'date', jsonPath: '.spec.bad' },
        { name: 'Number', type: 'date', jsonPath: '.spec.replicas' },
      ]),
    ).toEqual(['w1', '24h', '60m', '<invalid>', null]);
  });

  it('leave a cell empty when evaluation fails, without affecting other columns', () => {
    expect(
      cellsOf([
        { name: 'OutOfRange', type: 'string', jsonPath: '.status.conditions[5].type' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      ]),
    ).toEqual(['w1', null, 3]);
  });

  it('stop at the first column whose JSONPath does not parse, keeping the earlier ones', () => {
    const printer = customResourcePrinter([
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Broken', type: 'string', jsonPath: '.spec[' },
      { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused' },
    ]);
    expect(printer.columns.map((c) => c.name)).toEqual(['Name', 'Replicas']);
    expect(printer.row(widget, now).cells).toEqual(['w1', 3]);
  });
});
