import { objectMeta } from './builtin-pod-schema.ts';
import { getOwn, isJsonObject, isScalar, type JsonObject, type JsonScalar, ownKeys, setOwn } from './json.ts';
import type { ListSchema, PatchSchema, StructSchema } from './schema.ts';

/**
 * Server-side apply metadata of a custom resource from its CRD's structural schema
 * (`spec.versions[].schema.openAPIV3Schema`): `properties` become struct fields,
 * `additionalProperties` a map, `x-kubernetes-map-type: atomic` an atomic object, and lists are
 * atomic unless `x-kubernetes-list-type` is `set` or `map` (keyed by `x-kubernetes-list-map-keys`,
 * with the keys' `default`s). `metadata` is always ObjectMeta. The schema carries no strategic merge
 * patch metadata: custom resources do not accept strategic merge patches.
 *
 * @example
 * serverSideApply({ ...request, schema: patchSchemaFromOpenAPI(version.schema.openAPIV3Schema) });
 */
export function patchSchemaFromOpenAPI(openAPIV3Schema: unknown): StructSchema {
  const root = convert(openAPIV3Schema);
  const fields: Record<string, PatchSchema> = {};
  if (root?.type === 'struct' && root.fields !== undefined) {
    for (const key of ownKeys(root.fields as JsonObject)) {
      const field = root.fields[key];
      if (field !== undefined) setOwn(fields, key, field);
    }
  }
  setOwn(fields, 'metadata', objectMeta);
  return { type: 'struct', fields };
}

function convert(schema: unknown): PatchSchema | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (schema.type === 'array') return convertList(schema);
  const atomic = schema['x-kubernetes-map-type'] === 'atomic';
  const properties = getOwn(schema, 'properties');
  if (isJsonObject(properties)) {
    const fields: Record<string, PatchSchema> = {};
    for (const key of ownKeys(properties)) {
      const field = convert(properties[key]);
      if (field !== undefined) setOwn(fields, key, field);
    }
    return atomic ? { type: 'struct', fields, atomic } : { type: 'struct', fields };
  }
  const additional = getOwn(schema, 'additionalProperties');
  if (isJsonObject(additional)) {
    const values = convert(additional);
    const out: { type: 'map'; values?: PatchSchema; atomic?: boolean } = { type: 'map' };
    if (values !== undefined) out.values = values;
    if (atomic) out.atomic = true;
    return out;
  }
  return atomic ? { type: 'struct', atomic } : undefined;
}

function convertList(schema: JsonObject): ListSchema {
  const items = convert(schema.items);
  const listType = schema['x-kubernetes-list-type'];
  const out: { -readonly [K in keyof ListSchema]: ListSchema[K] } = { type: 'list' };
  if (items !== undefined) out.items = items;
  if (listType === 'set') out.listType = 'set';
  if (listType === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'];
    out.listType = 'map';
    out.listMapKeys = Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [];
    const defaults: Record<string, JsonScalar> = {};
    const itemProperties = isJsonObject(schema.items) ? getOwn(schema.items, 'properties') : undefined;
    for (const key of out.listMapKeys) {
      const property = isJsonObject(itemProperties) ? getOwn(itemProperties, key) : undefined;
      const value = isJsonObject(property) ? getOwn(property, 'default') : undefined;
      if (isScalar(value)) setOwn(defaults, key, value);
    }
    if (Object.keys(defaults).length > 0) out.keyDefaults = defaults;
  }
  return out;
}
