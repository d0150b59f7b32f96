import { BadRequestError, type ResourceType, type StatusCause } from '@converge/runtime';
import { fieldError } from './errors.ts';
import type { JsonObject } from './json.ts';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** Problems of an RFC 1123 subdomain (object names), as detail strings. */
export function subdomainProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > 253) out.push('must be no more than 253 characters');
  if (!SUBDOMAIN.test(value)) out.push(SUBDOMAIN_MSG);
  return out;
}

/** Problems of a path segment name (RBAC names such as `system:controller:x`). */
export function pathSegmentProblems(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  return ['/', '%'].filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`);
}

/** Problems of an RFC 1123 label (namespaces, Namespace names). */
export function labelProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL.test(value)) out.push(LABEL_MSG);
  return out;
}

/** Problems of a qualified name (`[prefix/]name`: label keys, annotation keys, finalizers). */
export function qualifiedNameProblems(value: string): string[] {
  const slash = value.indexOf('/');
  const name = slash < 0 ? value : value.slice(slash + 1);
  const out: string[] = [];
  if (slash >= 0) {
    const prefix = value.slice(0, slash);
    if (prefix === '') out.push('prefix part must be non-empty');
    else for (const p of subdomainProblems(prefix)) out.push(`prefix part ${p}`);
  }
  if (name === '') out.push('name part must be non-empty');
  else {
    if (name.length > 63) out.push('name part must be no more than 63 characters');
    if (!NAME_PART.test(name)) out.push(NAME_PART_MSG);
  }
  return out;
}

function bad(field: string, expected: string): BadRequestError {
  return new BadRequestError(`unable to decode the object: ${field} must be ${expected}`);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringMap(field: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) throw bad(field, 'an object of strings');
  for (const [k, v] of Object.entries(value))
    if (typeof v !== 'string') throw bad(`${field}[${k}]`, 'a string');
}

/**
 * Checks that well-known fields have their JSON types (what decoding into Go structs would reject):
 * a mistyped field is a {@link BadRequestError}. `null` maps and lists read as absent.
 */
export function checkShape(object: JsonObject): void {
  for (const field of ['apiVersion', 'kind'] as const) {
    if (object[field] !== undefined && typeof object[field] !== 'string') throw bad(field, 'a string');
  }
  const meta = object.metadata;
  if (meta === undefined || meta === null) {
    object.metadata = {};
    return;
  }
  if (!isObject(meta)) throw bad('metadata', 'an object');
  for (const field of [
    'name',
    'generateName',
    'namespace',
    'uid',
    'resourceVersion',
    'creationTimestamp',
    'deletionTimestamp',
  ]) {
    if (meta[field] === null) delete meta[field];
    if (meta[field] !== undefined && typeof meta[field] !== 'string')
      throw bad(`metadata.${field}`, 'a string');
  }
  for (const field of ['generation', 'deletionGracePeriodSeconds']) {
    if (meta[field] === null) delete meta[field];
    if (meta[field] !== undefined && !Number.isSafeInteger(meta[field]))
      throw bad(`metadata.${field}`, 'an integer');
  }
  for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences', 'managedFields']) {
    if (meta[field] === null) delete meta[field];
  }
  stringMap('metadata.labels', meta.labels);
  stringMap('metadata.annotations', meta.annotations);
  const finalizers = meta.finalizers;
  if (finalizers !== undefined) {
    if (!Array.isArray(finalizers)) throw bad('metadata.finalizers', 'an array of strings');
    finalizers.forEach((f, i) => {
      if (typeof f !== 'string') throw bad(`metadata.finalizers[${i}]`, 'a string');
    });
  }
  if (meta.managedFields !== undefined && !Array.isArray(meta.managedFields)) {
    throw bad('metadata.managedFields', 'an array');
  }
  const refs = meta.ownerReferences;
  if (refs !== undefined) {
    if (!Array.isArray(refs)) throw bad('metadata.ownerReferences', 'an array of owner references');
    refs.forEach((ref: unknown, i) => {
      const at = `metadata.ownerReferences[${i}]`;
      if (!isObject(ref)) throw bad(at, 'an object');
      for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
        if (ref[f] !== undefined && typeof ref[f] !== 'string') throw bad(`${at}.${f}`, 'a string');
      }
      for (const f of ['controller', 'blockOwnerDeletion']) {
        if (ref[f] === null) delete ref[f];
        if (ref[f] !== undefined && typeof ref[f] !== 'boolean') throw bad(`${at}.${f}`, 'a boolean');
      }
    });
  }
}

/**
 * Validates object metadata as `ValidateObjectMeta` does: name (or generateName on create),
 * namespace scope, labels, annotations, finalizers and owner references. Returns field causes.
 */
export function validateMeta(type: ResourceType, object: JsonObject, creating: boolean): StatusCause[] {
  const meta = object.metadata as JsonObject;
  const causes: StatusCause[] = [];
  const name = (meta.name as string | undefined) ?? '';
  const generateName = (meta.generateName as string | undefined) ?? '';
  if (name === '') {
    if (!creating || generateName === '') {
      causes.push(fieldError.required('metadata.name', 'name or generateName is required'));
    }
  } else {
    const isNamespace = type.group === '' && type.kind === 'Namespace';
    const problems =
      type.group === 'rbac.authorization.k8s.io'
        ? pathSegmentProblems(name)
        : isNamespace
          ? labelProblems(name)
          : subdomainProblems(name);
    for (const p of problems) {
      causes.push(fieldError.invalid('metadata.name', name, p));
    }
  }
  const namespace = (meta.namespace as string | undefined) ?? '';
  if (type.namespaced) {
    if (namespace === '') causes.push(fieldError.required('metadata.namespace'));
    else
      for (const p of labelProblems(namespace))
        causes.push(fieldError.invalid('metadata.namespace', namespace, p));
  }
  const labels = (meta.labels ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(labels)) {
    for (const p of qualifiedNameProblems(key)) causes.push(fieldError.invalid('metadata.labels', key, p));
    if (value.length > 63)
      causes.push(fieldError.invalid('metadata.labels', value, 'must be no more than 63 characters'));
    if (!LABEL_VALUE.test(value)) causes.push(fieldError.invalid('metadata.labels', value, LABEL_VALUE_MSG));
  }
  const annotations = (meta.annotations ?? {}) as Record<string, string>;
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const p of qualifiedNameProblems(key.toLowerCase())) {
      causes.push(fieldError.invalid('metadata.annotations', key, p));
    }
    bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (bytes > MAX_ANNOTATIONS_BYTES)
    causes.push(fieldError.tooLong('metadata.annotations', MAX_ANNOTATIONS_BYTES));
  const finalizers = (meta.finalizers ?? []) as string[];
  finalizers.forEach((f, i) => {
    for (const p of qualifiedNameProblems(f))
      causes.push(fieldError.invalid(`metadata.finalizers[${i}]`, f, p));
  });
  causes.push(...validateOwnerReferences(meta.ownerReferences as JsonObject[] | undefined));
  return causes;
}

function validateOwnerReferences(refs: readonly JsonObject[] | undefined): StatusCause[] {
  if (refs === undefined) return [];
  const causes: StatusCause[] = [];
  let controller = '';
  refs.forEach((ref, i) => {
    const at = `metadata.ownerReferences[${i}]`;
    const checks: [string, string][] = [
      ['apiVersion', 'version must not be empty'],
      ['kind', 'kind must not be empty'],
      ['name', 'name must not be empty'],
      ['uid', 'uid must not be empty'],
    ];
    for (const [field, detail] of checks) {
      const value = (ref[field] as string | undefined) ?? '';
      if (value === '') causes.push(fieldError.invalid(`${at}.${field}`, value, detail));
    }
    if (ref.controller !== true) return;
    const current = `${String(ref.kind)}/${String(ref.name)}`;
    if (controller === '') controller = current;
    else {
      causes.push(
        fieldError.invalid(
          'metadata.ownerReferences',
          refs.map((r) => `${String(r.kind)}/${String(r.name)}`).join(', '),
          `Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${current}`,
        ),
      );
    }
  });
  return causes;
}
