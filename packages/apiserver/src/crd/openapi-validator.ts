/**
 * The OpenAPI v3 value validator kube-apiserver runs on custom resources (kube-openapi's
 * `validate.SchemaValidator`), with its messages, its error order (type, allOf/anyOf/oneOf/not,
 * string, format, number, array, enum, object) and its de-duplication by message. Paths are kube's:
 * `spec.items[0].name`, '' at the root.
 */
import { isSupportedFormat, matchesFormat } from './formats.ts';
import { goQuote } from './go-format.ts';
import { hasOwn, isObject, jsonEqual } from './json.ts';
import { fail, Result, typeError } from './openapi-result.ts';
import { validateEnum, validateNumber, validateString, validateType } from './openapi-scalars.ts';
import type { SchemaNode } from './schema.ts';

export { type OpenApiError, Result } from './openapi-result.ts';

function validateArray(node: SchemaNode, data: readonly unknown[], path: string): Result {
  const result = new Result();
  if (node.items !== undefined) {
    data.forEach((item, i) => {
      result.merge(validateValue(node.items as SchemaNode, item, `${path}[${i}]`));
    });
  }
  const size = data.length;
  if (node.minItems !== undefined && size < node.minItems) {
    result.add({
      kind: 'invalid',
      path,
      value: size,
      message: `${path} in body should have at least ${node.minItems} items`,
    });
  }
  if (node.maxItems !== undefined && size > node.maxItems) {
    result.add({
      kind: 'tooMany',
      path,
      actual: size,
      max: node.maxItems,
      message: `${path} in body should have at most ${node.maxItems} items`,
    });
  }
  if (node.uniqueItems && data.some((v, i) => data.slice(0, i).some((u) => jsonEqual(u, v)))) {
    result.add({ kind: 'invalid', path, value: '', message: `${path} in body shouldn't contain duplicates` });
  }
  result.matchCount++;
  return result;
}

function validateObject(node: SchemaNode, data: Readonly<Record<string, unknown>>, path: string): Result {
  const result = new Result();
  const keys = Object.keys(data);
  if (node.minProperties !== undefined && keys.length < node.minProperties) {
    result.add({
      kind: 'invalid',
      path,
      value: keys.length,
      message: `${path} in body should have at least ${node.minProperties} properties`,
    });
  }
  if (node.maxProperties !== undefined && keys.length > node.maxProperties) {
    result.add({
      kind: 'tooMany',
      path,
      actual: keys.length,
      max: node.maxProperties,
      message: `${path} in body should have at most ${node.maxProperties} properties`,
    });
  }
  const additional = node.additionalProperties;
  for (const key of keys) {
    if (node.properties?.has(key) === true) continue;
    if (additional === false) {
      result.add({
        kind: 'invalid',
        path,
        value: key,
        message: `${path}.${key} in body is a forbidden property`,
      });
    } else if (typeof additional === 'object') {
      result.merge(validateValue(additional, data[key], `${path}.${key}`));
    }
  }
  for (const [name, prop] of node.properties ?? []) {
    if (hasOwn(data, name))
      result.merge(validateValue(prop, data[name], path === '' ? name : `${path}.${name}`));
  }
  for (const name of node.required) {
    if (!hasOwn(data, name))
      result.add({
        kind: 'required',
        path: `${path}.${name}`,
        message: `${path}.${name} in body is required`,
      });
  }
  return result;
}

function validateJunctions(node: SchemaNode, data: unknown, path: string): Result {
  const main = new Result();
  const quoted = goQuote(path);
  if (node.anyOf.length > 0) {
    let best: Result | undefined;
    let success: Result | undefined;
    for (const branch of node.anyOf) {
      const r = validateValue(branch, data, path);
      if (r.valid) {
        success = r;
        best = undefined;
        break;
      }
      if (best === undefined || r.matchCount > best.matchCount) best = r;
    }
    if (success === undefined)
      main.add({ kind: 'plain', message: `${quoted} must validate at least one schema (anyOf)` });
    main.merge(best ?? success);
  }
  if (node.oneOf.length > 0) {
    let best: Result | undefined;
    let success: Result | undefined;
    let validated = 0;
    for (const branch of node.oneOf) {
      const r = validateValue(branch, data, path);
      if (r.valid) {
        validated++;
        best = undefined;
        success ??= r;
      } else if (validated === 0 && (best === undefined || r.matchCount > best.matchCount)) {
        best = r;
      }
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      main.add({
        kind: 'plain',
        message: `${quoted} must validate one and only one schema (oneOf). ${more}`,
      });
      main.merge(best);
    } else {
      main.merge(success);
    }
  }
  if (node.allOf.length > 0) {
    let validated = 0;
    for (const branch of node.allOf) {
      const r = validateValue(branch, data, path);
      if (r.valid) validated++;
      main.merge(r);
    }
    if (validated !== node.allOf.length) {
      const more = validated === 0 ? '. None validated' : '';
      main.add({ kind: 'plain', message: `${quoted} must validate all the schemas (allOf)${more}` });
    }
  }
  if (node.not !== undefined && validateValue(node.not, data, path).valid) {
    main.add({ kind: 'plain', message: `${quoted} must not validate the schema (not)` });
  }
  main.matchCount++;
  return main;
}

/** Validates `data` against `node` at kube-openapi path `path` ('' for the root). */
export function validateValue(node: SchemaNode, data: unknown, path: string): Result {
  const result = new Result();
  if (data === null) {
    result.merge(validateType(node, data, path));
    result.merge(validateEnum(node, data, path));
    return result;
  }
  const step = (r: Result | undefined): void => {
    result.merge(r);
    result.matchCount++;
  };
  if (node.types.length > 0 || node.format !== '') step(validateType(node, data, path));
  step(validateJunctions(node, data, path));
  if (typeof data === 'string') {
    step(validateString(node, data, path));
    if (node.format !== '' && isSupportedFormat(node.format)) {
      step(matchesFormat(node.format, data) ? undefined : fail(typeError(path, node.format, data)));
    }
  }
  if (typeof data === 'number') step(validateNumber(node, data, path));
  if (Array.isArray(data)) step(validateArray(node, data, path));
  step(validateEnum(node, data, path));
  if (isObject(data)) step(validateObject(node, data, path));
  result.matchCount++;
  return result;
}
