/**
 * The Table printer of custom resources: apiextensions-apiserver's table convertor over a CRD
 * version's `additionalPrinterColumns`.
 */
import { CREATION_TIMESTAMP } from './descriptions.ts';
import { at, str } from './fields.ts';
import { goFloat, goJson, goNumber } from './go-format.ts';
import { findResults, GoFloat, type PathNode, parseJsonPath } from './jsonpath/index.ts';
import { column, NAME_COLUMN, type Printer, type TableColumnDefinition } from './printer.ts';
import { humanDuration, parseRfc3339 } from './time.ts';

/** One of a CRD version's `additionalPrinterColumns` (apiextensions.k8s.io/v1). */
export interface PrinterColumn {
  readonly name: string;
  /** `integer`, `number`, `string`, `boolean` or `date`. */
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  /** 0 (default) always shown; greater only with `kubectl get -o wide`. */
  readonly priority?: number;
  /** A simple JSONPath evaluated against each object: `.spec.replicas`, `.status.conditions[?(@.type=="Ready")].status`. */
  readonly jsonPath: string;
}

/** The column a CRD version without printer columns gets (apiextensions' `serveDefaultColumnsIfEmpty`). */
const DEFAULT_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Age', type: 'date', description: CREATION_TIMESTAMP, jsonPath: '.metadata.creationTimestamp' },
];

/**
 * A printer for custom resources: NAME, then one column per printer column (`Age` when there are
 * none). As upstream, a column whose JSONPath does not parse ends the list: it and the columns
 * after it are left out, the earlier ones kept.
 *
 * Cells: a `string` column prints the first value found as client-go's JSONPath prints it (maps
 * and lists as JSON, `<no value>` for null); `integer`, `number` and `boolean` columns take values
 * of their type (integer truncates floats), `date` columns show the age of an RFC 3339 timestamp
 * (`<invalid>` when it does not parse). Nothing found, a value of another type, or an evaluation
 * error → `null` (kubectl prints `<none>`).
 */
export function customResourcePrinter(printerColumns: readonly PrinterColumn[]): Printer {
  const columns: TableColumnDefinition[] = [NAME_COLUMN];
  const paths: { readonly type: string; readonly nodes: readonly PathNode[] }[] = [];
  for (const printerColumn of printerColumns.length > 0 ? printerColumns : DEFAULT_COLUMNS) {
    let nodes: readonly PathNode[];
    try {
      nodes = parseJsonPath(printerColumn.jsonPath);
    } catch {
      break;
    }
    paths.push({ type: printerColumn.type, nodes });
    const description =
      printerColumn.description !== undefined && printerColumn.description !== ''
        ? printerColumn.description
        : `Custom resource definition column (in JSONPath format): ${printerColumn.jsonPath}`;
    columns.push(
      column(printerColumn.name, printerColumn.type, description, {
        format: printerColumn.format ?? '',
        priority: printerColumn.priority ?? 0,
      }),
    );
  }
  return {
    columns,
    row(object, nowMs) {
      const cells: unknown[] = [str(at(object, 'metadata', 'name'))];
      for (const { type, nodes } of paths) {
        const [values, error] = findResults(object, nodes);
        if (error !== undefined || values.length === 0) cells.push(null);
        else cells.push(type === 'string' ? printValue(values[0]) : typedCell(type, values[0], nowMs));
      }
      return { cells };
    },
  };
}

/** How client-go's JSONPath prints one value: maps and lists as JSON, scalars as Go's `fmt.Sprint`. */
function printValue(value: unknown): string {
  if (value === null || value === undefined) return '<no value>';
  if (value instanceof GoFloat) return goFloat(value.value);
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goJson(value);
}

/** apiextensions' `cellForJSONValue` for non-string columns. */
function typedCell(type: string, value: unknown, nowMs: number): unknown {
  const number = value instanceof GoFloat ? value.value : typeof value === 'number' ? value : undefined;
  switch (type) {
    case 'integer':
      return number === undefined ? null : Math.trunc(number);
    case 'number':
      return number ?? null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      if (value === '' || value === 'null') return '<unknown>';
      const parsed = parseRfc3339(value);
      if (parsed.kind === 'invalid') return '<invalid>';
      return parsed.kind === 'zero' ? '<unknown>' : humanDuration(nowMs - parsed.ms);
    }
    default:
      return null;
  }
}
