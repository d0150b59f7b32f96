import { InvalidError, type ResourceType, type StatusCause } from '../../../backend/index.ts';
import type { KubeObject } from '../../../object/index.ts';
import { isJsonObject } from './json.ts';
import { isLabelValue, isQualifiedName } from './selectors.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Collects field errors and throws them as one InvalidError. */
export class FieldErrors {
  readonly #causes: StatusCause[] = [];

  invalid(field: string, message: string): void {
    this.#causes.push({ reason: 'FieldValueInvalid', field, message: `${field}: Invalid value: ${message}` });
  }

  required(field: string, message: string): void {
    this.#causes.push({
      reason: 'FieldValueRequired',
      field,
      message: `${field}: Required value: ${message}`,
    });
  }

  forbidden(field: string, message: string): void {
    this.#causes.push({ reason: 'FieldValueForbidden', field, message: `${field}: Forbidden: ${message}` });
  }

  /** Throws if any error was recorded. */
  throwIfAny(type: ResourceType, name: string | undefined): void {
    if (this.#causes.length === 0) return;
    const what = `${type.kind} ${JSON.stringify(name ?? '')}`;
    throw new InvalidError(`${what} is invalid: ${this.#causes.map((c) => c.message).join(', ')}`, {
      details: {
        kind: type.kind,
        group: type.group,
        ...(name === undefined ? {} : { name }),
        causes: this.#causes,
      },
    });
  }
}

function checkStringMap(errors: FieldErrors, field: string, value: unknown, values: boolean): void {
  if (value === undefined) return;
  if (!isJsonObject(value)) {
    errors.invalid(field, 'must be a map of strings');
    return;
  }
  for (const [key, entry] of Object.entries(value)) {
    if (!isQualifiedName(key)) errors.invalid(`${field}[${JSON.stringify(key)}]`, 'must be a qualified name');
    if (typeof entry !== 'string' || (values && !isLabelValue(entry))) {
      errors.invalid(
        `${field}[${JSON.stringify(key)}]`,
        values ? 'must be a valid label value' : 'must be a string',
      );
    }
  }
}

/** Validates the metadata every object shares (ObjectMeta rules), recording field errors. */
export function validateMeta(errors: FieldErrors, object: KubeObject, type: ResourceType): void {
  const meta = object.metadata;
  const name = meta.name;
  if (name === undefined || name === '') {
    errors.required('metadata.name', 'name or generateName is required');
  } else if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    errors.invalid('metadata.name', `${JSON.stringify(name)}: a lowercase RFC 1123 subdomain is required`);
  }
  if (type.namespaced) {
    const ns = meta.namespace;
    if (ns === undefined || ns === '') errors.required('metadata.namespace', 'the kind is namespaced');
    else if (ns.length > 63 || !DNS_LABEL.test(ns))
      errors.invalid('metadata.namespace', 'must be a DNS label');
  }
  checkStringMap(errors, 'metadata.labels', meta.labels, true);
  checkStringMap(errors, 'metadata.annotations', meta.annotations, false);
  const finalizers: unknown = meta.finalizers;
  if (finalizers !== undefined) {
    if (!Array.isArray(finalizers)) errors.invalid('metadata.finalizers', 'must be a list of names');
    else {
      finalizers.forEach((f: unknown, i) => {
        if (typeof f !== 'string' || !isQualifiedName(f)) {
          errors.invalid(`metadata.finalizers[${i}]`, 'must be a qualified name');
        }
      });
    }
  }
  const refs: unknown = meta.ownerReferences;
  if (refs !== undefined) {
    if (!Array.isArray(refs)) errors.invalid('metadata.ownerReferences', 'must be a list');
    else {
      refs.forEach((ref: unknown, i) => {
        for (const field of ['apiVersion', 'kind', 'name', 'uid'] as const) {
          const value = isJsonObject(ref) ? ref[field] : undefined;
          if (typeof value !== 'string' || value === '') {
            errors.required(`metadata.ownerReferences[${i}].${field}`, 'must be set');
          }
        }
      });
      const controllers = refs.filter((ref: unknown) => isJsonObject(ref) && ref.controller === true);
      if (controllers.length > 1) {
        errors.invalid('metadata.ownerReferences', 'only one reference can have controller set to true');
      }
    }
  }
}

/** Throws the InvalidError of an object whose metadata is not an object. */
export function requireMetadata(object: unknown, type: ResourceType): asserts object is KubeObject {
  if (!isJsonObject(object) || !isJsonObject(object.metadata)) {
    const errors = new FieldErrors();
    errors.required('metadata', 'an object with metadata is required');
    errors.throwIfAny(type, undefined);
  }
}
