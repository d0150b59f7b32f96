/**
 * A CRD schema as CEL sees it (apiextensions' `SchemaDeclType`): each object with properties becomes
 * a declared object type whose fields are the properties (names escaped as kube escapes them:
 * `__namespace__`, `foo__dash__bar`), `additionalProperties` a `map(string, V)`, arrays lists,
 * `integer` int, `number` double, `date`/`date-time` strings timestamps, `duration` durations,
 * `byte` bytes, `x-kubernetes-int-or-string` dyn. Resource roots (the object and embedded
 * resources) always expose `apiVersion`, `kind`, `metadata.name` and `metadata.generateName`.
 * Alongside each type: the size bounds the cost estimate uses and the JSON → CEL value conversion.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celEnvironment, celEquals, Duration, type SizeInfo } from '../cel/index.ts';
import { formatValidators } from './cel-formats.ts';
import { isObject, own } from './json.ts';
import { compileSchema, type SchemaNode } from './schema.ts';
import type { StructuralSchema } from './types.ts';

/** kube-apiserver's `DefaultMaxRequestSizeBytes`. */
export const MAX_REQUEST_SIZE = 3 * 1024 * 1024;

/** One schema node's CEL type. */
export interface CelNodeType {
  /** The type as declared to the environment: `int`, `list<string>`, `Object.spec`. */
  readonly type: string;
  /** The JSON type kube reports as the bad value of a failed rule (`object`, `integer`, '' for int-or-string). */
  readonly jsonType: string;
  readonly size: SizeInfo;
  /** The smallest JSON this type serializes to (for unbounded-size estimates). */
  readonly minSize: number;
  /** Converts decoded JSON to the CEL value; undefined when the value cannot be represented. */
  readonly convert: (value: unknown) => unknown;
}

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** kube's `cel.Escape`: the CEL field name of a property, or undefined when it has none. */
export function escapeCelName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  let ok = true;
  const escaped = name.replace(/__|[-./]|[^a-zA-Z0-9\-./_]/g, (m) => {
    switch (m) {
      case '__':
        return '__underscores__';
      case '.':
        return '__dot__';
      case '-':
        return '__dash__';
      case '/':
        return '__slash__';
      default:
        ok = false;
        return '';
    }
  });
  return ok ? escaped : undefined;
}

const STRING: StructuralSchema = { type: 'string' };
const META: StructuralSchema = { type: 'object', properties: { name: STRING, generateName: STRING } };

function toBigInt(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return typeof value === 'bigint' ? value : undefined;
}

/** Go's `time.ParseDuration` for the durations CRD values hold (`1h30m`, `-1.5s`, `300ms`). */
export function parseGoDuration(text: string): Duration | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (m === null && text !== '0') return undefined;
  if (text === '0') return new Duration(0n, 0);
  const units: Record<string, bigint> = {
    ns: 1n,
    us: 1000n,
    µs: 1000n,
    μs: 1000n,
    ms: 1_000_000n,
    s: 1_000_000_000n,
    m: 60_000_000_000n,
    h: 3_600_000_000_000n,
  };
  let nanos = 0n;
  for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    const [whole, fraction = ''] = (part[1] as string).split('.');
    const unit = units[part[2] as string] as bigint;
    nanos += BigInt(whole || '0') * unit;
    if (fraction !== '') nanos += (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length);
  }
  if (m?.[1] === '-') nanos = -nanos;
  return new Duration(nanos / 1_000_000_000n, Number(nanos % 1_000_000_000n));
}

function toTimestamp(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  const date = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function toBytes(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  return /^[A-Za-z0-9+/]*={0,2}$/.test(value) ? new Uint8Array(Buffer.from(value, 'base64')) : undefined;
}

function scalar(
  raw: SchemaNode['raw'],
  maxLength: number | undefined,
  enumValues: readonly unknown[] | undefined,
): CelNodeType | undefined {
  const format = typeof raw.format === 'string' ? raw.format : '';
  switch (raw.type) {
    case 'boolean':
      return {
        type: 'bool',
        jsonType: 'boolean',
        size: { maxSize: 0 },
        minSize: 4,
        convert: (v) => (typeof v === 'boolean' ? v : undefined),
      };
    case 'integer':
      return { type: 'int', jsonType: 'integer', size: { maxSize: 0 }, minSize: 1, convert: toBigInt };
    case 'number':
      return {
        type: 'double',
        jsonType: 'number',
        size: { maxSize: 0 },
        minSize: 1,
        convert: (v) => (typeof v === 'number' ? v : undefined),
      };
    case 'string':
      break;
    case undefined:
    default:
      return undefined;
  }
  if (format === 'byte') {
    const maxSize = maxLength ?? MAX_REQUEST_SIZE - 2;
    return { type: 'bytes', jsonType: 'string', size: { maxSize }, minSize: 2, convert: toBytes };
  }
  if (format === 'duration') {
    return {
      type: 'google.protobuf.Duration',
      jsonType: 'string',
      size: { maxSize: 32 },
      minSize: 4,
      convert: (v) => (typeof v === 'string' ? parseGoDuration(v) : undefined),
    };
  }
  if (format === 'date' || format === 'date-time') {
    return {
      type: 'google.protobuf.Timestamp',
      jsonType: 'string',
      size: { maxSize: format === 'date' ? 12 : 42 },
      minSize: format === 'date' ? 12 : 22,
      convert: toTimestamp,
    };
  }
  let maxSize = MAX_REQUEST_SIZE - 2;
  if (maxLength !== undefined) maxSize = Math.max(0, maxLength) * 4;
  else if (enumValues !== undefined && enumValues.length > 0) {
    maxSize = enumValues.reduce<number>((m, v) => (typeof v === 'string' ? Math.max(m, v.length) : m), 0);
  }
  return {
    type: 'string',
    jsonType: 'string',
    size: { maxSize },
    minSize: 2,
    convert: (v) => (typeof v === 'string' ? v : undefined),
  };
}

/** The CEL types of one root schema, registered in one environment. */
export class CelSchemaTypes {
  /** The environment holding every object type of the schema (clone it to declare variables). */
  readonly env: Environment;
  readonly #types = new Map<SchemaNode, Map<boolean, CelNodeType | undefined>>();
  readonly #names = new Set<string>();
  #complete = false;

  constructor(root: SchemaNode) {
    this.env = celEnvironment({ formats: formatValidators });
    this.typeOf(root, true, 'Object');
    this.#complete = true;
  }

  /**
   * The CEL type of `node` (at a resource root when `resourceRoot`), or undefined when CEL cannot
   * see it (no type, an array without items, or a part of the schema outside the typed tree).
   */
  typeOf(node: SchemaNode, resourceRoot: boolean, name = 'Object'): CelNodeType | undefined {
    let byRoot = this.#types.get(node);
    if (byRoot?.has(resourceRoot)) return byRoot.get(resourceRoot);
    if (this.#complete) return undefined;
    if (byRoot === undefined) {
      byRoot = new Map();
      this.#types.set(node, byRoot);
    }
    byRoot.set(resourceRoot, undefined); // guards against a schema that contains itself
    const type = this.#declare(node, resourceRoot, name);
    byRoot.set(resourceRoot, type);
    return type;
  }

  #uniqueName(name: string): string {
    let candidate = name;
    for (let i = 2; this.#names.has(candidate); i++) candidate = `${name}_${i}`;
    this.#names.add(candidate);
    return candidate;
  }

  #declare(node: SchemaNode, resourceRoot: boolean, name: string): CelNodeType | undefined {
    if (node.intOrString) {
      const maxSize = node.maxLength !== undefined ? Math.max(0, node.maxLength) * 4 : MAX_REQUEST_SIZE - 2;
      return {
        type: 'dyn',
        jsonType: node.type,
        size: { maxSize },
        minSize: 1,
        convert: (v) => (typeof v === 'string' ? v : toBigInt(v)),
      };
    }
    if (node.type === 'array') {
      if (node.items === undefined) return undefined;
      const items = this.typeOf(node.items, node.items.embeddedResource, `${name}.items`);
      if (items === undefined) return undefined;
      const maxSize =
        node.maxItems !== undefined
          ? Math.max(0, node.maxItems)
          : Math.floor((MAX_REQUEST_SIZE - 2) / (items.minSize + 1));
      return {
        type: `list<${items.type}>`,
        jsonType: 'array',
        size: { kind: 'list', maxSize, elements: items.size },
        minSize: 2,
        convert: (v) =>
          Array.isArray(v) ? v.map((item) => items.convert(item)).filter((x) => x !== undefined) : undefined,
      };
    }
    if (node.type !== 'object') return scalar(node.raw, node.maxLength, node.enum);
    if (typeof node.additionalProperties === 'object') {
      const values = this.typeOf(
        node.additionalProperties,
        node.additionalProperties.embeddedResource,
        `${name}.values`,
      );
      const maxSize =
        node.maxProperties !== undefined
          ? Math.max(0, node.maxProperties)
          : Math.floor((MAX_REQUEST_SIZE - 2) / ((values?.minSize ?? 1) + 6));
      const convertValue = values?.convert ?? ((v: unknown) => v);
      return {
        type: `map<string, ${values?.type ?? 'dyn'}>`,
        jsonType: 'object',
        size: { kind: 'map', maxSize, ...(values === undefined ? {} : { elements: values.size }) },
        minSize: 2,
        convert: (v) => {
          if (!isObject(v)) return undefined;
          const out = new Map<string, unknown>();
          for (const [k, item] of Object.entries(v)) {
            const converted = convertValue(item);
            if (converted !== undefined && converted !== null) out.set(k, converted);
          }
          return out;
        },
      };
    }
    return this.#object(node, resourceRoot, name);
  }

  #object(node: SchemaNode, resourceRoot: boolean, name: string): CelNodeType {
    const typeName = this.#uniqueName(name);
    const properties = new Map(node.properties ?? []);
    if (resourceRoot) {
      properties.set('apiVersion', compileSchema(STRING));
      properties.set('kind', compileSchema(STRING));
      properties.set('metadata', compileSchema(META));
    }
    const fields: Record<string, string> = {};
    const converters: [string, string, (v: unknown) => unknown][] = [];
    const sizes = new Map<string, SizeInfo>();
    const required = new Set(node.required);
    let minSize = 2;
    for (const [prop, schema] of properties) {
      const escaped = escapeCelName(prop);
      const field = this.typeOf(schema, schema.embeddedResource, `${typeName}.${escaped ?? 'field'}`);
      if (field === undefined) continue;
      if (required.has(prop) && !schema.hasDefault) minSize += prop.length + field.minSize + 4;
      if (escaped === undefined) continue;
      fields[escaped] = field.type;
      converters.push([prop, escaped, field.convert]);
      sizes.set(escaped, field.size);
    }
    const Type = class extends Map<string, unknown> {};
    Object.defineProperty(Type, 'name', { value: typeName });
    this.env.registerType(typeName, { ctor: Type, fields });
    this.env.registerOperator(`${typeName} == ${typeName}`, (a: unknown, b: unknown) => celEquals(a, b));
    return {
      type: typeName,
      jsonType: 'object',
      size: { maxSize: 0, fields: sizes },
      minSize,
      convert: (v) => {
        if (!isObject(v)) return undefined;
        const out = new Type();
        for (const [prop, escaped, convert] of converters) {
          const item = own(v, prop);
          if (item === undefined || item === null) continue;
          const converted = convert(item);
          if (converted !== undefined) out.set(escaped, converted);
        }
        return out;
      },
    };
  }
}

const typesCache = new WeakMap<SchemaNode, CelSchemaTypes>();

/** The CEL types of a root schema (built once per compiled schema). */
export function celSchemaTypes(root: SchemaNode): CelSchemaTypes {
  let types = typesCache.get(root);
  if (types === undefined) {
    types = new CelSchemaTypes(root);
    typesCache.set(root, types);
  }
  return types;
}
