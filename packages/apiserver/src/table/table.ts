import { OptionsError } from '@converge/runtime';
import type { IncludeObject } from './accept.ts';
import { customResourcePrinter, type PrinterColumn } from './custom-columns.ts';
import { type Json, obj } from './fields.ts';
import type { Printer, TableColumnDefinition, TableRowCondition } from './printer.ts';
import { builtinPrinter } from './printers/index.ts';

/** What {@link toTable} turns into a Table. */
export interface ToTableInput {
  /** The objects, in list order (one for a GET of a single object, one per watch event). */
  readonly objects: readonly object[];
  /** The API group of the resource ('' for core). */
  readonly group: string;
  /** The API version of the resource (the version the objects are served in). */
  readonly version: string;
  readonly kind: string;
  /**
   * The CRD version's `additionalPrinterColumns`; given (even empty) for custom resources, which
   * then print with them (or with `Age` when empty). Undefined for built-in kinds.
   */
  readonly printerColumns?: readonly PrinterColumn[];
  /** What each row's `object` holds (the `includeObject` query parameter; `Metadata` by default). */
  readonly includeObject: IncludeObject;
  /** The list's (or the single object's) resourceVersion, for `metadata.resourceVersion`. */
  readonly resourceVersion: string;
  /** The list's continue token, if any. */
  readonly continue?: string;
  /** The list's remainingItemCount, if known. */
  readonly remainingItemCount?: number;
  /** The Table's `meta.k8s.io` version (`v1` by default); also the PartialObjectMetadata version. */
  readonly tableVersion?: 'v1' | 'v1beta1';
  /** Leave out `columnDefinitions` (`null`), as watch events after the first do. */
  readonly noHeaders?: boolean;
  /** The current time in ms since the epoch; ages are computed against it. */
  readonly nowMs: number;
}

/** One Table row: its cells, conditions, and the row object selected by `includeObject`. */
export interface TableRow {
  readonly cells: readonly unknown[];
  readonly conditions?: readonly TableRowCondition[];
  /** PartialObjectMetadata (`Metadata`), the object itself (`Object`), or null (`None`). */
  readonly object: object | null;
}

/** A `meta.k8s.io` Table, in the JSON shape kube-apiserver writes. */
export interface Table {
  readonly kind: 'Table';
  readonly apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  readonly metadata: {
    readonly resourceVersion?: string;
    readonly continue?: string;
    readonly remainingItemCount?: number;
  };
  /** null when `noHeaders` is set (Go writes `null` for the omitted definitions). */
  readonly columnDefinitions: readonly TableColumnDefinition[] | null;
  readonly rows: readonly TableRow[];
}

/**
 * The printer for a kind: the CRD's printer columns for custom resources, kubectl's printer for
 * the built-in kinds, NAME AGE for any other kind.
 */
export function printerFor(group: string, kind: string, printerColumns?: readonly PrinterColumn[]): Printer {
  if (printerColumns !== undefined) return customResourcePrinter(printerColumns);
  return builtinPrinter(group, kind) ?? customResourcePrinter([]);
}

/**
 * Converts objects of one kind into a `meta.k8s.io` Table, as kube-apiserver answers
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (what `kubectl get` sends). Columns and
 * cells are those of kubectl's server-side printers for built-in kinds (wide columns included,
 * with priority 1; kubectl shows them with `-o wide`), of `additionalPrinterColumns` for custom
 * resources, and NAME AGE otherwise. Ages are apimachinery's HumanDuration at `nowMs`.
 *
 * @throws {OptionsError} when `nowMs` is not a finite number.
 *
 * @example
 * const table = toTable({ objects: list.items, group: '', version: 'v1', kind: 'ConfigMap',
 *   includeObject: 'Metadata', resourceVersion: list.metadata.resourceVersion, nowMs: Date.now() });
 * // table.columnDefinitions → Name, Data, Age; table.rows[0].cells → ['demo', 2, '5m']
 */
export function toTable(input: ToTableInput): Table {
  if (!Number.isFinite(input.nowMs))
    throw new OptionsError('nowMs', input.nowMs, 'a finite number of milliseconds');
  const printer = printerFor(input.group, input.kind, input.printerColumns);
  const tableVersion = input.tableVersion ?? 'v1';
  const apiVersion = input.group === '' ? input.version : `${input.group}/${input.version}`;
  const rows = input.objects.map((object): TableRow => {
    const json = object as Json;
    const { cells, conditions } = printer.row(json, input.nowMs);
    return {
      cells,
      ...(conditions === undefined ? {} : { conditions }),
      object: rowObject(json, input.includeObject, tableVersion, apiVersion, input.kind),
    };
  });
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${tableVersion}`,
    metadata: {
      ...(input.resourceVersion === '' ? {} : { resourceVersion: input.resourceVersion }),
      ...(input.continue === undefined || input.continue === '' ? {} : { continue: input.continue }),
      ...(input.remainingItemCount === undefined ? {} : { remainingItemCount: input.remainingItemCount }),
    },
    columnDefinitions: input.noHeaders === true ? null : printer.columns,
    rows,
  };
}

/** The row object: metadata only (PartialObjectMetadata), the full object with its type, or null. */
function rowObject(
  object: Json,
  include: IncludeObject,
  tableVersion: string,
  apiVersion: string,
  kind: string,
): object | null {
  switch (include) {
    case 'None':
      return null;
    case 'Object':
      return { ...object, apiVersion: object.apiVersion ?? apiVersion, kind: object.kind ?? kind };
    case 'Metadata':
      return {
        kind: 'PartialObjectMetadata',
        apiVersion: `meta.k8s.io/${tableVersion}`,
        metadata: obj(object.metadata),
      };
  }
}
