import { ConvergeError } from '@converge/runtime';
import { builtinDefinitions, type DefinitionSchema, definitionOfRef } from './data.ts';

/** What {@link checkBuiltinObject} does besides finding unknown fields. */
export interface BuiltinCheckOptions {
  /** Delete unknown fields from the object (default true). */
  readonly prune?: boolean;
}

/** Unknown field paths, as kube-apiserver prints them (`spec.template.spec.containers[0].imagee`). */
export interface BuiltinCheck {
  readonly unknown: readonly string[];
}

/**
 * A body that does not decode into the kind's Go types (a string where an int32 goes, a malformed
 * quantity or date): kube-apiserver's 400 `… cannot be handled as a …` cause.
 */
export class BuiltinDecodeError extends ConvergeError {
  constructor(message: string) {
    super('CONVERGE_ERR_APISERVER_BUILTIN_DECODE', message);
    this.name = 'BuiltinDecodeError';
  }
}

/** apimachinery's Quantity grammar, as its error message quotes it. */
const QUANTITY_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const QUANTITY =
  /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const INT32 = 2 ** 31;

const META = 'io.k8s.apimachinery.pkg.';
/** Definitions whose JSON is not their structure: checked by value, never walked. */
const OPAQUE = new Set([
  `${META}apis.meta.v1.FieldsV1`,
  `${META}runtime.RawExtension`,
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
]);

type Json = unknown;

function jsonType(value: Json): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Go's name of a definition's type (`v1.PodSpec`, `resource.Quantity`). */
function goType(definition: string): string {
  const parts = definition.split('.');
  return `${parts.at(-2)}.${parts.at(-1)}`;
}

/** Go's name of the type a schema decodes into (`[]v1.Container`, `map[string]string`). */
function goNameOf(schema: DefinitionSchema | undefined): string {
  if (schema === undefined) return 'interface {}';
  if (schema.$ref !== undefined) return goType(definitionOfRef(schema.$ref));
  switch (schema.type) {
    case 'array':
      return `[]${goNameOf(schema.items)}`;
    case 'object':
      return typeof schema.additionalProperties === 'object'
        ? `map[string]${goNameOf(schema.additionalProperties)}`
        : 'map[string]interface {}';
    case 'integer':
      return schema.format === 'int32' ? 'int32' : 'int64';
    case 'string':
      return schema.format === 'byte' ? '[]uint8' : 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return 'float64';
    case undefined:
      return 'interface {}';
    default:
      return schema.type;
  }
}

class Walker {
  readonly unknown: string[] = [];
  /** The dotted JSON path Go's decoder names (no indices) and the struct holding the field. */
  #struct = '';

  readonly prune: boolean;

  constructor(prune: boolean) {
    this.prune = prune;
  }

  typeError(value: Json, goName: string, goPath: string): never {
    const what = typeof value === 'number' ? `number ${value}` : jsonType(value);
    const field = this.#struct === '' ? 'Go value' : `Go struct field ${this.#struct}.${goPath}`;
    throw new BuiltinDecodeError(`json: cannot unmarshal ${what} into ${field} of type ${goName}`);
  }

  walk(schema: DefinitionSchema, value: Json, path: string, goPath: string): void {
    if (value === null || value === undefined) return;
    if (schema.$ref !== undefined) {
      this.definition(definitionOfRef(schema.$ref), value, path, goPath);
      return;
    }
    this.schema(schema, value, path, goPath, undefined);
  }

  definition(name: string, value: Json, path: string, goPath: string): void {
    if (value === null) return;
    if (OPAQUE.has(name)) return;
    if (name === `${META}api.resource.Quantity`) {
      if (typeof value === 'number') return;
      if (typeof value !== 'string') this.typeError(value, 'resource.Quantity', goPath);
      if (!QUANTITY.test(value)) {
        throw new BuiltinDecodeError(`quantities must match the regular expression '${QUANTITY_PATTERN}'`);
      }
      return;
    }
    if (name === `${META}util.intstr.IntOrString`) {
      if (typeof value === 'string') return;
      if (typeof value !== 'number') this.typeError(value, 'int32', goPath);
      if (!Number.isInteger(value) || value < -INT32 || value >= INT32)
        this.typeError(value, 'int32', goPath);
      return;
    }
    const schema = builtinDefinitions()[name];
    if (schema === undefined) return;
    this.schema(schema, value, path, goPath, name);
  }

  schema(
    schema: DefinitionSchema,
    value: Json,
    path: string,
    goPath: string,
    name: string | undefined,
  ): void {
    const goName = name === undefined ? goNameOf(schema) : goType(name);
    switch (schema.type) {
      case 'object':
        this.object(schema, value, path, goPath, name, goName);
        return;
      case 'array': {
        if (!Array.isArray(value)) this.typeError(value, goName, goPath);
        const items = schema.items;
        if (items !== undefined) {
          for (let i = 0; i < value.length; i++) this.walk(items, value[i], `${path}[${i}]`, goPath);
        }
        return;
      }
      case 'string':
        this.string(schema, value, goPath);
        return;
      case 'integer':
        this.integer(schema, value, goPath);
        return;
      case 'boolean':
        if (typeof value !== 'boolean') this.typeError(value, 'bool', goPath);
        return;
      case 'number':
        if (typeof value !== 'number') this.typeError(value, 'float64', goPath);
        return;
      case undefined:
        if (schema.properties !== undefined) this.object(schema, value, path, goPath, name, goName);
        return;
      default:
        return;
    }
  }

  object(
    schema: DefinitionSchema,
    value: Json,
    path: string,
    goPath: string,
    name: string | undefined,
    goName: string,
  ): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.typeError(value, goName, goPath);
    }
    const object = value as Record<string, Json>;
    const properties = schema.properties;
    const additional = schema.additionalProperties;
    const saved = this.#struct;
    if (name !== undefined) this.#struct = name.slice(name.lastIndexOf('.') + 1);
    for (const key of Object.keys(object)) {
      const child = path === '' ? key : `${path}.${key}`;
      const childGo = goPath === '' ? key : `${goPath}.${key}`;
      const property = properties?.[key];
      if (property !== undefined) this.walk(property, object[key], child, childGo);
      else if (typeof additional === 'object') this.walk(additional, object[key], child, childGo);
      else if (properties !== undefined && schema['x-kubernetes-preserve-unknown-fields'] !== true) {
        this.unknown.push(child);
        if (this.prune) delete object[key];
      }
    }
    this.#struct = saved;
  }

  string(schema: DefinitionSchema, value: Json, goPath: string): void {
    if (typeof value !== 'string')
      this.typeError(value, schema.format === 'byte' ? '[]uint8' : 'string', goPath);
    if (schema.format === 'date-time' && !validTime(value)) {
      throw new BuiltinDecodeError(
        `parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(value)} as "2006"`,
      );
    }
    if (schema.format === 'byte' && !BASE64.test(value)) {
      throw new BuiltinDecodeError(`illegal base64 data at input byte ${firstBadBase64(value)}`);
    }
  }

  integer(schema: DefinitionSchema, value: Json, goPath: string): void {
    const go = schema.format === 'int32' ? 'int32' : 'int64';
    if (typeof value !== 'number' || !Number.isInteger(value)) this.typeError(value, go, goPath);
    const limit = go === 'int32' ? INT32 : 2 ** 63;
    if (value < -limit || value >= limit) this.typeError(value, go, goPath);
  }
}

function validTime(text: string): boolean {
  const m = RFC3339.exec(text);
  if (m === null) return false;
  const [month, day, hour, minute, second] = [m[2], m[3], m[4], m[5], m[6]].map(Number) as number[];
  return (
    (month as number) >= 1 &&
    (month as number) <= 12 &&
    (day as number) >= 1 &&
    (day as number) <= 31 &&
    (hour as number) < 24 &&
    (minute as number) < 60 &&
    (second as number) < 60
  );
}

function firstBadBase64(text: string): number {
  for (let i = 0; i < text.length; i++) if (!/[A-Za-z0-9+/=]/.test(text[i] as string)) return i;
  return Math.max(0, text.length - (text.length % 4));
}

/**
 * Checks a body against a built-in kind's definition, as kube-apiserver's decoder does: reports
 * (and by default deletes) fields the kind does not have, at every depth, with the paths
 * kube-apiserver's strict decoder prints; throws {@link BuiltinDecodeError} for a value of the
 * wrong type (Go's `json: cannot unmarshal …` wording), an int32/int64 out of range, a malformed
 * quantity, int-or-string, date-time or base64 value. `apiVersion` and `kind` are always known.
 */
export function checkBuiltinObject(
  definition: string,
  object: Record<string, unknown>,
  options: BuiltinCheckOptions = {},
): BuiltinCheck {
  const walker = new Walker(options.prune ?? true);
  walker.definition(definition, object, '', '');
  return { unknown: walker.unknown };
}
