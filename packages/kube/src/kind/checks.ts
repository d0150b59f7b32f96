/**
 * Checks `defineKind` makes before kube-apiserver would: keyword values, defaults that fit their
 * schema and survive pruning, extensions on the nodes they fit, junctors that only restrict.
 * What needs the server (CEL type checking, value limits of defaults) is left to it.
 */
import type { JSONSchemaProps } from '@converge/runtime';
// `typebox/schema`'s Check is what `Value.Check` calls; `typebox/value` would load 140 more
// modules (its Clean, Default, Convert, Diff, …) into every process that imports this package.
import { Check, type XSchema } from 'typebox/schema';

type Json = Record<string, unknown>;
/** Throws the caller's KindSchemaError for the node being converted. */
type Fail = (problem: string) => never;

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A property of a junctor path, as the converter names fields. */
export function join(path: string, name: string): string {
  if (path === '') return name;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/** Keywords a logical junctor (`allOf`, `anyOf`, `oneOf`, `not`) may hold in a structural schema. */
const JUNCTOR_KEYS = new Set([
  'format',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'properties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
]);

/** What TypeBox can tell before the API server does: a default of the schema, a pattern that compiles. */
export function checkValues(schema: Json, fail: Fail): void {
  const intOrString = schema['x-kubernetes-int-or-string'];
  if (intOrString !== undefined && typeof intOrString !== 'boolean')
    fail('x-kubernetes-int-or-string must be a boolean');
  if (typeof schema.pattern === 'string') {
    try {
      new RegExp(schema.pattern, 'u');
    } catch (cause) {
      fail(
        `pattern ${JSON.stringify(schema.pattern)} is not a regular expression: ${(cause as Error).message}`,
      );
    }
  }
  const value = schema.default;
  if (value === undefined || (value === null && schema.nullable === true)) return;
  let valid: boolean;
  try {
    valid = Check(schema as XSchema, value);
  } catch {
    valid = true; // a schema TypeBox cannot check (it will be refused below, or by the server)
  }
  // kube-openapi divides and wants a whole number; TypeBox allows a tolerance.
  const factor = schema.multipleOf;
  if (typeof value === 'number' && typeof factor === 'number' && factor > 0 && !multipleOf(value, factor))
    valid = false;
  if (!valid) fail(`default ${JSON.stringify(value)} does not match the schema`);
}

/** A default must survive pruning (no undeclared fields) and hold integers kube can store. */
export function checkDefault(node: JSONSchemaProps, value: unknown, fail: Fail): void {
  // Beyond 2^53 a JSON number is no longer an exact integer (and beyond int64 kube reads a float).
  if (node.type === 'integer' && typeof value === 'number' && !Number.isSafeInteger(value))
    fail(`the default holds ${value}, not an integer Kubernetes can store exactly`);
  // kube checks an int-or-string value against integer and string (anyOf), whatever else is declared.
  if (
    node['x-kubernetes-int-or-string'] === true &&
    value !== null &&
    typeof value !== 'string' &&
    !(typeof value === 'number' && Number.isSafeInteger(value))
  )
    fail(
      `the default holds ${JSON.stringify(value)}, which is neither an integer nor a string (int-or-string)`,
    );
  if (node['x-kubernetes-preserve-unknown-fields'] === true || typeof value !== 'object' || value === null)
    return;
  if (Array.isArray(value)) {
    const items = node.items;
    if (items !== undefined && !Array.isArray(items))
      for (const item of value) checkDefault(items as JSONSchemaProps, item, fail);
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    const additional = node.additionalProperties;
    const child = node.properties?.[key] ?? (typeof additional === 'object' ? additional : undefined);
    if (child === undefined)
      fail(`the default has a field ${JSON.stringify(key)} the schema does not declare`);
    checkDefault(child, inner, fail);
  }
}

/** The Kubernetes extensions on the node they fit (apiextensions refuses them elsewhere). */
export function checkExtensions(out: JSONSchemaProps, fail: Fail): void {
  const listType = out['x-kubernetes-list-type'];
  if (listType !== undefined && out.type !== 'array') fail('x-kubernetes-list-type needs an array');
  const keys = out['x-kubernetes-list-map-keys'];
  if (keys !== undefined && listType !== 'map')
    fail("x-kubernetes-list-map-keys needs x-kubernetes-list-type: 'map'");
  if (listType === 'map') {
    const items = out.items as JSONSchemaProps | undefined;
    if (keys === undefined || keys.length === 0)
      fail("x-kubernetes-list-type: 'map' needs x-kubernetes-list-map-keys");
    if (items?.type !== 'object') fail("x-kubernetes-list-type: 'map' needs items of type object");
    for (const key of keys) {
      const property = items.properties?.[key];
      if (property === undefined) fail(`the list map key ${key} is not a property of the items`);
      if (!(items.required ?? []).includes(key) && property.default === undefined)
        fail(`the list map key ${key} must be required or have a default`);
    }
  }
  if (out['x-kubernetes-map-type'] !== undefined && out.type !== 'object')
    fail('x-kubernetes-map-type needs an object');
  if (out['x-kubernetes-embedded-resource'] === true) {
    if (out.type !== 'object' || out.additionalProperties !== undefined)
      fail('x-kubernetes-embedded-resource needs an object with properties (not a map)');
    if (out.properties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true)
      fail('x-kubernetes-embedded-resource needs properties or x-kubernetes-preserve-unknown-fields');
  }
  if (out['x-kubernetes-validations'] !== undefined && !celTyped(out))
    fail(
      out.type === 'array'
        ? 'x-kubernetes-validations on an array need items CEL can type (not Type.Unknown(), nor an array of them)'
        : 'x-kubernetes-validations need a typed value (CEL cannot check a Type.Unknown())',
    );
}

/**
 * Whether CEL gives `node` a type, as kube-apiserver's SchemaDeclType does: an int-or-string, a
 * declared type, and for an array the same of its items (an array of Type.Unknown() has none).
 * kube-apiserver refuses a rule on a node without one (an internal error naming the rule).
 */
function celTyped(node: JSONSchemaProps): boolean {
  if (node['x-kubernetes-int-or-string'] === true) return true;
  if (node.type !== 'array') return node.type !== undefined;
  const items = node.items;
  return items !== undefined && !Array.isArray(items) && celTyped(items as JSONSchemaProps);
}

/** Checks that a junctor member only restricts fields `outside` declares. */
export function checkJunctorMember(
  member: unknown,
  outside: JSONSchemaProps | undefined,
  path: string,
  fail: (path: string, problem: string) => never,
): void {
  if (!isJson(member)) fail(path, 'a member of allOf/anyOf/oneOf/not must be a schema');
  for (const [key, value] of Object.entries(member)) {
    if (!JUNCTOR_KEYS.has(key))
      fail(
        path,
        `${key} inside allOf/anyOf/oneOf/not is not structural (they may only add value validations such as required; intersections and unions of objects are not supported: declare one Type.Object)`,
      );
    if (key === 'properties') {
      if (!isJson(value)) fail(path, 'properties must be an object');
      for (const [name, inner] of Object.entries(value)) {
        const declared = outside?.properties?.[name];
        if (declared === undefined)
          fail(join(path, name), 'allOf/anyOf/oneOf/not names a property the schema does not declare');
        checkJunctorMember(inner, declared, join(path, name), fail);
      }
    } else if (key === 'items') {
      const items = outside?.items;
      if (items === undefined || Array.isArray(items))
        fail(`${path}[*]`, 'allOf/anyOf/oneOf/not restricts items the schema does not declare');
      checkJunctorMember(value, items as JSONSchemaProps, `${path}[*]`, fail);
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      if (!Array.isArray(value)) fail(path, `${key} must be a list of schemas`);
      for (const inner of value) checkJunctorMember(inner, outside, path, fail);
    } else if (key === 'not') checkJunctorMember(value, outside, path, fail);
  }
}

/**
 * Whether kube-apiserver finds `value` a multiple of `factor` (kube-openapi's MultipleOf): a value
 * that decodes as an int64 is checked with a remainder by the factor's integer part; any other (a float, or an integer beyond
 * int64 once written as JSON, as -2^63 is) by dividing and asking for a whole number no larger than
 * 2^53 in magnitude, within a relative 1e-9 (swag's IsFloat64AJSONInteger).
 */
function multipleOf(value: number, factor: number): boolean {
  if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) {
    // An int64 is divided by the factor's integer part, which must be positive.
    const whole = Math.trunc(factor);
    return whole > 0 && value % whole === 0;
  }
  return wholeJsonNumber(factor < 1 ? (1 / factor) * value : value / factor);
}

function wholeJsonNumber(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53) return false;
  if (Number.isInteger(f)) return true;
  const g = Math.trunc(f);
  return g !== 0 && Math.abs(f - g) / (Math.abs(f) + Math.abs(g)) < 1e-9;
}
