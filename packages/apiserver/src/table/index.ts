/**
 * Tables: what `kubectl get` shows. kubectl asks for
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,…;v=v1beta1…,application/json` and prints
 * the server's columns, so the columns and cells are the server's job:
 *
 * - {@link wantsTable} — negotiates the `Accept` header (and validates `?includeObject=`);
 * - {@link toTable} — objects of one kind → a `meta.k8s.io` Table, with kubectl's printers for the
 *   built-in kinds (Namespace, ConfigMap, Secret, ServiceAccount, Service, Pod, Event, Deployment,
 *   ReplicaSet, StatefulSet, Job, Lease, CustomResourceDefinition, admission registration kinds),
 *   a CRD's `additionalPrinterColumns` (client-go JSONPath) for custom resources, NAME AGE otherwise;
 * - {@link humanDuration} — apimachinery's HumanDuration (`5s`, `3m2s`, `2d3h`).
 *
 * Wide (`-o wide`) columns carry priority 1 and are always sent; kubectl hides them by default.
 *
 * @example
 * const table = wantsTable(req.headers.accept, url.searchParams.get('includeObject'));
 * if (table !== undefined) {
 *   res.writeHead(200, { 'content-type': table.contentType });
 *   res.end(JSON.stringify(toTable({ objects: items, group: '', version: 'v1', kind: 'Pod',
 *     includeObject: table.includeObject, tableVersion: table.version, resourceVersion: rv, nowMs: Date.now() })));
 * }
 *
 * @module
 */
export { type IncludeObject, type TableRequest, wantsTable } from './accept.ts';
export type { PrinterColumn } from './custom-columns.ts';
export { TableErrorCodes, TableOptionsError } from './errors.ts';
export type { Printer, RowCells, TableColumnDefinition, TableRowCondition } from './printer.ts';
export { printerFor, type Table, type TableRow, type ToTableInput, toTable } from './table.ts';
export { humanDuration } from './time.ts';
