/**
 * Go's `omitempty` for the maps and lists of stored objects: kube-apiserver decodes a body into Go
 * structs and encodes them again, so `labels: {}`, `finalizers: []` or an empty `volumes: []` are
 * not stored and never echoed. The published definitions mark every field without `omitempty` as
 * `required` (openapi-gen), so a map or list that is not required and is empty is dropped — at
 * every depth of a built-in kind, and in `metadata` of custom resources (their ObjectMeta is
 * round-tripped through Go too). Empty structs, strings and numbers are left alone: the
 * definitions do not tell pointers from values.
 */
import {
  builtinDefinitionName,
  builtinDefinitions,
  type DefinitionSchema,
  definitionOfRef,
} from '../builtin/index.ts';
import type { ApiResource, JsonObject } from './api-resource.ts';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
/** Lists without `omitempty` that openapi-gen still reports optional (`+optional` on a plain tag). */
const KEPT: ReadonlySet<string> = new Set([
  'io.k8s.api.rbac.v1.ClusterRole.rules',
  'io.k8s.api.rbac.v1.Role.rules',
]);

/** What to do with one field of a definition: drop it when empty, and/or descend into its value. */
interface FieldPlan {
  readonly droppable: boolean;
  /** The definition of its value (`one`), of its items (`list`) or of its map values (`map`). */
  readonly nested?: readonly [definition: string, shape: 'one' | 'list' | 'map'];
}

/** The fields of a definition that need anything done (absent: nothing to do in it). */
type Plan = ReadonlyMap<string, FieldPlan>;

const plans = new Map<string, Plan | undefined>();

function refOf(schema: DefinitionSchema | boolean | undefined): string | undefined {
  return typeof schema === 'object' && schema.$ref !== undefined ? definitionOfRef(schema.$ref) : undefined;
}

function planOf(name: string): Plan | undefined {
  if (plans.has(name)) return plans.get(name);
  const schema = builtinDefinitions()[name];
  let plan: Map<string, FieldPlan> | undefined;
  if (schema?.properties !== undefined && schema['x-kubernetes-preserve-unknown-fields'] !== true) {
    const required = new Set(schema.required ?? []);
    plan = new Map();
    for (const [field, property] of Object.entries(schema.properties)) {
      const isMap = property.type === 'object' && property.additionalProperties !== undefined;
      const droppable =
        (property.type === 'array' || isMap) && !required.has(field) && !KEPT.has(`${name}.${field}`);
      const one = refOf(property);
      const item = property.type === 'array' ? refOf(property.items) : undefined;
      const value = isMap ? refOf(property.additionalProperties) : undefined;
      const nested: FieldPlan['nested'] =
        one !== undefined
          ? [one, 'one']
          : item !== undefined
            ? [item, 'list']
            : value !== undefined
              ? [value, 'map']
              : undefined;
      if (droppable || nested !== undefined)
        plan.set(field, nested === undefined ? { droppable } : { droppable, nested });
    }
    if (plan.size === 0) plan = undefined;
  }
  plans.set(name, plan);
  return plan;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (!isObject(value)) return false;
  for (const _ in value) return false;
  return true;
}

function apply(definition: string, object: JsonObject, depth: number): void {
  if (depth > 64) return;
  const plan = planOf(definition);
  if (plan === undefined) return;
  for (const field in object) {
    const step = plan.get(field);
    if (step === undefined) continue;
    const value = object[field];
    if (step.droppable && isEmpty(value)) {
      delete object[field];
      continue;
    }
    if (step.nested === undefined) continue;
    const [nested, shape] = step.nested;
    if (shape === 'one') {
      if (isObject(value)) apply(nested, value, depth + 1);
    } else if (shape === 'list') {
      if (Array.isArray(value)) for (const item of value) if (isObject(item)) apply(nested, item, depth + 1);
    } else if (isObject(value)) {
      for (const key in value) {
        const item = value[key];
        if (isObject(item)) apply(nested, item, depth + 1);
      }
    }
  }
}

/**
 * Drops, in place, the empty maps and lists Go's `omitempty` would not encode, from an object in
 * its stored shape (`resource.storage` names its kind).
 */
export function omitEmpty(resource: Pick<ApiResource, 'storage' | 'crd'>, object: JsonObject): void {
  const { storage } = resource;
  const definition =
    resource.crd === undefined
      ? builtinDefinitionName(storage.group, storage.version, storage.kind)
      : undefined;
  if (definition !== undefined) {
    apply(definition, object, 0);
    return;
  }
  if (isObject(object.metadata)) apply(OBJECT_META, object.metadata, 0);
}
