/**
 * Type checks that mirror Go's JSON decoding of `apiextensions.k8s.io/v1` types: a field of the wrong
 * JSON type is a decode error (400), reported with Go's message; `null` decodes to the zero value.
 */
import { CrdDecodeError } from './errors.ts';
import { isObject } from './json.ts';

/** A Go type the decoder expects. */
type GoType =
  | 'string'
  | 'bool'
  | 'int64'
  | 'int32'
  | 'float64'
  | 'any'
  | 'schema'
  | 'schemaOrBool'
  | 'schemaOrArray'
  | 'schemaOrStrings'
  | { readonly struct: string; readonly fields: Readonly<Record<string, GoType>> }
  | { readonly array: GoType }
  | { readonly map: GoType };

/** Deeper nesting is refused (Go's decoder stops at 10000; schemas never come close). */
export const MAX_DEPTH = 512;

const strings: GoType = { array: 'string' };

const SCHEMA_FIELDS: Record<string, GoType> = {
  id: 'string',
  $schema: 'string',
  $ref: 'string',
  description: 'string',
  type: 'string',
  format: 'string',
  title: 'string',
  default: 'any',
  maximum: 'float64',
  exclusiveMaximum: 'bool',
  minimum: 'float64',
  exclusiveMinimum: 'bool',
  maxLength: 'int64',
  minLength: 'int64',
  pattern: 'string',
  maxItems: 'int64',
  minItems: 'int64',
  uniqueItems: 'bool',
  multipleOf: 'float64',
  enum: { array: 'any' },
  maxProperties: 'int64',
  minProperties: 'int64',
  required: strings,
  items: 'schemaOrArray',
  allOf: { array: 'schema' },
  oneOf: { array: 'schema' },
  anyOf: { array: 'schema' },
  not: 'schema',
  properties: { map: 'schema' },
  additionalProperties: 'schemaOrBool',
  patternProperties: { map: 'schema' },
  dependencies: { map: 'schemaOrStrings' },
  additionalItems: 'schemaOrBool',
  definitions: { map: 'schema' },
  externalDocs: { struct: 'ExternalDocumentation', fields: { description: 'string', url: 'string' } },
  example: 'any',
  nullable: 'bool',
  'x-kubernetes-preserve-unknown-fields': 'bool',
  'x-kubernetes-embedded-resource': 'bool',
  'x-kubernetes-int-or-string': 'bool',
  'x-kubernetes-list-map-keys': strings,
  'x-kubernetes-list-type': 'string',
  'x-kubernetes-map-type': 'string',
  'x-kubernetes-validations': {
    array: {
      struct: 'ValidationRule',
      fields: {
        rule: 'string',
        message: 'string',
        messageExpression: 'string',
        reason: 'string',
        fieldPath: 'string',
        optionalOldSelf: 'bool',
      },
    },
  },
};

const SCHEMA: GoType = { struct: 'JSONSchemaProps', fields: SCHEMA_FIELDS };

/** The JSON keys of a JSONSchemaProps (anything else is dropped on decode). */
export const SCHEMA_KEYS: ReadonlySet<string> = new Set(Object.keys(SCHEMA_FIELDS));

const NAMES: GoType = {
  struct: 'CustomResourceDefinitionNames',
  fields: {
    plural: 'string',
    singular: 'string',
    shortNames: strings,
    kind: 'string',
    listKind: 'string',
    categories: strings,
  },
};

const VERSION: GoType = {
  struct: 'CustomResourceDefinitionVersion',
  fields: {
    name: 'string',
    served: 'bool',
    storage: 'bool',
    deprecated: 'bool',
    deprecationWarning: 'string',
    schema: { struct: 'CustomResourceValidation', fields: { openAPIV3Schema: 'schema' } },
    subresources: {
      struct: 'CustomResourceSubresources',
      fields: {
        status: { map: 'any' },
        scale: {
          struct: 'CustomResourceSubresourceScale',
          fields: { specReplicasPath: 'string', statusReplicasPath: 'string', labelSelectorPath: 'string' },
        },
      },
    },
    additionalPrinterColumns: {
      array: {
        struct: 'CustomResourceColumnDefinition',
        fields: {
          name: 'string',
          type: 'string',
          format: 'string',
          description: 'string',
          priority: 'int32',
          jsonPath: 'string',
        },
      },
    },
    selectableFields: { array: { struct: 'SelectableField', fields: { jsonPath: 'string' } } },
  },
};

const CONDITION: GoType = {
  struct: 'CustomResourceDefinitionCondition',
  fields: {
    type: 'string',
    status: 'string',
    lastTransitionTime: 'string',
    reason: 'string',
    message: 'string',
  },
};

const CRD: GoType = {
  struct: 'CustomResourceDefinition',
  fields: {
    apiVersion: 'string',
    kind: 'string',
    metadata: {
      struct: 'ObjectMeta',
      fields: {
        name: 'string',
        generateName: 'string',
        namespace: 'string',
        uid: 'string',
        resourceVersion: 'string',
        generation: 'int64',
        labels: { map: 'string' },
        annotations: { map: 'string' },
        finalizers: strings,
        ownerReferences: { array: 'any' },
        managedFields: { array: 'any' },
      },
    },
    spec: {
      struct: 'CustomResourceDefinitionSpec',
      fields: {
        group: 'string',
        names: NAMES,
        scope: 'string',
        versions: { array: VERSION },
        conversion: {
          struct: 'CustomResourceConversion',
          fields: {
            strategy: 'string',
            webhook: {
              struct: 'WebhookConversion',
              fields: {
                conversionReviewVersions: strings,
                clientConfig: {
                  struct: 'WebhookClientConfig',
                  fields: {
                    url: 'string',
                    caBundle: 'string',
                    service: {
                      struct: 'ServiceReference',
                      fields: { namespace: 'string', name: 'string', path: 'string', port: 'int32' },
                    },
                  },
                },
              },
            },
          },
        },
        preserveUnknownFields: 'bool',
      },
    },
    status: {
      struct: 'CustomResourceDefinitionStatus',
      fields: { conditions: { array: CONDITION }, acceptedNames: NAMES, storedVersions: strings },
    },
  },
};

interface Problem {
  readonly field: string;
  readonly message: string;
}

/** True if `value` nests deeper than `remaining` levels (probes at most that deep). */
function tooDeep(value: unknown, remaining: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (remaining <= 0) return true;
  for (const v of Object.values(value)) if (tooDeep(v, remaining - 1)) return true;
  return false;
}

function goName(t: GoType): string {
  if (typeof t === 'string') {
    if (t === 'schema' || t === 'schemaOrArray' || t === 'schemaOrBool' || t === 'schemaOrStrings') {
      return 'v1.JSONSchemaProps';
    }
    return t === 'any' ? 'interface {}' : t;
  }
  if ('struct' in t) return `v1.${t.struct}`;
  if ('array' in t) return `[]${goName(t.array)}`;
  return `map[string]${goName(t.map)}`;
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Checks `value` against `type`; returns the first mismatch. `path` is dotted, `where` the struct name. */
function check(
  value: unknown,
  type: GoType,
  path: string,
  where: string,
  depth: number,
): Problem | undefined {
  if (value === null || value === undefined) return undefined;
  if (depth > MAX_DEPTH) return { field: path, message: `exceeded max depth of ${MAX_DEPTH}` };
  const mismatch = (what = jsonKind(value)): Problem => ({
    field: path,
    message: `json: cannot unmarshal ${what} into Go struct field ${where}.${path} of type ${goName(type)}`,
  });
  if (typeof type === 'string') {
    switch (type) {
      case 'any':
        return tooDeep(value, MAX_DEPTH - depth)
          ? { field: path, message: `exceeded max depth of ${MAX_DEPTH}` }
          : undefined;
      case 'string':
        return typeof value === 'string' ? undefined : mismatch();
      case 'bool':
        return typeof value === 'boolean' ? undefined : mismatch();
      case 'float64':
        return typeof value === 'number' ? undefined : mismatch();
      case 'int64':
      case 'int32': {
        if (typeof value !== 'number') return mismatch();
        const limit = type === 'int32' ? 2 ** 31 : 2 ** 63;
        return Number.isInteger(value) && value >= -limit && value < limit
          ? undefined
          : mismatch(`number ${value}`);
      }
      case 'schema':
        return check(value, SCHEMA, path, where, depth);
      case 'schemaOrBool':
        return typeof value === 'boolean' ? undefined : check(value, SCHEMA, path, where, depth);
      case 'schemaOrArray':
        return Array.isArray(value)
          ? check(value, { array: 'schema' }, path, where, depth)
          : check(value, SCHEMA, path, where, depth);
      case 'schemaOrStrings':
        return Array.isArray(value)
          ? check(value, strings, path, where, depth)
          : check(value, SCHEMA, path, where, depth);
    }
  }
  if ('array' in type) {
    if (!Array.isArray(value)) return mismatch();
    for (const item of value) {
      const p = check(item, type.array, path, where, depth + 1);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  if (!isObject(value)) return mismatch();
  if ('map' in type) {
    for (const [k, v] of Object.entries(value)) {
      const p = check(v, type.map, join(path, k), where, depth + 1);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    const fieldType = Object.hasOwn(type.fields, k) ? type.fields[k] : undefined;
    if (fieldType === undefined) continue;
    const p = check(v, fieldType, join(path, k), type.struct, depth + 1);
    if (p !== undefined) return p;
  }
  return undefined;
}

/**
 * Throws {@link CrdDecodeError} when `crd` cannot be decoded as an apiextensions v1
 * CustomResourceDefinition (a field of the wrong JSON type), with kube-apiserver's 400 message.
 */
export function assertDecodableCrd(crd: unknown): void {
  const problem = isObject(crd)
    ? check(crd, CRD, '', 'CustomResourceDefinition', 0)
    : {
        field: '',
        message: `json: cannot unmarshal ${jsonKind(crd)} into Go value of type v1.CustomResourceDefinition`,
      };
  if (problem !== undefined) {
    throw new CrdDecodeError(
      problem.field,
      `CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ${problem.message}`,
    );
  }
}

/** The first reason `schema` cannot be decoded as a JSONSchemaProps, if any. */
export function schemaDecodeProblem(schema: unknown): Problem | undefined {
  if (!isObject(schema)) {
    return {
      field: '',
      message: `json: cannot unmarshal ${jsonKind(schema)} into Go value of type v1.JSONSchemaProps`,
    };
  }
  return check(schema, SCHEMA, '', 'JSONSchemaProps', 0);
}
