/**
 * apiextensions' `ValidateDefaults`: every `default` must be pruned (no unknown fields), carry valid
 * embedded TypeMeta/ObjectMeta, and validate against the schema it sits in. Defaults under
 * `additionalProperties` are not checked, as in kube.
 */
import type { StatusCause } from '@converge/runtime';
import { invalid, path } from './field-errors.ts';
import { isObject, type JsonObject, jsonClone, jsonEqual, own } from './json.ts';
import { validateEmbeddedResource } from './object-meta.ts';
import { pruneInPlace } from './prune.ts';
import { compileSchema } from './schema.ts';
import type { StructuralSchema } from './types.ts';
import { schemaCauses } from './validate-object.ts';

/** The schema a default is checked against: the node itself, as `s.ToKubeOpenAPI()` yields it. */
function nodeSchema(s: JsonObject, embedded: boolean): StructuralSchema {
  return (embedded ? { ...s, 'x-kubernetes-embedded-resource': true } : s) as StructuralSchema;
}

function checkDefault(
  s: JsonObject,
  embedded: boolean,
  insideMeta: boolean,
  at: string,
  out: StatusCause[],
): void {
  const value = own(s, 'default');
  if (value === undefined || value === null) return;
  const node = compileSchema(nodeSchema(s, embedded));
  const where = path.child(at, 'default');
  if (insideMeta) {
    out.push(...schemaCauses(node, value, where));
    return;
  }
  const pruned = jsonClone(value);
  pruneInPlace(pruned, node, embedded, []);
  if (!jsonEqual(pruned, value)) out.push(invalid(where, value, 'must not have unknown fields'));
  const meta: StatusCause[] = [];
  if (embedded && isObject(value)) validateEmbeddedResource(value, where, meta);
  if (meta.length > 0) {
    out.push(...meta);
    return;
  }
  out.push(...schemaCauses(node, value, where));
}

function walk(
  s: JsonObject,
  embeddedRoot: boolean,
  insideMeta: boolean,
  at: string,
  out: StatusCause[],
): void {
  const embedded = embeddedRoot || own(s, 'x-kubernetes-embedded-resource') === true;
  const meta = embedded ? false : insideMeta;
  checkDefault(s, embedded, meta, at, out);
  const items = own(s, 'items');
  if (isObject(items)) walk(items, false, meta, path.child(at, 'items'), out);
  const props = own(s, 'properties');
  if (!isObject(props)) return;
  for (const [k, p] of Object.entries(props)) {
    if (!isObject(p)) continue;
    const subMeta = meta || (embedded && (k === 'metadata' || k === 'apiVersion' || k === 'kind'));
    walk(p, false, subMeta, path.key(path.child(at, 'properties'), k), out);
  }
}

/** `ValidateDefaults` of a root schema at `at` (the root counts as an embedded resource). */
export function validateDefaults(schema: JsonObject, at: string): StatusCause[] {
  const out: StatusCause[] = [];
  walk(schema, true, false, at, out);
  return out;
}
