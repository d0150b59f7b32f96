/**
 * apiextensions' `validateCustomResourceDefinitionValidation`: the checks of one
 * `{ openAPIV3Schema }` block (what the root may hold with the status subresource, no nullable
 * root, structural rules, valid and pruned defaults, the OpenAPI subset).
 */
import type { StatusCause } from '@converge/runtime';
import { validateDefaults } from './default-validation.ts';
import { forbidden, GoLiteral, invalid, path } from './field-errors.ts';
import { goSyntax } from './go-format.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { validateSchemaRules } from './schema-rules.ts';
import { isConvertible, validateStructural } from './structural.ts';

/** JSON keys of JSONSchemaProps in Go field order, with their Go names. */
const GO_FIELDS: ReadonlyArray<[string, string]> = [
  ['id', 'ID'],
  ['$schema', 'Schema'],
  ['$ref', 'Ref'],
  ['description', 'Description'],
  ['type', 'Type'],
  ['format', 'Format'],
  ['title', 'Title'],
  ['default', 'Default'],
  ['maximum', 'Maximum'],
  ['exclusiveMaximum', 'ExclusiveMaximum'],
  ['minimum', 'Minimum'],
  ['exclusiveMinimum', 'ExclusiveMinimum'],
  ['maxLength', 'MaxLength'],
  ['minLength', 'MinLength'],
  ['pattern', 'Pattern'],
  ['maxItems', 'MaxItems'],
  ['minItems', 'MinItems'],
  ['uniqueItems', 'UniqueItems'],
  ['multipleOf', 'MultipleOf'],
  ['enum', 'Enum'],
  ['maxProperties', 'MaxProperties'],
  ['minProperties', 'MinProperties'],
  ['required', 'Required'],
  ['items', 'Items'],
  ['allOf', 'AllOf'],
  ['oneOf', 'OneOf'],
  ['anyOf', 'AnyOf'],
  ['not', 'Not'],
  ['properties', 'Properties'],
  ['additionalProperties', 'AdditionalProperties'],
  ['patternProperties', 'PatternProperties'],
  ['dependencies', 'Dependencies'],
  ['additionalItems', 'AdditionalItems'],
  ['definitions', 'Definitions'],
  ['externalDocs', 'ExternalDocs'],
  ['example', 'Example'],
  ['nullable', 'Nullable'],
  ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields'],
  ['x-kubernetes-embedded-resource', 'XEmbeddedResource'],
  ['x-kubernetes-int-or-string', 'XIntOrString'],
  ['x-kubernetes-list-map-keys', 'XListMapKeys'],
  ['x-kubernetes-list-type', 'XListType'],
  ['x-kubernetes-map-type', 'XMapType'],
  ['x-kubernetes-validations', 'XValidations'],
];

const ROOT_WITH_STATUS = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];

/** Go's zero value test for a decoded JSONSchemaProps field (pointer fields are set when present). */
function isZero(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (
    key === 'x-kubernetes-preserve-unknown-fields' ||
    key === 'x-kubernetes-list-type' ||
    key === 'x-kubernetes-map-type'
  )
    return false;
  return value === false || value === '';
}

function statusRootCheck(schema: JsonObject, at: string, out: StatusCause[]): void {
  for (const [key, goName] of GO_FIELDS) {
    const value = own(schema, key);
    if (isZero(key, value)) continue;
    if (goName === 'Type') {
      if (value !== 'object') {
        out.push(
          invalid(
            path.child(at, 'openAPIV3Schema.type'),
            value,
            'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
          ),
        );
        return;
      }
      continue;
    }
    if (!ROOT_WITH_STATUS.includes(goName)) {
      out.push(
        invalid(
          path.child(at, 'openAPIV3Schema'),
          new GoLiteral(goSyntax(schema)),
          `only [${ROOT_WITH_STATUS.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
        ),
      );
      return;
    }
  }
}

/**
 * Validates one `{ openAPIV3Schema }` block at `at` (`spec.validation` or `spec.versions[i].schema`).
 * The caller reports a missing schema.
 */
export function validateSchemaBlock(block: unknown, statusEnabled: boolean, at: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isObject(block)) return out;
  const schema = own(block, 'openAPIV3Schema');
  if (!isObject(schema)) return out;
  if (statusEnabled) statusRootCheck(schema, at, out);
  if (own(schema, 'nullable') === true)
    out.push(forbidden(path.child(at, 'openAPIV3Schema.nullable'), 'nullable cannot be true at the root'));
  const root = path.child(at, 'openAPIV3Schema');
  if (isConvertible(schema)) {
    const structural = validateStructural(schema, root);
    out.push(...(structural.length > 0 ? structural : validateDefaults(schema, root)));
  }
  out.push(...validateSchemaRules(schema, root));
  return out;
}
