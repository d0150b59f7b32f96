/**
 * Validation of custom resources against their CRD's structural schema, with kube-apiserver's
 * field paths and messages.
 */
import type { StatusCause } from '@converge/runtime';
import { invalid, notSupported, required, tooLong, tooMany, typeInvalid } from './field-errors.ts';
import { goJson } from './go-format.ts';
import { assertJson, isObject, own } from './json.ts';
import { validateListTypes } from './list-type.ts';
import { validateEmbeddedResource } from './object-meta.ts';
import { type OpenApiError, validateValue } from './openapi-validator.ts';
import { compileSchema, fieldSchema, type SchemaNode } from './schema.ts';
import type { StructuralSchema } from './types.ts';

function fieldOf(error: OpenApiError, prefix: string | undefined): string {
  if (error.kind === 'plain' || error.path === '' || error.path === '.') return prefix ?? '<nil>';
  const name = error.path.startsWith('.') ? error.path.slice(1) : error.path;
  return prefix === undefined ? name : `${prefix}.${name}`;
}

function causeOf(error: OpenApiError, field: string): StatusCause {
  switch (error.kind) {
    case 'required':
      return required(field);
    case 'enum':
      return notSupported(
        field,
        error.value,
        error.values.map((v) => (typeof v === 'string' ? v : goJson(v))),
      );
    case 'tooLong':
      return tooLong(field, error.max);
    case 'tooMany':
      return tooMany(field, error.actual, error.max);
    case 'type':
      return typeInvalid(field, error.value, error.message);
    case 'invalid':
      return invalid(field, error.value ?? '', error.message);
    case 'plain':
      return invalid(field, '', error.message);
  }
}

/** kube's `kubeOpenAPIResultToFieldErrors`: validator errors as StatusCauses under `prefix`. */
export function toCauses(errors: readonly OpenApiError[], prefix: string | undefined): StatusCause[] {
  return errors.map((error) => causeOf(error, fieldOf(error, prefix)));
}

/** Schema validation of `value` against a compiled node, reported under `prefix` (kube's fldPath). */
export function schemaCauses(node: SchemaNode, value: unknown, prefix: string | undefined): StatusCause[] {
  return toCauses(validateValue(node, value, '').errors, prefix);
}

function walkEmbedded(node: SchemaNode | undefined, value: unknown, at: string, out: StatusCause[]): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      walkEmbedded(node.items, item, `${at}[${i}]`, out);
    });
    return;
  }
  if (!isObject(value)) return;
  if (node.embeddedResource) validateEmbeddedResource(value, at, out);
  for (const [key, item] of Object.entries(value)) {
    const prop = node.properties?.get(key);
    if (prop !== undefined) walkEmbedded(prop, item, at === '' ? key : `${at}.${key}`, out);
    else if (typeof node.additionalProperties === 'object')
      walkEmbedded(node.additionalProperties, item, `${at}[${key}]`, out);
  }
}

/**
 * Validates a custom resource against its version's schema, as kube-apiserver's create and update
 * do: OpenAPI v3 value validation (type, format, enum, bounds, lengths, pattern, items,
 * properties, required, nullable, int-or-string, allOf/anyOf/oneOf/not), then the TypeMeta and
 * ObjectMeta of `x-kubernetes-embedded-resource` values, then `x-kubernetes-list-type` set/map
 * uniqueness. Returns the causes of a 422 (empty when valid); `x-kubernetes-validations` (CEL) rules
 * are not evaluated. Run it after {@link pruneUnknownFields} and {@link applyDefaults}. The root
 * `metadata`, `apiVersion` and `kind` are the server's to check.
 *
 * Throws {@link CrdSchemaError} for a malformed schema and {@link CrdNotJsonError} for non-JSON input.
 *
 * @example
 * validateCustomResource(schema, { spec: { replicas: 'three' } });
 * // [{ reason: 'FieldValueTypeInvalid', field: 'spec.replicas',
 * //    message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"' }]
 */
export function validateCustomResource(schema: StructuralSchema, object: unknown): StatusCause[] {
  const node = compileSchema(schema);
  assertJson(object);
  const causes = schemaCauses(node, object, undefined);
  walkEmbedded(node, object, '', causes);
  validateListTypes(node, object, causes);
  return causes;
}

/**
 * Validates an update of the `status` subresource as kube-apiserver does: only `.status`, against
 * `properties.status`, with field paths under `status` (messages keep the path relative to status,
 * as kube prints them: `status.replicas: Invalid value: "string": replicas in body must be …`).
 *
 * @example
 * validateCustomResourceStatus(schema, { status: { replicas: -1 } });
 */
export function validateCustomResourceStatus(schema: StructuralSchema, object: unknown): StatusCause[] {
  const node = compileSchema(schema);
  assertJson(object);
  if (!isObject(object) || !Object.hasOwn(object, 'status')) return [];
  const statusNode = fieldSchema(node, 'status');
  if (statusNode === undefined) return [];
  return schemaCauses(statusNode, own(object, 'status'), 'status');
}
