import { fieldSetOf } from './field-set-of.ts';
import { toFieldsV1 } from './fields-v1.ts';
import { stripMeta } from './managed-fields.ts';
import type { PatchSchema } from './schema.ts';

/**
 * The FieldsV1 an apply of `object` records for its manager: every field it sets, in the set
 * encoding of `metadata.managedFields` (`f:data`, `k:{"name":"x"}`, `v:"value"`, `.` for a node that
 * is owned and has owned fields below it), without apiVersion, kind and the metadata the server
 * sets.
 *
 * @example
 * fieldsV1Of({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo', labels: { app: 'web' } }, data: { a: '1' } }, schema);
 * // { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } }
 */
export function fieldsV1Of(object: unknown, schema: PatchSchema | undefined): Record<string, unknown> {
  return toFieldsV1(stripMeta(fieldSetOf(object, schema)));
}
