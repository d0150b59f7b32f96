/**
 * ObjectMeta inside custom resources: the fields a metadata object may carry (everything else is
 * pruned, as decoding into Go's `metav1.ObjectMeta` drops it), and the checks kube-apiserver runs on
 * the TypeMeta and ObjectMeta of resources embedded with `x-kubernetes-embedded-resource`.
 */
import type { StatusCause } from '@converge/runtime';
import { invalid, path, required, tooLong } from './field-errors.ts';
import { defineKey, isObject, type JsonObject, own } from './json.ts';
import {
  byteLength,
  isDns1035Label,
  isDns1123Label,
  isPathSegmentName,
  isQualifiedName,
  isValidLabelValue,
} from './names.ts';

type Shape =
  | 'string'
  | 'int64'
  | 'bool'
  | 'time'
  | 'stringMap'
  | 'strings'
  | 'any'
  | { readonly list: Readonly<Record<string, Shape>> };

const OWNER_REFERENCE: Record<string, Shape> = {
  apiVersion: 'string',
  kind: 'string',
  name: 'string',
  uid: 'string',
  controller: 'bool',
  blockOwnerDeletion: 'bool',
};

const MANAGED_FIELDS_ENTRY: Record<string, Shape> = {
  manager: 'string',
  operation: 'string',
  apiVersion: 'string',
  time: 'time',
  fieldsType: 'string',
  fieldsV1: 'any',
  subresource: 'string',
};

/** The JSON fields of `metav1.ObjectMeta` and their shapes. */
const OBJECT_META: Readonly<Record<string, Shape>> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'time',
  deletionTimestamp: 'time',
  deletionGracePeriodSeconds: 'int64',
  labels: 'stringMap',
  annotations: 'stringMap',
  ownerReferences: { list: OWNER_REFERENCE },
  finalizers: 'strings',
  managedFields: { list: MANAGED_FIELDS_ENTRY },
};

function fieldOf(fields: Readonly<Record<string, Shape>>, key: string): Shape | undefined {
  return Object.hasOwn(fields, key) ? fields[key] : undefined;
}

/**
 * Returns `meta` without the keys `metav1.ObjectMeta` does not have (also inside ownerReferences
 * and managedFields entries), recording each as `<prefix>.key` in `pruned`. Non-objects pass through.
 */
export function pruneObjectMeta(meta: unknown, prefix: string, pruned: string[]): unknown {
  if (!isObject(meta)) return meta;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(meta)) {
    const shape = fieldOf(OBJECT_META, key);
    if (shape === undefined) {
      pruned.push(`${prefix}.${key}`);
      continue;
    }
    if (typeof shape === 'object' && Array.isArray(value)) {
      defineKey(
        out,
        key,
        value.map((item, i) => pruneEntry(item, shape.list, `${prefix}.${key}[${i}]`, pruned)),
      );
    } else {
      defineKey(out, key, value);
    }
  }
  return out;
}

function pruneEntry(
  item: unknown,
  fields: Readonly<Record<string, Shape>>,
  where: string,
  pruned: string[],
): unknown {
  if (!isObject(item)) return item;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(item)) {
    if (fieldOf(fields, key) === undefined) pruned.push(`${where}.${key}`);
    else defineKey(out, key, value);
  }
  return out;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (isObject(value)) return 'object';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/** The error Go's decoder gives for `value` in an ObjectMeta field, if any. */
function shapeError(value: unknown, shape: Shape, where: string): string | undefined {
  if (value === null || shape === 'any') return undefined;
  const mismatch = (goType: string): string =>
    `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${where} of type ${goType}`;
  switch (shape) {
    case 'string':
      return typeof value === 'string' ? undefined : mismatch('string');
    case 'bool':
      return typeof value === 'boolean' ? undefined : mismatch('bool');
    case 'int64':
      if (typeof value !== 'number') return mismatch('int64');
      return Number.isInteger(value)
        ? undefined
        : `json: cannot unmarshal number ${value} into Go struct field ${where} of type int64`;
    case 'time':
      if (typeof value !== 'string') return mismatch('string');
      return RFC3339.test(value)
        ? undefined
        : `parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(value)} as "2006"`;
    case 'stringMap':
    case 'strings': {
      if (shape === 'stringMap' ? !isObject(value) : !Array.isArray(value)) {
        return mismatch(shape === 'stringMap' ? 'map[string]string' : '[]string');
      }
      const bad = Object.values(value as object).find((v) => v !== null && typeof v !== 'string');
      return bad === undefined
        ? undefined
        : `json: cannot unmarshal ${jsonKind(bad)} into Go struct field ${where} of type string`;
    }
    default:
      if (!Array.isArray(value)) return mismatch('[]v1.Entry');
      for (const item of value) {
        if (item === null) continue;
        if (!isObject(item)) return mismatch('v1.Entry');
        for (const [k, v] of Object.entries(item)) {
          const inner = fieldOf(shape.list, k);
          const problem = inner === undefined ? undefined : shapeError(v, inner, `${where}.${k}`);
          if (problem !== undefined) return problem;
        }
      }
      return undefined;
  }
}

function metaDecodeError(meta: unknown): string | undefined {
  if (!isObject(meta)) return `json: cannot unmarshal ${jsonKind(meta)} into Go value of type v1.ObjectMeta`;
  for (const [key, value] of Object.entries(meta)) {
    const shape = fieldOf(OBJECT_META, key);
    const problem = shape === undefined ? undefined : shapeError(value, shape, `ObjectMeta.${key}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function stringMap(meta: JsonObject, key: string): ReadonlyArray<[string, string]> {
  const value = own(meta, key);
  return isObject(value)
    ? (Object.entries(value).filter(([, v]) => typeof v === 'string') as [string, string][])
    : [];
}

/** ObjectMeta checks of an embedded resource (names are path segments, as kube uses for them). */
function validateEmbeddedMeta(meta: JsonObject, where: string, out: StatusCause[]): void {
  const name = own(meta, 'name');
  for (const msg of isPathSegmentName(typeof name === 'string' && name !== '' ? name : 'fakename', false)) {
    out.push(invalid(path.child(where, 'name'), name, msg));
  }
  const generateName = own(meta, 'generateName');
  if (typeof generateName === 'string' && generateName !== '') {
    for (const msg of isPathSegmentName(generateName, true))
      out.push(invalid(path.child(where, 'generateName'), generateName, msg));
  }
  const namespace = own(meta, 'namespace');
  if (typeof namespace === 'string' && namespace !== '') {
    for (const msg of isDns1123Label(namespace))
      out.push(invalid(path.child(where, 'namespace'), namespace, msg));
  }
  const generation = own(meta, 'generation');
  if (typeof generation === 'number' && generation < 0) {
    out.push(invalid(path.child(where, 'generation'), generation, 'must be greater than or equal to 0'));
  }
  const labels = path.child(where, 'labels');
  for (const [k, v] of stringMap(meta, 'labels')) {
    for (const msg of isQualifiedName(k)) out.push(invalid(labels, k, msg));
    for (const msg of isValidLabelValue(v)) out.push(invalid(path.key(labels, k), v, msg));
  }
  const annotations = path.child(where, 'annotations');
  let total = 0;
  for (const [k, v] of stringMap(meta, 'annotations')) {
    for (const msg of isQualifiedName(k.toLowerCase())) out.push(invalid(annotations, k, msg));
    total += byteLength(k) + byteLength(v);
  }
  if (total > 256 * 1024) out.push(tooLong(annotations, 256 * 1024));
}

/** kube's checks of the TypeMeta and ObjectMeta of an embedded resource at `where`. */
export function validateEmbeddedResource(object: JsonObject, where: string, out: StatusCause[]): void {
  if (!Object.hasOwn(object, 'apiVersion')) out.push(required(path.child(where, 'apiVersion')));
  if (!Object.hasOwn(object, 'kind')) out.push(required(path.child(where, 'kind')));
  for (const [key, value] of Object.entries(object)) {
    const at = path.child(where, key);
    if (key === 'apiVersion') {
      if (typeof value !== 'string') out.push(invalid(at, value, 'must be a string'));
      else if (value === '') out.push(invalid(at, value, 'must not be empty'));
      else if (value !== '/' && value.split('/').length > 2)
        out.push(invalid(at, value, `unexpected GroupVersion string: ${value}`));
    } else if (key === 'kind') {
      if (typeof value !== 'string') out.push(invalid(at, value, 'must be a string'));
      else if (value === '') out.push(invalid(at, value, 'must not be empty'));
      else {
        const errs = isDns1035Label(value.toLowerCase());
        if (errs.length > 0)
          out.push(invalid(at, value, `may have mixed case, but should otherwise match: ${errs.join(',')}`));
      }
    } else if (key === 'metadata') {
      const problem = metaDecodeError(value);
      if (problem !== undefined) out.push(invalid(at, value, problem));
      else if (isObject(value)) validateEmbeddedMeta(value, at, out);
    }
  }
}
