/**
 * The scalar checks of kube-openapi's validator: the type validator, numbers (ranges, multipleOf,
 * int32/float formats), strings (lengths, pattern) and enums, with kube's messages and quirks.
 */
import { goFloat, goNumber, goValue } from './go-format.ts';
import { isInt64, isObject, jsonEqual } from './json.ts';
import { fail, type OpenApiError, Result, typeError } from './openapi-result.ts';
import type { SchemaNode } from './schema.ts';

/** The Go kind of a decoded JSON value, as kube-openapi's type validator sees it. */
function schemaTypeOf(data: unknown): [type: string, format: string] {
  if (typeof data === 'string') return ['string', ''];
  if (typeof data === 'boolean') return ['boolean', ''];
  if (typeof data === 'number') return isInt64(data) ? ['integer', 'int64'] : ['number', 'float64'];
  if (Array.isArray(data)) return ['array', ''];
  return ['object', ''];
}

/** kube-openapi's type validator (also checks a number's format against the declared one). */
export function validateType(node: SchemaNode, data: unknown, path: string): Result {
  const result = new Result();
  result.matchCount++;
  const types = node.types;
  if (data === null) {
    if (types.length > 0 && !node.nullable) return fail(typeError(path, types.join(','), 'null'));
    return result;
  }
  const [schType, format] = schemaTypeOf(data);
  const isFloatInt = schType === 'number' && isJsonInteger(data as number) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  const stringOrArray = typeof data === 'string' || Array.isArray(data);
  if (!stringOrArray && node.format !== '') {
    if (!(types.includes(schType) || format === node.format || isFloatInt || isIntFloat)) {
      return fail(typeError(path, node.format, format));
    }
  }
  if (!(types.includes('number') || types.includes('integer')) && node.format !== '' && stringOrArray)
    return result;
  if (!(types.includes(schType) || isFloatInt || isIntFloat))
    return fail(typeError(path, types.join(','), schType));
  return result;
}

/** swag's `IsFloat64AJSONInteger`. */
export function isJsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53) return false;
  if (Number.isInteger(f)) return true;
  const g = Math.trunc(f);
  const diff = Math.abs(f - g);
  if (g === 0) return false;
  return diff / (Math.abs(f) + Math.abs(g)) < 1e-9;
}

/** kube-openapi's `IsValueValidAgainstRange`: does `value` fit the node's single numeric type/format? */
function rangeError(
  value: number,
  integerRep: boolean,
  node: SchemaNode,
  prefix: string,
  path: string,
): OpenApiError | undefined {
  const typeName =
    node.types.length === 1 && (node.type === 'integer' || node.type === 'number') ? node.type : '';
  const format = typeName === '' ? '' : node.format;
  let ok = true;
  if (typeName === 'integer') {
    const integral = (integerRep || Number.isInteger(value)) && Math.abs(value) < 2 ** 63;
    ok = format === 'int32' ? integral && value >= -(2 ** 31) && value < 2 ** 31 : integral;
  } else if (format === 'float') {
    ok = Number.isFinite(Math.fround(value));
  }
  if (ok) return undefined;
  const message =
    format !== ''
      ? `${prefix} value must be of type ${typeName} with format ${format} in ${path}`
      : `${prefix} value must be of type ${typeName || 'number'} (default format) in ${path}`;
  return { kind: 'plain', message };
}

/** kube-openapi's number validator: int32/float range, multipleOf, minimum, maximum. */
export function validateNumber(node: SchemaNode, data: number, path: string): Result {
  const res = new Result();
  const int = isInt64(data);
  const checked = rangeError(data, int, node, 'Checked', path);
  if (checked !== undefined) res.add(checked);
  const parts: Result[] = [];
  if (node.multipleOf !== undefined) {
    const r = new Result();
    const bad = rangeError(node.multipleOf, false, node, 'MultipleOf', path);
    if (bad !== undefined) r.add(bad);
    const factor = int && r.valid ? Math.trunc(node.multipleOf) : node.multipleOf;
    if (factor <= 0) {
      r.add({
        kind: 'invalid',
        path,
        value: factor,
        message: `factor MultipleOf declared for ${path} must be positive: ${goNumber(factor)}`,
      });
    } else if (
      int && r.valid ? data % factor !== 0 : !isJsonInteger(factor < 1 ? (1 / factor) * data : data / factor)
    ) {
      const shown = int && r.valid ? goNumber(factor) : goFloat(factor);
      r.add({
        kind: 'invalid',
        path,
        value: data,
        message: `${path} in body should be a multiple of ${shown}`,
      });
    }
    parts.push(r);
  }
  for (const [bound, exclusive, isMax] of [
    [node.minimum, node.exclusiveMinimum, false],
    [node.maximum, node.exclusiveMaximum, true],
  ] as const) {
    if (bound === undefined) continue;
    const r = new Result();
    const bad = rangeError(bound, false, node, isMax ? 'Maximum boundary' : 'Minimum boundary', path);
    if (bad !== undefined) r.add(bad);
    const native = int && r.valid;
    const limit = native ? Math.trunc(bound) : bound;
    const violated = isMax
      ? exclusive
        ? data >= limit
        : data > limit
      : exclusive
        ? data <= limit
        : data < limit;
    if (violated) {
      const word = isMax
        ? exclusive
          ? 'less than'
          : 'less than or equal to'
        : exclusive
          ? 'greater than'
          : 'greater than or equal to';
      const shown = native ? goNumber(limit) : goFloat(limit);
      r.add({ kind: 'invalid', path, value: data, message: `${path} in body should be ${word} ${shown}` });
    }
    parts.push(r);
  }
  for (const p of parts) res.merge(p);
  res.matchCount++;
  return res;
}

/** kube-openapi's string validator: maxLength, minLength, pattern (first failure only). */
export function validateString(node: SchemaNode, data: string, path: string): Result | undefined {
  const length = [...data].length;
  if (node.maxLength !== undefined && length > node.maxLength) {
    return fail({
      kind: 'tooLong',
      path,
      max: node.maxLength,
      message: `${path} in body should be at most ${node.maxLength} chars long`,
    });
  }
  if (node.minLength !== undefined && length < node.minLength) {
    return fail({
      kind: 'invalid',
      path,
      value: data,
      message: `${path} in body should be at least ${node.minLength} chars long`,
    });
  }
  const re = node.patternRegex;
  if (re instanceof Error) {
    return fail({
      kind: 'invalid',
      path,
      value: data,
      message: `${path} in body should match '${node.pattern}, but pattern is invalid: ${re.message}'`,
    });
  }
  if (re !== undefined && !re.test(data)) {
    return fail({
      kind: 'invalid',
      path,
      value: data,
      message: `${path} in body should match '${node.pattern}'`,
    });
  }
  return undefined;
}

/** Go's `reflect` conversion of data to the enum value's type, then DeepEqual. */
function enumMatches(data: unknown, candidate: unknown): boolean {
  if (typeof data === 'number' && typeof candidate === 'number') {
    return isInt64(candidate) ? Math.trunc(data) === candidate : data === candidate;
  }
  if (typeof data === 'number' && typeof candidate === 'string' && isInt64(data)) {
    const valid = data >= 0 && data <= 0x10ffff && !(data >= 0xd800 && data <= 0xdfff);
    return (valid ? String.fromCodePoint(data) : '\uFFFD') === candidate;
  }
  if (Array.isArray(data) !== Array.isArray(candidate) || isObject(data) !== isObject(candidate))
    return false;
  return jsonEqual(data, candidate);
}

/** kube-openapi's enum check (Go conversion semantics; `null` never matches). */
export function validateEnum(node: SchemaNode, data: unknown, path: string): Result | undefined {
  const values = node.enum;
  if (values === undefined || values.length === 0) return undefined;
  if (data !== null && values.some((v) => v !== null && enumMatches(data, v))) return undefined;
  return fail({
    kind: 'enum',
    path,
    value: data,
    values,
    message: `${path} in body should be one of ${goValue(values)}`,
  });
}
