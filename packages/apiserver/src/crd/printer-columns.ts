/**
 * Table cells of custom resources, as kube-apiserver's CRD table convertor computes them from
 * `additionalPrinterColumns`.
 */
import type { PrinterColumn } from './crd-info.ts';
import { goValue } from './go-format.ts';
import { assertJson } from './json.ts';
import { findResults, parseJsonPath } from './jsonpath.ts';

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** A `metav1.TableColumnDefinition`. */
export interface TableColumnDefinition {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

/**
 * The `columnDefinitions` of a custom resource Table: `Name` (format `name`) then one per printer
 * column, described by its JSONPath when the CRD gives no description.
 *
 * @example
 * tableColumnDefinitions(info.versions[0].printerColumns).map((c) => c.name); // ['Name', 'Domain', …]
 */
export function tableColumnDefinitions(columns: readonly PrinterColumn[]): TableColumnDefinition[] {
  return [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
    ...columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description ?? `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      priority: c.priority,
    })),
  ];
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function cell(type: string, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : goValue(value);
    case 'date':
      if (typeof value !== 'string') return null;
      return RFC3339.test(value) && !Number.isNaN(Date.parse(value)) ? value : '<invalid>';
    default:
      return null;
  }
}

/**
 * The cells of one Table row after `Name`: per column, the first value its JSONPath selects, typed
 * as the column says (`integer` truncates numbers, a `string` column prints any value as kubectl's
 * JSONPath does, `null` when nothing is selected or the type does not fit). `date` cells are the raw
 * RFC 3339 timestamps (`<invalid>` when unparsable); kube-apiserver turns them into ages (`5m`), so
 * the table renderer formats them. Throws {@link CrdJsonPathError} for an unparsable JSONPath.
 *
 * @example
 * printerColumnValues(website, info.versions[0].printerColumns); // ['example.com', 3, 'True', 'free', '2026-…Z']
 */
export function printerColumnValues(object: unknown, columns: readonly PrinterColumn[]): unknown[] {
  assertJson(object);
  return columns.map((column) => {
    const results = findResults(parseJsonPath(column.jsonPath), object);
    return results.length === 0 ? null : cell(column.type, results[0]);
  });
}
