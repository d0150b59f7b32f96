/**
 * Validation of the smaller parts of a CRD: names, printer columns, subresources, selectable
 * fields and deprecation warnings, with apiextensions' messages (conversion: conversion-validation.ts).
 */
import type { StatusCause } from '@converge/runtime';
import { duplicate, invalid, path, required, tooMany } from './field-errors.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { isDns1035Label } from './names.ts';

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function str(o: JsonObject, key: string): string {
  const v = own(o, key);
  return typeof v === 'string' ? v : '';
}

function strings(o: JsonObject, key: string): string[] {
  const v = own(o, key);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** `ValidateCustomResourceDefinitionNames` (spec.names and status.acceptedNames). */
export function validateNames(names: JsonObject, at: string, out: StatusCause[]): void {
  const check = (key: string, lower: boolean): void => {
    const value = str(names, key);
    if (value === '') return;
    const errs = isDns1035Label(lower ? value.toLowerCase() : value);
    if (errs.length === 0) return;
    const prefix = lower ? 'may have mixed case, but should otherwise match: ' : '';
    out.push(invalid(path.child(at, key), value, prefix + errs.join(',')));
  };
  check('plural', false);
  check('singular', false);
  check('kind', true);
  check('listKind', true);
  strings(names, 'shortNames').forEach((s, i) => {
    const errs = isDns1035Label(s);
    if (errs.length > 0) out.push(invalid(path.index(path.child(at, 'shortNames'), i), s, errs.join(',')));
  });
  const kind = str(names, 'kind');
  if (kind !== '' && kind === str(names, 'listKind'))
    out.push(invalid(path.child(at, 'listKind'), kind, 'kind and listKind may not be the same'));
  strings(names, 'categories').forEach((c, i) => {
    const errs = isDns1035Label(c);
    if (errs.length > 0) out.push(invalid(path.index(path.child(at, 'categories'), i), c, errs.join(',')));
  });
}

/** `validateSimpleJSONPath`. */
export function validateSimpleJsonPath(value: string, at: string, out: StatusCause[]): boolean {
  if (value === '') out.push(invalid(at, value, 'must not be empty'));
  else if (!value.startsWith('.')) out.push(invalid(at, value, 'must be a simple json path starting with .'));
  else return true;
  return false;
}

/** `ValidateCustomResourceColumnDefinition`. */
export function validateColumn(col: JsonObject, at: string, out: StatusCause[]): void {
  if (str(col, 'name') === '') out.push(required(path.child(at, 'name')));
  const type = str(col, 'type');
  const types = `must be one of ${COLUMN_TYPES.join(',')}`;
  if (type === '') out.push(required(path.child(at, 'type'), types));
  else if (!COLUMN_TYPES.includes(type)) out.push(invalid(path.child(at, 'type'), type, types));
  const format = str(col, 'format');
  if (format !== '' && !COLUMN_FORMATS.includes(format)) {
    out.push(invalid(path.child(at, 'format'), format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  }
  const jsonPath = str(col, 'jsonPath');
  if (jsonPath === '') out.push(required(path.child(at, 'JSONPath')));
  else validateSimpleJsonPath(jsonPath, path.child(at, 'JSONPath'), out);
}

/** `ValidateCustomResourceDefinitionSubresources`. */
export function validateSubresources(subresources: unknown, at: string, out: StatusCause[]): void {
  if (!isObject(subresources)) return;
  const scale = own(subresources, 'scale');
  if (!isObject(scale)) return;
  const replicas = (key: string, prefix: string, where: string): void => {
    const value = str(scale, key);
    const at2 = path.child(at, `scale.${key}`);
    if (value === '') out.push(required(at2));
    else if (validateSimpleJsonPath(value, at2, out) && !value.startsWith(prefix)) {
      out.push(invalid(at2, value, `should be a json path under ${where}`));
    }
  };
  replicas('specReplicasPath', '.spec.', '.spec');
  replicas('statusReplicasPath', '.status.', '.status');
  const selector = str(scale, 'labelSelectorPath');
  const at3 = path.child(at, 'scale.labelSelectorPath');
  if (
    selector !== '' &&
    validateSimpleJsonPath(selector, at3, out) &&
    !selector.startsWith('.spec.') &&
    !selector.startsWith('.status.')
  ) {
    out.push(invalid(at3, selector, 'should be a json path under either .spec or .status'));
  }
}

/** cel's `ValidFieldPath`: resolves `.a.b` / `['a']` in a schema; an Error says why not. */
export function resolveFieldPath(
  jsonPath: string,
  schema: JsonObject,
  allowArrays: boolean,
): { path: string; schema: JsonObject } | Error {
  const tokens = jsonPath.match(/'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g) ?? [];
  let current: JsonObject | undefined = schema;
  let resolved = '';
  const step = (name: string): Error | undefined => {
    if (current === undefined) return new Error('does not refer to a valid field');
    const props = own(current, 'properties');
    if (isObject(props)) {
      const next = own(props, name);
      if (!isObject(next)) return new Error('does not refer to a valid field');
      current = next;
      resolved = path.child(resolved, name);
    } else if (own(current, 'additionalProperties') !== undefined) {
      const next = own(current, 'additionalProperties');
      current = isObject(next) ? next : undefined;
      resolved = path.key(resolved, name);
    } else {
      return new Error('does not refer to a valid field');
    }
    return undefined;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i] ?? '';
    if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined) return new Error('unexpected end of JSON path');
      const err = step(name);
      if (err !== undefined) return err;
    } else if (tok === '[') {
      if (!allowArrays) return new Error('array notation is not allowed');
      const quoted = tokens[++i];
      if (quoted === undefined) return new Error('unexpected end of JSON path');
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) {
        return new Error(`expected single quoted string but got ${quoted}`);
      }
      const err = step(quoted.slice(1, -1).replace(/\\(.)/g, '$1'));
      if (err !== undefined) return err;
      const close = tokens[++i];
      if (close === undefined) return new Error('unexpected end of JSON path');
      if (close !== ']') return new Error(`expected ] but got ${close}`);
    } else {
      return new Error(`expected [ or . but got: ${tok}`);
    }
  }
  return { path: resolved, schema: current ?? {} };
}

/** `ValidateCustomResourceSelectableFields`. */
export function validateSelectableFields(
  fields: unknown,
  schema: JsonObject,
  at: string,
  out: StatusCause[],
): void {
  if (!Array.isArray(fields)) return;
  const unique = new Set<string>();
  fields.forEach((f: unknown, i) => {
    const where = path.child(path.index(at, i), 'jsonPath');
    const jsonPath = isObject(f) ? str(f, 'jsonPath') : '';
    if (jsonPath === '') {
      out.push(required(where));
      return;
    }
    const found = resolveFieldPath(jsonPath, schema, false);
    if (found instanceof Error) {
      out.push(invalid(where, jsonPath, `is an invalid path: ${found.message}`));
      return;
    }
    if (found.path.split(/[.[]/)[0] === 'metadata')
      out.push(invalid(where, jsonPath, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(str(found.schema, 'type'))) {
      out.push(
        invalid(
          where,
          jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    }
    if (unique.has(found.path)) out.push(duplicate(where, jsonPath));
    unique.add(found.path);
  });
  if (unique.size > 8) out.push(tooMany(at, unique.size, 8));
}

/** `validateDeprecationWarning`. */
export function validateDeprecationWarning(version: JsonObject, at: string, out: StatusCause[]): void {
  const warning = own(version, 'deprecationWarning');
  if (typeof warning !== 'string') return;
  const where = path.child(at, 'deprecationWarning');
  if (own(version, 'deprecated') !== true) {
    out.push(invalid(where, warning, 'can only be set for deprecated versions'));
    return;
  }
  if (Buffer.byteLength(warning, 'utf8') > 256)
    out.push(invalid(where, warning, 'must be <= 256 characters long'));
  if (warning === '') out.push(invalid(where, warning, 'must not be an empty string'));
  let index = 0;
  for (const ch of warning) {
    if (/\p{Cc}/u.test(ch)) {
      out.push(
        invalid(
          where,
          warning,
          `must only contain printable UTF-8 characters; control character found at index ${index}`,
        ),
      );
      break;
    }
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      out.push(
        invalid(
          where,
          warning,
          `must only contain printable UTF-8 characters; non-printable character found at index ${index}`,
        ),
      );
      break;
    }
    index += Buffer.byteLength(ch, 'utf8');
  }
}
