/**
 * The structural-schema rules of apiextensions (`ValidateStructural`): every specified field has a
 * type, value validations inside `allOf`/`anyOf`/`oneOf`/`not` carry no types, defaults or
 * extensions, `metadata` may only restrict `name`/`generateName`, embedded resources are objects.
 * Causes come back sorted, as kube sorts them.
 */
import type { StatusCause } from '@converge/runtime';
import { causeText, forbidden, invalid, path, required } from './field-errors.ts';
import { isObject, type JsonObject, jsonEqual, own } from './json.ts';
import { compilePattern } from './pattern.ts';

type Level = 'root' | 'item' | 'field';

const VALUE_VALIDATION_KEYS = [
  'format',
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
  'allOf',
  'oneOf',
  'anyOf',
  'not',
];

/** Present and not Go's zero value. */
function set(s: JsonObject, key: string): boolean {
  const v = own(s, key);
  return v !== undefined && v !== null && v !== false && v !== '';
}

function str(s: JsonObject, key: string): string {
  const v = own(s, key);
  return typeof v === 'string' ? v : '';
}

function objects(s: JsonObject, key: string): JsonObject[] {
  const v = own(s, key);
  return Array.isArray(v) ? v.filter(isObject) : [];
}

function props(s: JsonObject): [string, JsonObject][] {
  const v = own(s, 'properties');
  return isObject(v)
    ? Object.entries(v).map(([k, p]): [string, JsonObject] => [k, isObject(p) ? p : {}])
    : [];
}

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

function isIntOrStringAnyOf(s: JsonObject): boolean {
  return jsonEqual(own(s, 'anyOf'), INT_OR_STRING_ANY_OF);
}

function isIntOrStringAllOf(s: JsonObject): boolean {
  const first = objects(s, 'allOf')[0];
  return first !== undefined && jsonEqual(own(first, 'anyOf'), INT_OR_STRING_ANY_OF);
}

function valueValidation(
  v: JsonObject,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  at: string,
  out: StatusCause[],
): void {
  for (const key of ['anyOf', 'allOf', 'oneOf']) {
    if (key === 'anyOf' && skipAnyOf) continue;
    for (const [i, n] of objects(v, key).entries()) {
      nested(n, key === 'allOf' && skipFirstAllOfAnyOf && i === 0, path.index(path.child(at, key), i), out);
    }
  }
  const not = own(v, 'not');
  if (isObject(not)) nested(not, false, path.child(at, 'not'), out);
  const pattern = str(v, 'pattern');
  if (pattern !== '') {
    const re = compilePattern(pattern);
    if (re instanceof Error)
      out.push(
        invalid(
          path.child(at, 'pattern'),
          pattern,
          `must be a valid regular expression, but isn't: ${re.message}`,
        ),
      );
  }
}

const NESTED_FORBIDDEN: ReadonlyArray<[string, string]> = [
  ['type', 'must be empty to be structural'],
  ['additionalProperties', 'must be undefined to be structural'],
  ['default', 'must be undefined to be structural'],
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
  ['nullable', 'must be false to be structural'],
  ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', 'must be false to be structural'],
  ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
  ['x-kubernetes-validations', 'must be empty to be structural'],
];

function nested(v: JsonObject, skipAnyOf: boolean, at: string, out: StatusCause[]): void {
  valueValidation(v, skipAnyOf, false, at, out);
  const items = own(v, 'items');
  if (isObject(items)) nested(items, false, path.child(at, 'items'), out);
  for (const [k, p] of props(v)) nested(p, false, path.key(path.child(at, 'properties'), k), out);
  for (const [key, detail] of NESTED_FORBIDDEN) {
    const value = own(v, key);
    const present =
      key === 'x-kubernetes-list-map-keys' || key === 'x-kubernetes-validations'
        ? Array.isArray(value) && value.length > 0
        : key === 'x-kubernetes-list-type' ||
            key === 'x-kubernetes-map-type' ||
            key === 'default' ||
            key === 'additionalProperties'
          ? value !== undefined && value !== null
          : set(v, key);
    if (present) out.push(forbidden(path.child(at, key), detail));
  }
  if (props(v).some(([k]) => k === 'metadata')) {
    out.push(
      forbidden(
        path.key(path.child(at, 'properties'), 'metadata'),
        'must not be specified in a nested context',
      ),
    );
  }
}

function metadataInvariants(
  m: JsonObject,
  checkMetadata: boolean,
  level: Level,
  at: string,
  out: StatusCause[],
): void {
  const type = str(m, 'type');
  if (checkMetadata && type !== 'object') out.push(invalid(path.child(at, 'type'), type, 'must be object'));
  if (level !== 'root') return;
  const names = props(m).map(([k]) => k);
  const onlyNames = names.length > 0 && names.every((k) => k === 'name' || k === 'generateName');
  const allowed = new Set(['type', 'default', ...(onlyNames ? ['properties'] : [])]);
  const extra = Object.keys(m).some(
    (k) => !allowed.has(k) && (set(m, k) || (k === 'properties' && isObject(own(m, k)))),
  );
  if (extra) {
    out.push(
      forbidden(
        at,
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  }
}

function invariants(s: JsonObject, level: Level, at: string, out: StatusCause[]): void {
  const type = str(s, 'type');
  const items = own(s, 'items');
  if (type === 'array' && !isObject(items)) out.push(required(path.child(at, 'items'), 'must be specified'));
  if (isObject(items)) invariants(items, 'item', path.child(at, 'items'), out);
  for (const [k, p] of props(s)) invariants(p, 'field', path.key(path.child(at, 'properties'), k), out);
  const additional = own(s, 'additionalProperties');
  if (additional !== undefined && additional !== null) {
    if (level === 'root')
      out.push(forbidden(path.child(at, 'additionalProperties'), 'must not be used at the root'));
    if (isObject(additional)) invariants(additional, 'field', path.child(at, 'additionalProperties'), out);
  }
  const intOrString = own(s, 'x-kubernetes-int-or-string') === true;
  const preserve = own(s, 'x-kubernetes-preserve-unknown-fields') === true;
  const embedded = own(s, 'x-kubernetes-embedded-resource') === true;
  if (intOrString && preserve) {
    out.push(
      invalid(
        path.child(at, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (intOrString && embedded) {
    out.push(
      invalid(
        path.child(at, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (VALUE_VALIDATION_KEYS.some((k) => own(s, k) !== undefined)) {
    valueValidation(s, isIntOrStringAnyOf(s), isIntOrStringAllOf(s), at, out);
  }
  const checkMetadata = level === 'root' || embedded;
  if (embedded && type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    out.push(
      type === '' ? required(path.child(at, 'type'), detail) : invalid(path.child(at, 'type'), type, detail),
    );
  } else if (type === '' && !intOrString && !preserve) {
    const where = {
      root: 'at the root',
      item: 'for specified array items',
      field: 'for specified object fields',
    }[level];
    out.push(required(path.child(at, 'type'), `must not be empty ${where}`));
  }
  if (embedded && additional !== undefined && additional !== null) {
    out.push(
      forbidden(
        path.child(at, 'additionalProperties'),
        'must not be used if x-kubernetes-embedded-resource is set',
      ),
    );
  }
  if (level === 'root' && type !== '' && type !== 'object')
    out.push(invalid(path.child(at, 'type'), type, 'must be object at the root'));
  for (const [k, p] of props(s)) {
    const propPath = path.key(path.child(at, 'properties'), k);
    if ((k === 'kind' || k === 'apiVersion') && checkMetadata && str(p, 'type') !== 'string') {
      out.push(invalid(path.child(propPath, 'type'), str(p, 'type'), 'must be string'));
    }
    if (k === 'metadata') metadataInvariants(p, checkMetadata, level, propPath, out);
  }
  if (embedded && !preserve && props(s).length === 0) {
    out.push(
      required(
        path.child(at, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
}

/** Value validations in junctors must only restrict what the structural part declares (root only, as kube). */
function completeness(
  v: JsonObject,
  s: JsonObject | undefined,
  sPath: string,
  vPath: string,
  out: StatusCause[],
): void {
  const junctors: [JsonObject, string][] = [];
  const not = own(v, 'not');
  if (isObject(not)) junctors.push([not, path.child(vPath, 'not')]);
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    for (const [i, n] of objects(v, key).entries()) junctors.push([n, path.index(path.child(vPath, key), i)]);
  }
  for (const [n, nPath] of junctors) nestedCompleteness(n, s, sPath, nPath, out);
}

function nestedCompleteness(
  v: JsonObject,
  s: JsonObject | undefined,
  sPath: string,
  vPath: string,
  out: StatusCause[],
): void {
  if (s === undefined) {
    out.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completeness(v, s, sPath, vPath, out);
  const vItems = own(v, 'items');
  const sItems = own(s, 'items');
  if (isObject(vItems)) {
    nestedCompleteness(
      vItems,
      isObject(sItems) ? sItems : undefined,
      path.child(sPath, 'items'),
      path.child(vPath, 'items'),
      out,
    );
  }
  const sProps = new Map(props(s));
  for (const [k, p] of props(v)) {
    const sProp = sProps.get(k);
    const sPropPath = path.key(path.child(sPath, 'properties'), k);
    const vPropPath = path.key(path.child(vPath, 'properties'), k);
    if (sProp === undefined) out.push(required(sPropPath, `because it is defined in ${vPropPath}`));
    else nestedCompleteness(p, sProp, sPropPath, vPropPath, out);
  }
}

/** `ValidateStructural` of a root schema at `at` (e.g. `spec.validation.openAPIV3Schema`), sorted. */
export function validateStructural(schema: JsonObject, at: string): StatusCause[] {
  const out: StatusCause[] = [];
  invariants(schema, 'root', at, out);
  completeness(schema, schema, at, at, out);
  return out.sort((a, b) => (causeText(a) < causeText(b) ? -1 : causeText(a) > causeText(b) ? 1 : 0));
}

/** True if kube can build a structural schema at all (no `items` arrays, no preserve-unknown-fields false). */
export function isConvertible(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isConvertible);
  if (!isObject(schema)) return true;
  if (Array.isArray(own(schema, 'items'))) return false;
  if (own(schema, 'x-kubernetes-preserve-unknown-fields') === false) return false;
  return Object.entries(schema).every(
    ([k, v]) => k === 'default' || k === 'example' || k === 'enum' || isConvertible(v),
  );
}
