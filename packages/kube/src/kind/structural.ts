/**
 * TypeBox (JSON Schema) → Kubernetes structural OpenAPI v3 schema, after the rules of
 * apiextensions' `ValidateStructural` and `ValidateCustomResourceDefinitionOpenAPISchema`: every
 * field and item has a `type` (except int-or-string and preserve-unknown-fields nodes), no `$ref`,
 * `definitions`, `patternProperties`, item arrays, `additionalItems`, `dependencies` or
 * `uniqueItems: true`, `properties` and `additionalProperties` never together, no `type: null`
 * (`nullable` instead), and logical junctors only in the int-or-string pattern.
 */
import type { JSONSchemaProps } from '@converge/runtime';
import { checkDefault, checkExtensions, checkJunctorMember, checkValues, join } from './checks.ts';
import { KindSchemaError } from './errors.ts';
import { KEYWORD_TYPES, ordered } from './keywords.ts';

type Json = Record<string, unknown>;
type Mutable = { -readonly [K in keyof JSONSchemaProps]: JSONSchemaProps[K] };

/** Keywords copied as they are (Kubernetes validates their values). */
const KEPT = [
  'description',
  'title',
  'format',
  'default',
  'example',
  'externalDocs',
  'maximum',
  'minimum',
  'multipleOf',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'nullable',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
  'x-kubernetes-preserve-unknown-fields',
] as const;

/** Keywords that only annotate (no effect on validation): dropped. */
const DROPPED = new Set([
  '$id',
  '$schema',
  '$comment',
  '$anchor',
  'examples',
  'readOnly',
  'writeOnly',
  'deprecated',
  'contentMediaType',
  'contentEncoding',
]);

/** Keywords the converter reads itself. */
const HANDLED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'x-kubernetes-int-or-string',
  'allOf',
  'oneOf',
  'not',
  ...KEPT,
]);

/**
 * kube-openapi's enum check never matches null, so a nullable enum refuses null although TypeBox
 * accepts it: the TypeScript type and the server would disagree.
 */
const NULLABLE_ENUM =
  "a nullable enum is not supported: Kubernetes' enum check never matches null, so null would be refused (use Type.Optional(...) instead of a union with Type.Null())";

const SCALARS = new Set(['string', 'number', 'integer', 'boolean']);

/** The pattern TypeBox gives `Type.Record(Type.String(), X)`: any key. */
const ANY_KEY = new Set(['^.*$', '^(.*)$', '.*']);

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON type of a literal value (`integer` for whole numbers). */
function typeOfValue(value: unknown): string | undefined {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number' && Number.isFinite(value))
    return Number.isInteger(value) ? 'integer' : 'number';
  return undefined;
}

class Converter {
  readonly #kind: string;
  readonly #seen = new Set<object>();

  constructor(kind: string) {
    this.#kind = kind;
  }

  fail(path: string, problem: string): never {
    throw new KindSchemaError(this.#kind, path, problem);
  }

  convert(schema: unknown, path: string): JSONSchemaProps {
    if (!isJson(schema)) this.fail(path, 'a schema must be an object (a TypeBox type)');
    if (this.#seen.has(schema)) this.fail(path, 'a recursive schema cannot be structural');
    this.#seen.add(schema);
    try {
      return Object.freeze(ordered(this.#convert(schema, path)));
    } finally {
      this.#seen.delete(schema);
    }
  }

  #convert(schema: Json, path: string): Mutable {
    for (const key of Object.keys(schema)) {
      if (HANDLED.has(key) || DROPPED.has(key)) continue;
      if (key === '$ref' || key === '$defs' || key === 'definitions' || key === '$dynamicRef')
        this.fail(path, `${key} is not supported: references and recursive types cannot be structural`);
      if (key === 'prefixItems' || key === 'additionalItems')
        this.fail(path, 'tuples are not supported: Kubernetes lists have one item schema (use Type.Array)');
      this.fail(path, `the keyword ${key} has no Kubernetes equivalent`);
    }
    const out: Mutable = {};
    for (const key of KEPT) {
      const value = schema[key];
      if (value === undefined) continue;
      const [valid, expected] = KEYWORD_TYPES[key] ?? [() => true, ''];
      if (!valid(value)) this.fail(path, `${key} must be ${expected}`);
      // false is the default of these flags, and Kubernetes refuses preserve-unknown-fields: false.
      if (
        value === false &&
        (key === 'x-kubernetes-preserve-unknown-fields' ||
          key === 'nullable' ||
          key === 'x-kubernetes-embedded-resource')
      )
        continue;
      (out as Json)[key] = structuredClone(value);
    }
    this.#bounds(schema, out, path);
    checkValues(schema, (problem) => this.fail(path, problem));
    let result: Mutable;
    if (schema['x-kubernetes-int-or-string'] === true) result = this.#intOrString(schema, out, path);
    else if (schema.anyOf !== undefined && schema.type === undefined) result = this.#union(schema, out, path);
    else result = this.#typed(schema, out, path);
    checkExtensions(result, (problem) => this.fail(path, problem));
    if (result.default !== undefined)
      checkDefault(result, result.default, (problem) => this.fail(path, problem));
    return this.#junctors(schema, result, path);
  }

  /**
   * `allOf`, `oneOf`, `not` (and `anyOf` next to a `type`) that only restrict what the schema
   * declares outside them (value validations, as `oneOf: [{ required: [a] }, { required: [b] }]`)
   * are kept; junctors holding types, defaults or descriptions are not structural.
   */
  #junctors(schema: Json, out: Mutable, path: string): Mutable {
    const keys = ['allOf', 'oneOf', 'not'];
    if (schema.type !== undefined && schema['x-kubernetes-int-or-string'] !== true) keys.push('anyOf');
    for (const key of keys) {
      const value = schema[key];
      if (value === undefined) continue;
      if (key === 'not' ? !isJson(value) : !Array.isArray(value) || value.length === 0)
        this.fail(path, `${key} must be ${key === 'not' ? 'a schema' : 'a non-empty list of schemas'}`);
      const members: unknown[] = key === 'not' ? [value] : (value as unknown[]);
      for (const member of members)
        checkJunctorMember(member, out, path, (at, problem) => this.fail(at, problem));
      (out as Json)[key] = structuredClone(value);
    }
    return out;
  }

  #typed(schema: Json, out: Mutable, path: string): Mutable {
    const type = this.#type(schema, out, path);
    if (type === undefined) {
      if (schema.enum !== undefined || schema.const !== undefined) this.#enum(schema, out, path);
      if (out.enum !== undefined) return out;
      if (out['x-kubernetes-preserve-unknown-fields'] !== true)
        out['x-kubernetes-preserve-unknown-fields'] = true;
      return out;
    }
    out.type = type;
    if (schema.enum !== undefined || schema.const !== undefined) this.#enum(schema, out, path);
    if (type === 'object') this.#object(schema, out, path);
    else if (schema.properties !== undefined || schema.additionalProperties !== undefined)
      this.fail(path, `properties on a schema of type ${type}`);
    if (type === 'array') this.#array(schema, out, path);
    else if (schema.items !== undefined) this.fail(path, `items on a schema of type ${type}`);
    if (schema.uniqueItems === true && type !== 'array') this.fail(path, 'uniqueItems on a non-array');
    return out;
  }

  /** `type`, with `null` in a type array turned into `nullable`. */
  #type(schema: Json, out: Mutable, path: string): string | undefined {
    let type = schema.type;
    if (Array.isArray(type)) {
      const rest = type.filter((t) => t !== 'null');
      if (rest.length !== type.length) out.nullable = true;
      if (rest.length > 1) this.fail(path, `a value of several types (${rest.join(', ')}) is not structural`);
      type = rest[0];
    }
    if (type === undefined) return undefined;
    if (type === 'null')
      this.fail(path, 'type null is not supported (use Type.Union([X, Type.Null()]) for nullable)');
    if (typeof type !== 'string' || (!SCALARS.has(type) && type !== 'object' && type !== 'array'))
      this.fail(path, `unsupported type ${JSON.stringify(type)}`);
    return type;
  }

  /** Draft 2019+ numeric `exclusiveMinimum`/`exclusiveMaximum` → OpenAPI v3's booleans. */
  #bounds(schema: Json, out: Mutable, path: string): void {
    for (const [exclusive, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      const value = schema[exclusive];
      if (value === undefined) continue;
      if (typeof value === 'boolean') {
        if (value) out[exclusive] = true;
      } else if (typeof value === 'number') {
        if (schema[bound] !== undefined)
          this.fail(path, `both ${bound} and a numeric ${exclusive}: give one of them`);
        out[bound] = value;
        out[exclusive] = true;
      } else this.fail(path, `${exclusive} must be a number or a boolean`);
    }
  }

  #intOrString(schema: Json, out: Mutable, path: string): Mutable {
    if (schema.type !== undefined || schema.properties !== undefined || schema.items !== undefined)
      this.fail(path, 'an int-or-string value cannot also have a type, properties or items');
    out['x-kubernetes-int-or-string'] = true;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
    return out;
  }

  /** `anyOf`: nullable X, literal unions (enums), int-or-string; anything else is not structural. */
  #union(schema: Json, out: Mutable, path: string): Mutable {
    if (schema.type !== undefined) this.fail(path, 'anyOf next to type is not supported');
    const members = schema.anyOf;
    if (!Array.isArray(members) || members.length === 0) this.fail(path, 'anyOf must be a non-empty list');
    const nonNull = members.filter((m) => !(isJson(m) && m.type === 'null' && Object.keys(m).length === 1));
    if (nonNull.length !== members.length) out.nullable = true;
    if (nonNull.length === 0) this.fail(path, 'a union of only null is not supported');
    if (nonNull.length === 1) {
      const inner = this.convert(nonNull[0], path);
      if (out.nullable === true && inner.enum !== undefined) this.fail(path, NULLABLE_ENUM);
      const merged: Mutable = { ...inner, ...out };
      return merged;
    }
    const literals = nonNull.map((m) => (isJson(m) ? literalValues(m) : undefined));
    if (out.nullable === true && literals.every((l) => l !== undefined)) this.fail(path, NULLABLE_ENUM);
    if (literals.every((l) => l !== undefined)) {
      const values = literals.flat();
      const types = new Set(values.map(typeOfValue));
      if (types.has('integer') && types.has('number')) types.delete('integer');
      const [type] = types;
      if (types.size !== 1 || type === undefined)
        this.fail(
          path,
          'a union of literals of different types is not structural (enum values must share one type)',
        );
      return { ...out, type, enum: values };
    }
    if (
      nonNull.length === 2 &&
      // Only bare integer and string: kube's int-or-string has no room for their validations.
      nonNull.every((m) => isJson(m) && Object.keys(m).length === 1) &&
      nonNull.some((m) => isJson(m) && m.type === 'integer') &&
      nonNull.some((m) => isJson(m) && m.type === 'string')
    ) {
      return this.#intOrString({}, out, path);
    }
    return this.fail(
      path,
      'a union of different types is not structural (Kubernetes needs one type per field; use IntOrString(), a literal union, Type.Union([X, Type.Null()]) or Type.Unknown())',
    );
  }

  #enum(schema: Json, out: Mutable, path: string): void {
    const values = schema.enum !== undefined ? schema.enum : [schema.const];
    if (!Array.isArray(values) || values.length === 0) this.fail(path, 'enum must be a non-empty list');
    const nonNull = values.filter((v) => v !== null);
    if (nonNull.length !== values.length && schema.nullable !== true) this.fail(path, NULLABLE_ENUM);
    const types = new Set(nonNull.map(typeOfValue));
    if (types.has('integer') && types.has('number')) types.delete('integer');
    const [type] = types;
    if (types.size !== 1 || type === undefined)
      this.fail(path, 'enum values must all be strings, all numbers or all booleans');
    if (out.type === undefined) out.type = type;
    else if (out.type !== type && !(out.type === 'number' && type === 'integer'))
      this.fail(path, `enum values of type ${type} on a schema of type ${out.type}`);
    out.enum = structuredClone(values);
  }

  #object(schema: Json, out: Mutable, path: string): void {
    const properties = schema.properties;
    const patterns = schema.patternProperties;
    let additional = schema.additionalProperties;
    if (patterns !== undefined) {
      const keys = isJson(patterns) ? Object.keys(patterns) : [];
      const [key] = keys;
      if (keys.length !== 1 || key === undefined || !ANY_KEY.has(key))
        this.fail(path, 'patternProperties is not supported (only Type.Record(Type.String(), X) maps)');
      if (additional !== undefined) this.fail(path, 'both patternProperties and additionalProperties');
      additional = (patterns as Json)[key];
    }
    if (properties !== undefined) {
      if (!isJson(properties)) this.fail(path, 'properties must be an object');
      const converted: Record<string, JSONSchemaProps> = {};
      for (const [name, value] of Object.entries(properties)) {
        converted[name] = this.convert(value, join(path, name));
      }
      if (Object.keys(converted).length > 0) out.properties = converted;
    }
    const required = schema.required;
    if (required !== undefined) {
      if (!Array.isArray(required) || !required.every((r) => typeof r === 'string'))
        this.fail(path, 'required must be a list of property names');
      if (required.length > 0) out.required = [...new Set(required as string[])];
    }
    if (additional === undefined || additional === false) return;
    if (additional === true) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
      return;
    }
    if (properties !== undefined && Object.keys(properties as Json).length > 0)
      this.fail(path, 'properties and additionalProperties are mutually exclusive in Kubernetes');
    delete out.properties;
    out.additionalProperties = this.convert(additional, `${path}.*`);
  }

  #array(schema: Json, out: Mutable, path: string): void {
    const items = schema.items;
    if (Array.isArray(items))
      this.fail(path, 'tuples are not supported: Kubernetes lists have one item schema (use Type.Array)');
    if (items === undefined) this.fail(path, 'an array needs an item schema');
    const converted = this.convert(items, `${path}[*]`);
    out.items = converted;
    if (schema.uniqueItems === true) {
      // Kubernetes forbids uniqueItems (quadratic); a set-typed list keeps the meaning for scalars.
      const listType = out['x-kubernetes-list-type'];
      if (listType !== undefined && listType !== 'set')
        this.fail(path, `uniqueItems with x-kubernetes-list-type ${String(listType)}`);
      if (converted.type === undefined || !SCALARS.has(converted.type))
        this.fail(
          path,
          'uniqueItems is only supported on lists of scalars (it becomes x-kubernetes-list-type: set)',
        );
      out['x-kubernetes-list-type'] = 'set';
    }
  }
}

/** The values a literal or enum schema allows, or undefined when it is not one. */
function literalValues(schema: Json): unknown[] | undefined {
  if (schema.const !== undefined) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  return undefined;
}

/**
 * The structural schema of one field of a kind (`path` names it in errors: `spec`, `status`).
 * Throws {@link KindSchemaError} for what cannot be structural.
 */
export function structuralSchema(kind: string, schema: unknown, path: string): JSONSchemaProps {
  return new Converter(kind).convert(schema, path);
}
