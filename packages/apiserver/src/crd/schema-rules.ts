/**
 * apiextensions' `ValidateCustomResourceDefinitionOpenAPISchema`: the OpenAPI v3 subset a CRD may
 * use (no `$ref`, `id`, `definitions`, `patternProperties`, item arrays, `uniqueItems`), where
 * `default` may sit, and the rules of `x-kubernetes-list-type`, `-list-map-keys`, `-map-type`,
 * `-preserve-unknown-fields` and the static shape of `x-kubernetes-validations` (CEL is not
 * compiled).
 */
import type { StatusCause } from '@converge/runtime';
import { forbidden, invalid, notSupported, path, required } from './field-errors.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { listRules } from './list-type-rules.ts';

interface Context {
  readonly allowDefaults: boolean;
  readonly disallowReason: string;
  readonly insideResourceMeta: boolean;
}

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META = new Set(['metadata', 'kind', 'apiVersion']);
const RULE_REASONS = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];

function str(s: JsonObject, key: string): string {
  const v = own(s, key);
  return typeof v === 'string' ? v : '';
}

function has(s: JsonObject, key: string): boolean {
  const v = own(s, key);
  return v !== undefined && v !== null;
}

function nonEmpty(s: JsonObject, key: string): boolean {
  const v = own(s, key);
  return Array.isArray(v) ? v.length > 0 : isObject(v) ? Object.keys(v).length > 0 : false;
}

/** `specStandardValidatorV3.validate`. */
function standard(s: JsonObject, ctx: Context, at: string, out: StatusCause[]): void {
  const type = str(s, 'type');
  if (type !== '' && !TYPES.includes(type)) out.push(notSupported(path.child(at, 'type'), type, TYPES));
  if (has(s, 'default') && !ctx.allowDefaults) {
    const reason = ctx.disallowReason === '' ? '' : ` ${ctx.disallowReason}`;
    out.push(forbidden(path.child(at, 'default'), `must not be set${reason}`));
  }
  if (str(s, 'id') !== '') out.push(forbidden(path.child(at, 'id'), 'id is not supported'));
  if (has(s, 'additionalItems'))
    out.push(forbidden(path.child(at, 'additionalItems'), 'additionalItems is not supported'));
  if (nonEmpty(s, 'patternProperties'))
    out.push(forbidden(path.child(at, 'patternProperties'), 'patternProperties is not supported'));
  if (nonEmpty(s, 'definitions'))
    out.push(forbidden(path.child(at, 'definitions'), 'definitions is not supported'));
  if (has(s, 'dependencies'))
    out.push(forbidden(path.child(at, 'dependencies'), 'dependencies is not supported'));
  if (has(s, '$ref')) out.push(forbidden(path.child(at, '$ref'), '$ref is not supported'));
  if (type === 'null')
    out.push(forbidden(path.child(at, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (nonEmpty(s, 'items') && Array.isArray(own(s, 'items'))) {
    out.push(forbidden(path.child(at, 'items'), 'items must be a schema object and not an array'));
  }
  if (ctx.insideResourceMeta && own(s, 'x-kubernetes-embedded-resource') === true) {
    out.push(
      forbidden(path.child(at, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'),
    );
  }
}
function ruleChecks(s: JsonObject, at: string, out: StatusCause[]): void {
  const rules = own(s, 'x-kubernetes-validations');
  if (!Array.isArray(rules)) return;
  rules.forEach((raw: unknown, i) => {
    const rule = isObject(raw) ? raw : {};
    const base = path.index(path.child(at, 'x-kubernetes-validations'), i);
    const text = str(rule, 'rule').trim();
    const message = str(rule, 'message');
    const newline = /[\n\r]+/;
    if (text === '') out.push(required(path.child(base, 'rule'), 'rule is not specified'));
    else if (message !== '' && message.trim() === '')
      out.push(invalid(path.child(base, 'message'), message, 'must be non-empty if specified'));
    else if (newline.test(message.trim()))
      out.push(invalid(path.child(base, 'message'), message, 'must not contain line breaks'));
    else if (newline.test(text) && message.trim() === '') {
      out.push(
        required(path.child(base, 'message'), 'message must be specified if rule contains line breaks'),
      );
    }
    const expression = str(rule, 'messageExpression');
    if (expression !== '' && expression.trim() === '') {
      out.push(
        required(path.child(base, 'messageExpression'), 'messageExpression must be non-empty if specified'),
      );
    }
    const reason = own(rule, 'reason');
    if (typeof reason === 'string' && !RULE_REASONS.includes(reason))
      out.push(notSupported(path.child(base, 'reason'), reason, RULE_REASONS));
    const fieldPath = str(rule, 'fieldPath');
    if (fieldPath !== '' && fieldPath.trim() === '')
      out.push(invalid(path.child(base, 'fieldPath'), fieldPath, 'must be non-empty if specified'));
    if (newline.test(fieldPath))
      out.push(invalid(path.child(base, 'fieldPath'), fieldPath, 'must not contain line breaks'));
  });
}

function walkMap(s: JsonObject, key: string, ctx: Context, at: string, out: StatusCause[]): void {
  const map = own(s, key);
  if (!isObject(map)) return;
  for (const [k, n] of Object.entries(map))
    if (isObject(n)) walk(n, ctx, false, path.key(path.child(at, key), k), out);
}

function walk(s: JsonObject, ctx: Context, isRoot: boolean, at: string, out: StatusCause[]): void {
  standard(s, ctx, at, out);
  if (own(s, 'uniqueItems') === true) {
    out.push(
      forbidden(
        path.child(at, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  const additional = own(s, 'additionalProperties');
  if (additional !== undefined && additional !== null) {
    if (nonEmpty(s, 'properties') && (additional === false || isObject(additional))) {
      out.push(
        forbidden(
          path.child(at, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    }
    if (isObject(additional)) {
      const sub = ctx.insideResourceMeta
        ? {
            ...ctx,
            allowDefaults: false,
            disallowReason: 'inside additionalProperties applying to object metadata',
          }
        : ctx;
      walk(additional, sub, false, path.child(at, 'additionalProperties'), out);
    }
  }
  const props = own(s, 'properties');
  if (isObject(props)) {
    const embedded = own(s, 'x-kubernetes-embedded-resource') === true;
    for (const [k, p] of Object.entries(props)) {
      if (!isObject(p)) continue;
      let sub = ctx;
      if ((isRoot || embedded) && META.has(k)) {
        sub = { ...sub, insideResourceMeta: true };
        if (isRoot) sub = { ...sub, allowDefaults: false, disallowReason: `in top-level ${k}` };
      }
      walk(p, sub, false, path.key(path.child(at, 'properties'), k), out);
    }
  }
  const not = own(s, 'not');
  if (isObject(not)) walk(not, ctx, false, path.child(at, 'not'), out);
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const list = own(s, key);
    if (Array.isArray(list)) {
      list.forEach((n: unknown, i) => {
        if (isObject(n)) walk(n, ctx, false, path.index(path.child(at, key), i), out);
      });
    }
  }
  walkMap(s, 'definitions', ctx, at, out);
  const items = own(s, 'items');
  if (isObject(items)) walk(items, ctx, false, path.child(at, 'items'), out);
  if (Array.isArray(items)) {
    items.forEach((n: unknown, i) => {
      if (isObject(n)) walk(n, ctx, false, path.index(path.child(at, 'items'), i), out);
    });
  }
  walkMap(s, 'dependencies', ctx, at, out);
  if (own(s, 'x-kubernetes-preserve-unknown-fields') === false) {
    out.push(
      invalid(path.child(at, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'),
    );
  }
  listRules(s, at, out);
  ruleChecks(s, at, out);
}

/** The OpenAPI-subset rules of a CRD's root schema at `at` (`spec.validation.openAPIV3Schema`). */
export function validateSchemaRules(schema: JsonObject, at: string): StatusCause[] {
  const out: StatusCause[] = [];
  walk(schema, { allowDefaults: true, disallowReason: '', insideResourceMeta: false }, true, at, out);
  return out;
}
