/**
 * The JSON types of the keywords a structural schema keeps, as apiextensions' JSONSchemaProps
 * decodes them: a keyword of the wrong type would make kube-apiserver refuse the whole CRD as
 * undecodable, so `defineKind` refuses it first, naming the keyword.
 */
type Check = (value: unknown) => boolean;

const string: Check = (v) => typeof v === 'string';
const number: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const count: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const boolean: Check = (v) => typeof v === 'boolean';
const anything: Check = () => true;
const strings: Check = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const RULE_KEYS: Readonly<Record<string, Check>> = {
  rule: string,
  message: string,
  messageExpression: string,
  reason: string,
  fieldPath: string,
  optionalOldSelf: boolean,
};

const rules: Check = (v) =>
  Array.isArray(v) &&
  v.every(
    (r) =>
      isObject(r) &&
      typeof r.rule === 'string' &&
      Object.entries(r).every(([k, x]) => RULE_KEYS[k] !== undefined && (RULE_KEYS[k] as Check)(x)),
  );

/** Each kept keyword and what its value must be, in words for the error. */
export const KEYWORD_TYPES: Readonly<Record<string, readonly [Check, string]>> = {
  description: [string, 'a string'],
  title: [string, 'a string'],
  format: [string, 'a string'],
  pattern: [string, 'a string (a regular expression)'],
  default: [anything, 'any JSON value'],
  example: [anything, 'any JSON value'],
  externalDocs: [
    (v) =>
      isObject(v) && Object.entries(v).every(([k, x]) => (k === 'description' || k === 'url') && string(x)),
    'an object with description and url strings',
  ],
  maximum: [number, 'a number'],
  minimum: [number, 'a number'],
  multipleOf: [(v) => number(v) && (v as number) > 0, 'a positive number'],
  maxLength: [count, 'a non-negative integer'],
  minLength: [count, 'a non-negative integer'],
  maxItems: [count, 'a non-negative integer'],
  minItems: [count, 'a non-negative integer'],
  maxProperties: [count, 'a non-negative integer'],
  minProperties: [count, 'a non-negative integer'],
  nullable: [boolean, 'a boolean'],
  'x-kubernetes-embedded-resource': [boolean, 'a boolean'],
  'x-kubernetes-preserve-unknown-fields': [boolean, 'a boolean'],
  'x-kubernetes-list-map-keys': [strings, 'a list of property names'],
  'x-kubernetes-list-type': [(v) => v === 'atomic' || v === 'set' || v === 'map', "'atomic', 'set' or 'map'"],
  'x-kubernetes-map-type': [(v) => v === 'atomic' || v === 'granular', "'atomic' or 'granular'"],
  'x-kubernetes-validations': [
    rules,
    'a list of { rule, message?, messageExpression?, reason?, fieldPath?, optionalOldSelf? }',
  ],
};

/** JSONSchemaProps' JSON keys in Go field order: the order kube-apiserver writes them back in. */
const GO_ORDER = [
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'externalDocs',
  'example',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];

/** The same schema with its keys in {@link GO_ORDER}. */
export function ordered<T extends object>(schema: T): T {
  const out: Record<string, unknown> = {};
  for (const key of GO_ORDER) if (key in schema) out[key] = (schema as Record<string, unknown>)[key];
  return out as T;
}
