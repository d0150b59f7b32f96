import { CREATION_TIMESTAMP, NAME } from './descriptions.ts';
import type { Json } from './fields.ts';

/**
 * A `meta.k8s.io` TableColumnDefinition. Every key is always written, as Go writes them
 * (`format` '' and `priority` 0 included). Columns with priority > 0 are shown by kubectl only
 * with `-o wide`; the server always sends their cells.
 */
export interface TableColumnDefinition {
  readonly name: string;
  /** An OpenAPI type: `string`, `integer`, `number`, `boolean`, or `date`. */
  readonly type: string;
  /** An OpenAPI format hint (`name` for the name column), or ''. */
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

/** A row condition (`Completed` for finished pods). */
export interface TableRowCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

/** The cells of one row (one per column, in order) and its conditions. */
export interface RowCells {
  readonly cells: readonly unknown[];
  readonly conditions?: readonly TableRowCondition[];
}

/** Turns objects of one kind into rows: kubectl's server-side printer for that kind. */
export interface Printer {
  readonly columns: readonly TableColumnDefinition[];
  /** The row of one object at `nowMs` (ages are computed against it). */
  row(object: Json, nowMs: number): RowCells;
}

/** A column definition; `format` '' and `priority` 0 unless given. */
export function column(
  name: string,
  type: string,
  description: string,
  options: { readonly format?: string; readonly priority?: number } = {},
): TableColumnDefinition {
  return { name, type, format: options.format ?? '', description, priority: options.priority ?? 0 };
}

/** The `Name` column every printer starts with. */
export const NAME_COLUMN: TableColumnDefinition = column('Name', 'string', NAME, { format: 'name' });

/** The `Age` column of the built-in printers (a string cell: the HumanDuration). */
export const AGE_COLUMN: TableColumnDefinition = column('Age', 'string', CREATION_TIMESTAMP);

/** A wide-only (`-o wide`, priority 1) string column. */
export function wide(name: string, description: string): TableColumnDefinition {
  return column(name, 'string', description, { priority: 1 });
}

/** The wide Containers column of the workload printers (template container names). */
export const CONTAINERS_COLUMN: TableColumnDefinition = wide(
  'Containers',
  'Names of each container in the template.',
);
/** The wide Images column of the workload printers (template container images). */
export const IMAGES_COLUMN: TableColumnDefinition = wide(
  'Images',
  'Images referenced by each container in the template.',
);
