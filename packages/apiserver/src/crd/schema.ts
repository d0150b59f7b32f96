/**
 * Compiles a {@link StructuralSchema} into the read-only node tree the validator, pruner and
 * defaulter walk: properties in a Map (no prototype surprises), `pattern` compiled, and `format`
 * filtered as kube-apiserver 1.32 does (unsupported formats dropped). Compiled trees are cached per
 * schema object.
 */
import { schemaDecodeProblem } from './decode.ts';
import { CrdSchemaError } from './errors.ts';
import { isSupportedFormat } from './formats.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { compilePattern } from './pattern.ts';
import type { StructuralSchema } from './types.ts';

/** One compiled schema node. */
export interface SchemaNode {
  /** The declared `type` ('' when absent). */
  readonly type: string;
  /** The types a value may have: `[type]`, `['integer', 'string']` for int-or-string, `[]` for any. */
  readonly types: readonly string[];
  readonly nullable: boolean;
  /** The format kept for validation ('' when absent or unsupported). */
  readonly format: string;
  readonly hasDefault: boolean;
  readonly default: unknown;
  readonly enum: readonly unknown[] | undefined;
  readonly maximum: number | undefined;
  readonly exclusiveMaximum: boolean;
  readonly minimum: number | undefined;
  readonly exclusiveMinimum: boolean;
  readonly multipleOf: number | undefined;
  readonly maxLength: number | undefined;
  readonly minLength: number | undefined;
  readonly pattern: string;
  readonly patternRegex: RegExp | Error | undefined;
  readonly maxItems: number | undefined;
  readonly minItems: number | undefined;
  readonly uniqueItems: boolean;
  readonly maxProperties: number | undefined;
  readonly minProperties: number | undefined;
  readonly required: readonly string[];
  readonly properties: ReadonlyMap<string, SchemaNode> | undefined;
  /** A schema, `false` (no other keys allowed), `true` (any), or undefined (not declared). */
  readonly additionalProperties: SchemaNode | boolean | undefined;
  readonly items: SchemaNode | undefined;
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not: SchemaNode | undefined;
  readonly preserveUnknownFields: boolean;
  readonly embeddedResource: boolean;
  readonly intOrString: boolean;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[];
  readonly mapType: string | undefined;
  /** The schema as given. */
  readonly raw: StructuralSchema;
}

const cache = new WeakMap<object, SchemaNode>();

/**
 * Compiles a schema; throws {@link CrdSchemaError} when it is not a JSONSchemaProps (a field of the
 * wrong type, or nesting deeper than the decoder allows).
 */
export function compileSchema(schema: StructuralSchema): SchemaNode {
  const hit = isObject(schema) ? cache.get(schema) : undefined;
  if (hit !== undefined) return hit;
  const problem = schemaDecodeProblem(schema);
  if (problem !== undefined) throw new CrdSchemaError(problem.field, problem.message);
  const node = build(schema as JsonObject);
  cache.set(schema, node);
  return node;
}

function num(raw: JsonObject, key: string): number | undefined {
  const v = own(raw, key);
  return typeof v === 'number' ? v : undefined;
}

function bool(raw: JsonObject, key: string): boolean {
  return own(raw, key) === true;
}

function str(raw: JsonObject, key: string): string {
  const v = own(raw, key);
  return typeof v === 'string' ? v : '';
}

function list(raw: JsonObject, key: string): readonly SchemaNode[] {
  const v = own(raw, key);
  return Array.isArray(v) ? v.map((s: unknown) => build(isObject(s) ? s : {})) : [];
}

function sub(raw: JsonObject, key: string): SchemaNode | undefined {
  const v = own(raw, key);
  return isObject(v) ? build(v) : undefined;
}

function stringList(raw: JsonObject, key: string): readonly string[] {
  const v = own(raw, key);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** kube's format post-processor: keeps only formats it validates for the node's type. */
function keptFormat(format: string, types: readonly string[]): string {
  if (format === '') return '';
  const single = types.length === 1 ? (types[0] ?? '') : '';
  switch (single) {
    case '':
    case 'string':
      return isSupportedFormat(format) ? format : '';
    case 'integer':
      return format === 'int32' || format === 'int64' ? format : '';
    case 'number':
      return format === 'float' || format === 'double' ? format : '';
    default:
      return '';
  }
}

function build(raw: JsonObject): SchemaNode {
  const cached = cache.get(raw);
  if (cached !== undefined) return cached;
  const type = str(raw, 'type');
  const intOrString = bool(raw, 'x-kubernetes-int-or-string');
  const types = intOrString ? ['integer', 'string'] : type === '' ? [] : [type];
  const rawProps = own(raw, 'properties');
  let properties: Map<string, SchemaNode> | undefined;
  if (isObject(rawProps)) {
    properties = new Map();
    for (const [k, v] of Object.entries(rawProps)) properties.set(k, build(isObject(v) ? v : {}));
  }
  const rawAdditional = own(raw, 'additionalProperties');
  const additionalProperties =
    typeof rawAdditional === 'boolean'
      ? rawAdditional
      : isObject(rawAdditional)
        ? build(rawAdditional)
        : undefined;
  const rawItems = own(raw, 'items');
  const pattern = str(raw, 'pattern');
  const rawEnum = own(raw, 'enum');
  const listType = own(raw, 'x-kubernetes-list-type');
  const mapType = own(raw, 'x-kubernetes-map-type');
  const node: SchemaNode = {
    type,
    types,
    nullable: bool(raw, 'nullable'),
    format: keptFormat(str(raw, 'format'), types),
    hasDefault: own(raw, 'default') !== undefined && own(raw, 'default') !== null,
    default: own(raw, 'default'),
    enum: Array.isArray(rawEnum) ? rawEnum : undefined,
    maximum: num(raw, 'maximum'),
    exclusiveMaximum: bool(raw, 'exclusiveMaximum'),
    minimum: num(raw, 'minimum'),
    exclusiveMinimum: bool(raw, 'exclusiveMinimum'),
    multipleOf: num(raw, 'multipleOf'),
    maxLength: num(raw, 'maxLength'),
    minLength: num(raw, 'minLength'),
    pattern,
    patternRegex: pattern === '' ? undefined : compilePattern(pattern),
    maxItems: num(raw, 'maxItems'),
    minItems: num(raw, 'minItems'),
    uniqueItems: bool(raw, 'uniqueItems'),
    maxProperties: num(raw, 'maxProperties'),
    minProperties: num(raw, 'minProperties'),
    required: stringList(raw, 'required'),
    properties,
    additionalProperties,
    items: isObject(rawItems) ? build(rawItems) : undefined,
    allOf: list(raw, 'allOf'),
    anyOf: list(raw, 'anyOf'),
    oneOf: list(raw, 'oneOf'),
    not: sub(raw, 'not'),
    preserveUnknownFields: bool(raw, 'x-kubernetes-preserve-unknown-fields'),
    embeddedResource: bool(raw, 'x-kubernetes-embedded-resource'),
    intOrString,
    listType: typeof listType === 'string' ? listType : undefined,
    listMapKeys: stringList(raw, 'x-kubernetes-list-map-keys'),
    mapType: typeof mapType === 'string' ? mapType : undefined,
    raw: raw as StructuralSchema,
  };
  cache.set(raw, node);
  return node;
}

/** The schema of a property of an object node: `properties[key]`, else `additionalProperties`. */
export function fieldSchema(node: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (node === undefined) return undefined;
  const prop = node.properties?.get(key);
  if (prop !== undefined) return prop;
  return typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
}
