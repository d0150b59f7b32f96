/**
 * Evaluating `x-kubernetes-validations` on a custom resource (apiextensions' `cel.Validator`): every
 * rule at every node the object has, `self` bound to the node's value, `oldSelf` to the correlated
 * old value on updates (transition rules run only when there is one, unless `optionalOldSelf`), all
 * failures collected. Each rule may spend {@link PER_CALL_LIMIT}, all rules of the object together
 * {@link RUNTIME_COST_BUDGET}; past either, validation stops with kube's message. On updates a
 * failure of a rule that does not use `oldSelf`, on a value that did not change, is ratcheted: a
 * warning instead of an error (CRDValidationRatcheting, on by default in 1.32).
 */

import type { StatusCause } from '@converge/runtime';
import { Optional } from '@marcbachmann/cel-js';
import {
  type CelProgram,
  CelRuntimeError,
  CostLimitExceeded,
  CostMeter,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
} from '../cel/index.ts';
import { type CompiledRule, compileRules, type RuleNode } from './cel-rules.ts';
import { causeText, duplicate, forbidden, invalid, path, required } from './field-errors.ts';
import { isObject, jsonEqual, own } from './json.ts';
import { compileSchema } from './schema.ts';
import type { StructuralSchema } from './types.ts';

/** kube's `MaxEvaluatedMessageExpressionSizeBytes`. */
const MAX_MESSAGE_BYTES = 5 * 1024;

/** Options of {@link validateRules}. */
export interface RuleValidationOptions {
  /** Cost one expression may spend. Default {@link PER_CALL_LIMIT}. */
  readonly perCallLimit?: number;
  /** Cost all rules of the object may spend. Default {@link RUNTIME_COST_BUDGET}. */
  readonly budget?: number;
}

/** The failures of the rules, and the warnings of ratcheted failures. */
export interface RuleValidationResult {
  readonly causes: StatusCause[];
  readonly warnings: string[];
}

interface Old {
  readonly value: unknown;
}

type Outcome =
  | { readonly ok: true; readonly value: unknown; readonly cost: number }
  | { readonly ok: false; readonly error: unknown; readonly cost: number };

class Run {
  readonly causes: StatusCause[] = [];
  readonly warnings: string[] = [];
  remaining: number;
  stopped = false;
  readonly perCallLimit: number;
  readonly update: boolean;

  constructor(options: RuleValidationOptions, update: boolean) {
    this.remaining = options.budget ?? RUNTIME_COST_BUDGET;
    this.perCallLimit = options.perCallLimit ?? PER_CALL_LIMIT;
    this.update = update;
  }

  stop(field: string, value: string, detail: string): void {
    this.causes.push(invalid(field, value, detail));
    this.stopped = true;
  }

  /** Runs `program` on its own meter; the outcome carries the cost spent either way. */
  evaluate(program: CelProgram, vars: Record<string, unknown>): Outcome {
    const meter = new CostMeter(this.perCallLimit);
    try {
      return { ok: true, value: program.evaluate(vars, meter), cost: meter.cost };
    } catch (error) {
      return { ok: false, error, cost: meter.cost };
    }
  }
}

const fieldName = (at: string): string => (at === '' ? '<nil>' : at);

function ruleErrorString(rule: CompiledRule): string {
  const message = typeof rule.rule.message === 'string' ? rule.rule.message.trim() : '';
  return message !== '' ? message : String(rule.rule.rule).trim();
}

function failureCause(rule: CompiledRule, field: string, jsonType: string, detail: string): StatusCause {
  switch (rule.rule.reason) {
    case 'FieldValueForbidden':
      return forbidden(field, detail);
    case 'FieldValueRequired':
      return required(field, detail);
    case 'FieldValueDuplicate':
      return duplicate(field, jsonType);
    case 'FieldValueInvalid':
    case undefined:
    default:
      return invalid(field, jsonType, detail);
  }
}

function messageOf(
  run: Run,
  node: RuleNode,
  rule: CompiledRule,
  vars: Record<string, unknown>,
  field: string,
): string | undefined {
  const fallback =
    typeof rule.rule.message === 'string' && rule.rule.message !== ''
      ? rule.rule.message.trim()
      : `failed rule: ${ruleErrorString(rule)}`;
  if (rule.messageProgram === undefined) return fallback;
  const result = run.evaluate(rule.messageProgram, vars);
  const cost = result.cost;
  if (cost > run.remaining) {
    run.stop(
      field,
      node.type.jsonType,
      'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run',
    );
    return undefined;
  }
  if (!result.ok && result.error instanceof CostLimitExceeded) {
    run.stop(
      field,
      node.type.jsonType,
      `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(rule.rule.messageExpression)}`,
    );
    return undefined;
  }
  run.remaining -= cost;
  if (!result.ok || typeof result.value !== 'string') return fallback;
  const text = result.value.trim();
  if (text === '' || text.includes('\n') || Buffer.byteLength(text) > MAX_MESSAGE_BYTES) return fallback;
  return text;
}

function runRules(
  run: Run,
  node: RuleNode,
  value: unknown,
  old: Old | undefined,
  at: string,
  ratchet: boolean,
): void {
  const self = node.type.convert(value);
  if (self === undefined) return;
  let oldSelf: unknown;
  if (old !== undefined) oldSelf = node.type.convert(old.value);
  const field = fieldName(at);
  const jsonType = node.type.jsonType;
  for (const rule of node.rules) {
    if (run.stopped) return;
    if (rule.program === undefined) {
      const problem = rule.problems.find((p) => p.member === 'rule');
      if (problem !== undefined)
        run.causes.push(invalid(field, jsonType, `rule compile error: ${problem.detail}`));
      continue;
    }
    const optional = rule.rule.optionalOldSelf === true;
    if (rule.usesOldSelf && oldSelf === undefined && !optional) continue;
    const vars: Record<string, unknown> = optional
      ? { self, oldSelf: oldSelf === undefined ? Optional.none() : Optional.of(oldSelf) }
      : { self, oldSelf };
    const result = run.evaluate(rule.program, vars);
    const cost = result.cost;
    if (cost > run.remaining) {
      run.stop(
        field,
        jsonType,
        'validation failed due to running out of cost budget, no further validation rules will be run',
      );
      return;
    }
    run.remaining -= cost;
    if (!result.ok) {
      const rs = ruleErrorString(rule);
      if (result.error instanceof CostLimitExceeded) {
        run.stop(
          field,
          jsonType,
          `'${result.error.message}': no further validation rules will be run due to call cost exceeds limit for rule: ${rs}`,
        );
        return;
      }
      const text = result.error instanceof CelRuntimeError ? result.error.message : String(result.error);
      run.causes.push(
        invalid(
          field,
          jsonType,
          text.startsWith('no such overload')
            ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${rs}`
            : `${text} evaluating rule: ${rs}`,
        ),
      );
      continue;
    }
    if (result.value === true) continue;
    const target = rule.fieldPath === '' ? field : path.child(at, rule.fieldPath);
    const message = messageOf(run, node, rule, { self, oldSelf }, target);
    if (message === undefined) return;
    const cause = failureCause(rule, target, jsonType, message);
    if (!rule.usesOldSelf && ratchet) run.warnings.push(causeText(cause));
    else run.causes.push(cause);
  }
}

/** A map-list's items by key, to correlate old items with new ones. */
function mapListIndex(node: RuleNode, old: unknown): ((item: unknown) => Old | undefined) | undefined {
  if (node.schema.listType !== 'map' || !Array.isArray(old)) return undefined;
  const keys = node.schema.listMapKeys;
  const keyOf = (item: unknown): string | undefined =>
    isObject(item) ? JSON.stringify(keys.map((k) => own(item, k) ?? null)) : undefined;
  const byKey = new Map<string, unknown>();
  for (const item of old) {
    const key = keyOf(item);
    if (key !== undefined) byKey.set(key, item);
  }
  return (item) => {
    const key = keyOf(item);
    return key !== undefined && byKey.has(key) ? { value: byKey.get(key) } : undefined;
  };
}

function walk(
  run: Run,
  node: RuleNode,
  value: unknown,
  old: Old | undefined,
  at: string,
  parentEqual: boolean,
): void {
  if (run.stopped || value === null || value === undefined) return;
  // ratcheting: a correlated node compares with its old value, an uncorrelated one inherits
  const equal = run.update && (old === undefined ? parentEqual : jsonEqual(value, old.value));
  if (node.rules.length > 0) runRules(run, node, value, old, at, equal);
  if (Array.isArray(value) && node.items !== undefined) {
    const correlate = mapListIndex(node, old?.value);
    value.forEach((item, i) => {
      walk(run, node.items as RuleNode, item, correlate?.(item), path.index(at, i), equal);
    });
  } else if (isObject(value)) {
    const oldObject = old !== undefined && isObject(old.value) ? old.value : undefined;
    const correlated = (key: string): Old | undefined =>
      oldObject !== undefined && Object.hasOwn(oldObject, key) ? { value: oldObject[key] } : undefined;
    if (node.additionalProperties !== undefined) {
      for (const [key, item] of Object.entries(value)) {
        walk(run, node.additionalProperties, item, correlated(key), path.key(at, key), equal);
      }
    }
    for (const [key, item] of Object.entries(value)) {
      const child = node.properties.get(key);
      if (child !== undefined) walk(run, child, item, correlated(key), path.child(at, key), equal);
    }
  }
}

/**
 * Runs the compiled rules of a root schema on `object` (and, for an update, `oldObject`).
 *
 * @example
 * const node = compileRules(compileSchema(schema));
 * if (node !== undefined) validateRules(node, object, oldObject).causes;
 */
export function validateRules(
  root: RuleNode,
  object: unknown,
  oldObject?: unknown,
  options: RuleValidationOptions = {},
): RuleValidationResult {
  const update = oldObject !== undefined && oldObject !== null;
  const run = new Run(options, update);
  walk(run, root, object, update ? { value: oldObject } : undefined, '', false);
  return { causes: run.causes, warnings: run.warnings };
}

const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/**
 * The rules' part of validating a custom resource, after schema validation found `prior`: kube
 * skips the rules when the object has a blocking problem (a wrong type, a missing required field,
 * an unsupported enum value, a too long string or list) and says so with one more cause.
 *
 * @example
 * const causes = validateCustomResource(schema, object);
 * const rules = validateCustomResourceRules(schema, object, oldObject, causes);
 * causes.push(...rules.causes);
 */
export function validateCustomResourceRules(
  schema: StructuralSchema,
  object: unknown,
  oldObject: unknown,
  prior: readonly StatusCause[] = [],
  options: RuleValidationOptions = {},
): RuleValidationResult {
  const root = compileRules(compileSchema(schema));
  if (root === undefined) return { causes: [], warnings: [] };
  if (prior.some((c) => BLOCKING.has(c.reason ?? ''))) {
    return {
      causes: [
        invalid(
          '<nil>',
          null,
          'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        ),
      ],
      warnings: [],
    };
  }
  return validateRules(root, object, oldObject, options);
}
