import {
  builtinDefinitionName,
  builtinDefinitions,
  type DefinitionSchema,
  definitionOfRef,
} from '../builtin/index.ts';
import type { ListSchema, MapSchema, PatchSchema, StructSchema } from '../patch/index.ts';

/**
 * The patch metadata of a built-in kind from the generated Kubernetes 1.32 definitions: strategic
 * merge patch from `x-kubernetes-patch-strategy`/`x-kubernetes-patch-merge-key`, server-side apply
 * from `x-kubernetes-list-type`/`x-kubernetes-list-map-keys`/`x-kubernetes-map-type`. Used for the
 * kinds the hand-written table of `../patch` does not describe.
 */

const cache = new Map<string, PatchSchema | undefined>();
const building = new Set<string>();

function fromDefinition(name: string): PatchSchema | undefined {
  if (cache.has(name)) return cache.get(name);
  // a recursive definition (JSONSchemaProps) reads as an open struct below itself
  if (building.has(name)) return { type: 'struct' };
  building.add(name);
  const definition = builtinDefinitions()[name];
  const schema = definition === undefined ? undefined : convert(definition);
  building.delete(name);
  cache.set(name, schema);
  return schema;
}

function convert(schema: DefinitionSchema): PatchSchema | undefined {
  if (schema.$ref !== undefined) return fromDefinition(definitionOfRef(schema.$ref));
  if (schema.type === 'array') return convertList(schema);
  const atomic = schema['x-kubernetes-map-type'] === 'atomic';
  if (schema.properties !== undefined) {
    const fields: Record<string, PatchSchema> = {};
    for (const [key, property] of Object.entries(schema.properties)) {
      const field = convert(property);
      if (field !== undefined) fields[key] = field;
    }
    return atomic ? { type: 'struct', fields, atomic: true } : { type: 'struct', fields };
  }
  if (typeof schema.additionalProperties === 'object') {
    const out: { -readonly [K in keyof MapSchema]: MapSchema[K] } = { type: 'map' };
    const values = convert(schema.additionalProperties);
    if (values !== undefined) out.values = values;
    if (atomic) out.atomic = true;
    return out;
  }
  return atomic ? { type: 'struct', atomic: true } : undefined;
}

function convertList(schema: DefinitionSchema): ListSchema {
  const out: { -readonly [K in keyof ListSchema]: ListSchema[K] } = { type: 'list' };
  const items = schema.items === undefined ? undefined : convert(schema.items);
  if (items !== undefined) out.items = items;
  const strategy = schema['x-kubernetes-patch-strategy'];
  const mergeKey = schema['x-kubernetes-patch-merge-key'];
  if (typeof strategy === 'string' && strategy.split(',').includes('merge')) {
    out.patchStrategy = 'merge';
    if (typeof mergeKey === 'string') out.patchMergeKey = mergeKey;
  }
  const listType = schema['x-kubernetes-list-type'];
  const keys = schema['x-kubernetes-list-map-keys'];
  if (listType === 'set') out.listType = 'set';
  else if (listType === 'map' && Array.isArray(keys)) {
    out.listType = 'map';
    out.listMapKeys = keys.filter((k): k is string => typeof k === 'string');
  } else if (listType === undefined && out.patchMergeKey !== undefined) {
    // structured-merge-diff keys a merged list by its merge key
    out.listType = 'map';
    out.listMapKeys = [out.patchMergeKey];
  } else if (listType === undefined && out.patchStrategy === 'merge' && items === undefined) {
    out.listType = 'set';
  }
  return out;
}

/** The patch schema of a built-in kind, or undefined for kinds the definitions do not hold. */
export function builtinPatchSchema(group: string, version: string, kind: string): StructSchema | undefined {
  const name = builtinDefinitionName(group, version, kind);
  if (name === undefined) return undefined;
  const schema = fromDefinition(name);
  return schema?.type === 'struct' ? schema : undefined;
}
