import { builtinDefinitionName, builtinDefinitions, type DefinitionSchema } from '../builtin/index.ts';
import type { JsonObject } from './api-resource.ts';

/** OpenAPI v2 `#/definitions/` references. */
const V2_REF = '#/definitions/';
const V3_REF = '#/components/schemas/';

/** The definition names a definition references, transitively, itself included. */
function closure(roots: readonly string[]): Set<string> {
  const all = builtinDefinitions();
  const seen = new Set<string>();
  const pending = [...roots];
  const visit = (schema: unknown): void => {
    if (Array.isArray(schema)) for (const item of schema) visit(item);
    else if (schema !== null && typeof schema === 'object') {
      for (const [key, value] of Object.entries(schema)) {
        if (key === '$ref' && typeof value === 'string') pending.push(value.slice(V2_REF.length));
        else visit(value);
      }
    }
  };
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (seen.has(name) || all[name] === undefined) continue;
    seen.add(name);
    visit(all[name]);
  }
  return seen;
}

/**
 * A v2 schema as OpenAPI v3 writes it (kube-openapi's conversion): references point into
 * `components/schemas`; a reference with siblings is wrapped in `allOf`.
 */
function toV3(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toV3);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = V3_REF + value.slice(V2_REF.length);
    else if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, toV3(s)]));
    } else out[key] = toV3(value);
  }
  if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    const { $ref, ...rest } = out;
    return { ...rest, allOf: [{ $ref }] };
  }
  return out;
}

/** The generated definition of a built-in kind kube-apiserver 1.32 serves, or undefined. */
export function builtinSchemaName(group: string, version: string, kind: string): string | undefined {
  return builtinDefinitionName(group, version, kind);
}

/**
 * The OpenAPI v3 `components/schemas` for built-in kinds: each kind's definition and every
 * definition it references (Kubernetes' structure, formats and `x-kubernetes-*` markers; no
 * descriptions: `kubectl explain` shows the fields with empty descriptions).
 */
export function builtinSchemasV3(names: readonly string[]): Record<string, JsonObject> {
  const all = builtinDefinitions();
  const out: Record<string, JsonObject> = {};
  for (const name of [...closure(names)].sort()) out[name] = toV3(all[name]) as JsonObject;
  return out;
}

/** The OpenAPI v2 `definitions` for built-in kinds, as generated (their references included). */
export function builtinSchemasV2(names: readonly string[]): Record<string, DefinitionSchema> {
  const all = builtinDefinitions();
  const out: Record<string, DefinitionSchema> = {};
  for (const name of [...closure(names)].sort()) out[name] = all[name] as DefinitionSchema;
  return out;
}
