/**
 * A CRD's structural schema → TypeBox source (`Type.Object({ … })`), the inverse of
 * `structuralSchema`: converting the generated TypeBox value back gives the same schema (see
 * docs/guide/kinds.md for what is normalised).
 */
import { CrdImportError } from './errors.ts';
import { ordered } from './keywords.ts';
import { docComment, key, listLiteral, literal } from './source.ts';

type Json = Readonly<Record<string, unknown>>;

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const SCALAR_CONSTRUCTOR: Readonly<Record<string, string>> = {
  string: 'Type.String',
  integer: 'Type.Integer',
  number: 'Type.Number',
  boolean: 'Type.Boolean',
};

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIntOrStringAnyOf(value: unknown): boolean {
  return JSON.stringify(value) === '[{"type":"integer"},{"type":"string"}]';
}

/** The TypeScript type of a list of JSON values (`'a' | 'b' | null`). */
function tsUnion(values: readonly unknown[]): string {
  const types = values.map((v) =>
    v === null || ['string', 'number', 'boolean'].includes(typeof v) ? literal(v, '') : 'unknown',
  );
  return [...new Set(types)].join(' | ');
}

/** What the import needs to know while writing one schema. */
export interface SchemaContext {
  readonly document: number;
  /** Helpers the source uses (`IntOrString`), collected for the import line. */
  readonly uses: Set<string>;
}

/** Writes TypeBox source for schemas of one document; errors name the field in the CRD. */
export class SchemaWriter {
  readonly #context: SchemaContext;

  constructor(context: SchemaContext) {
    this.#context = context;
  }

  #fail(field: string, problem: string): never {
    throw new CrdImportError(this.#context.document, field, problem);
  }

  /** The options object of a constructor: every key of `schema` but those the constructor states. */
  #options(schema: Json, consumed: readonly string[], indent: string, extra: Json = {}): string | undefined {
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(ordered({ ...schema, ...extra })))
      if (!consumed.includes(k)) rest[k] = v;
    if (Object.keys(rest).length === 0) return undefined;
    return literal(rest, indent);
  }

  #call(fn: string, args: readonly string[], options: string | undefined): string {
    return `${fn}(${[...args, ...(options === undefined ? [] : [options])].join(', ')})`;
  }

  /** TypeBox source of `schema` (at `field` in the CRD), indented for `indent`. */
  write(schema: unknown, field: string, indent: string): string {
    if (!isJson(schema)) this.#fail(field, 'a schema must be an object');
    for (const k of [
      '$ref',
      'definitions',
      'patternProperties',
      'dependencies',
      'additionalItems',
      'id',
      '$schema',
    ]) {
      if (schema[k] !== undefined) this.#fail(`${field}.${k}`, `${k} is not allowed in a CRD schema`);
    }
    if (schema.nullable === true) {
      const { nullable: _, ...inner } = schema;
      // A nullable enum stays raw JSON: kube's enum check never matches null, TypeBox's would.
      if (Array.isArray(schema.enum))
        return `Type.Unsafe<${tsUnion(schema.enum)}>(${literal(ordered(schema), indent)})`;
      return `Type.Union([${this.write(inner, field, indent)}, Type.Null()])`;
    }
    if (schema['x-kubernetes-int-or-string'] === true) {
      if (schema.anyOf !== undefined && !isIntOrStringAnyOf(schema.anyOf))
        this.#fail(`${field}.anyOf`, 'an int-or-string schema may only have anyOf [integer, string]');
      this.#context.uses.add('IntOrString');
      const options = this.#options(schema, ['x-kubernetes-int-or-string', 'anyOf', 'type'], indent);
      return this.#call('IntOrString', [], options);
    }
    const type = schema.type;
    if (type === undefined) {
      if (schema['x-kubernetes-preserve-unknown-fields'] !== true)
        this.#fail(`${field}.type`, 'must not be empty (a structural schema types every field)');
      return this.#call(
        'Type.Unknown',
        [],
        this.#options(schema, ['x-kubernetes-preserve-unknown-fields'], indent),
      );
    }
    if (typeof type !== 'string' || !TYPES.has(type))
      this.#fail(`${field}.type`, `unsupported type ${JSON.stringify(type)}`);
    if (schema.enum !== undefined) return this.#enum(schema, type, field, indent);
    if (type === 'object') return this.#object(schema, field, indent);
    if (type === 'array') {
      if (!isJson(schema.items)) this.#fail(`${field}.items`, 'an array needs an item schema');
      const items = this.write(schema.items, `${field}.items`, indent);
      return this.#call('Type.Array', [items], this.#options(schema, ['type', 'items'], indent));
    }
    return this.#call(SCALAR_CONSTRUCTOR[type] as string, [], this.#scalarOptions(schema, field, indent));
  }

  /** OpenAPI v3's boolean `exclusiveMinimum`/`exclusiveMaximum` → TypeBox's numeric form. */
  #scalarOptions(schema: Json, field: string, indent: string): string | undefined {
    const rest: Record<string, unknown> = { ...schema };
    delete rest.type;
    for (const [exclusive, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      const flag = rest[exclusive];
      if (flag === undefined) continue;
      if (typeof flag !== 'boolean') this.#fail(`${field}.${exclusive}`, 'must be a boolean');
      delete rest[exclusive];
      if (flag && typeof rest[bound] === 'number') {
        rest[exclusive] = rest[bound];
        delete rest[bound];
      }
    }
    return this.#options(rest, [], indent);
  }

  #enum(schema: Json, type: string, field: string, indent: string): string {
    const values = schema.enum;
    if (!Array.isArray(values) || values.length === 0)
      this.#fail(`${field}.enum`, 'must be a non-empty list');
    const inner = `${indent}  `;
    if (type === 'string' && values.every((v) => typeof v === 'string')) {
      const options = this.#options(schema, ['type', 'enum'], indent);
      if (values.length === 1) return this.#call('Type.Literal', [literal(values[0], inner)], options);
      const literals = values.map((v) => `Type.Literal(${literal(v, inner)})`);
      return this.#call('Type.Union', [listLiteral(literals, indent)], options);
    }
    return this.#call('Type.Enum', [literal(values, indent)], this.#options(schema, ['enum'], indent));
  }

  #object(schema: Json, field: string, indent: string): string {
    const properties = schema.properties;
    const additional = schema.additionalProperties;
    if (properties !== undefined && !isJson(properties))
      this.#fail(`${field}.properties`, 'must be an object');
    if (additional !== undefined && additional !== null) {
      if (!isJson(additional))
        this.#fail(`${field}.additionalProperties`, 'only a schema is supported (not true or false)');
      if (properties !== undefined && Object.keys(properties).length > 0)
        this.#fail(
          `${field}.additionalProperties`,
          'additionalProperties and properties are mutually exclusive',
        );
      const value = this.write(additional, `${field}.additionalProperties`, indent);
      const options = this.#options(schema, ['type', 'additionalProperties', 'properties'], indent);
      return this.#call('Type.Record', ['Type.String()', value], options);
    }
    const required = schema.required;
    if (required !== undefined && (!Array.isArray(required) || !required.every((r) => typeof r === 'string')))
      this.#fail(`${field}.required`, 'must be a list of property names');
    const requiredNames = new Set<unknown>(required ?? []);
    const inner = `${indent}  `;
    const lines = Object.entries(properties ?? {}).map(([name, property]) => {
      const source = this.write(property, `${field}.properties.${name}`, inner);
      const value = requiredNames.has(name) ? source : `Type.Optional(${source})`;
      return `${docComment(isJson(property) ? property.description : undefined, inner)}${inner}${key(name)}: ${value},`;
    });
    const shape = lines.length === 0 ? '{}' : `{\n${lines.join('\n')}\n${indent}}`;
    const declared = new Set(Object.keys(properties ?? {}));
    const undeclared = [...requiredNames].filter((name) => !declared.has(name as string));
    const options = this.#options(schema, ['type', 'properties', 'required', 'additionalProperties'], indent);
    if (undeclared.length > 0)
      this.#fail(
        `${field}.required`,
        `names properties the schema does not declare: ${undeclared.join(', ')}`,
      );
    return this.#call('Type.Object', [shape], options);
  }
}
