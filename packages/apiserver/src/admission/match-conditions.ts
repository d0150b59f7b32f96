/**
 * `matchConditions` of admission webhooks, as kube-apiserver 1.32 evaluates them: up to 64 CEL
 * expressions `{name, expression}` over `object`, `oldObject`, `request` (the AdmissionRequest)
 * and `namespaceObject`; the webhook is called only when all are true. A false condition skips
 * the webhook (even when another one failed); an evaluation error follows `failurePolicy` — Fail
 * rejects the request with a 403, Ignore skips the webhook.
 *
 * `authorizer` checks what the requesting user may do (cel-authorizer.ts).
 */
import { fieldError, type StatusCause } from '@converge/runtime';
import type { Environment } from '@marcbachmann/cel-js';
import {
  type CelProgram,
  CostLimitExceeded,
  CostMeter,
  celEnvironment,
  compileCel,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
} from '../cel/index.ts';
import { authorizerVariables, registerAuthorizerLibrary } from './cel-authorizer.ts';
import { celValue, requestOf } from './cel-inputs.ts';
import { AdmissionMatchConditionError } from './errors.ts';
import type { AdmissionAttributes, JsonObject, Webhook } from './types.ts';

/** One entry of a webhook's `matchConditions`. */
export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** kube-apiserver's limit on `matchConditions` per webhook. */
export const MAX_MATCH_CONDITIONS = 64;

const VARIABLES = ['object', 'oldObject', 'request', 'namespaceObject'] as const;

let environment: Environment | undefined;

function matchEnvironment(): Environment {
  if (environment === undefined) {
    environment = celEnvironment();
    for (const name of VARIABLES) environment.registerVariable(name, 'dyn');
    registerAuthorizerLibrary(environment);
  }
  return environment;
}

/** A condition compiled, or why it does not compile (kube's field error detail). */
type Compiled = { readonly program: CelProgram } | { readonly problem: string };

function compile(expression: string): Compiled {
  const result = compileCel(matchEnvironment(), expression, 'bool');
  // kube wants exactly bool: a bare `object.spec.paused` is dyn, and refused as for policies
  if ('evaluate' in result) {
    return result.resultType === 'bool' ? { program: result } : { problem: 'must evaluate to bool' };
  }
  return {
    problem: result.kind === 'type' ? 'must evaluate to bool' : `compilation failed: ${result.message}`,
  };
}

/** A qualified name as `metadata` label keys: an optional DNS subdomain prefix and a name part. */
function qualifiedNameProblem(name: string): string | undefined {
  const parts = name.split('/');
  const namePart = parts.length === 2 ? (parts[1] as string) : parts[0];
  if (parts.length > 2 || namePart === undefined) {
    return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
  }
  if (namePart.length === 0) return 'name part must be non-empty';
  if (namePart.length > 63) return 'name part must be no more than 63 characters';
  if (!/^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/.test(namePart)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  }
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix.length === 0) return 'prefix part must be non-empty';
    if (prefix.length > 253) return 'prefix part must be no more than 253 characters';
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix)) {
      return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    }
  }
  return undefined;
}

/**
 * The field errors of one stored webhook's `matchConditions` (`at` is its path, `webhooks[0]`),
 * as kube-apiserver validates a configuration write: at most 64, names required, qualified and
 * unique, expressions required, compiling and of type bool.
 */
export function matchConditionCauses(webhook: unknown, at: string): StatusCause[] {
  const conditions = (webhook as { matchConditions?: unknown } | null)?.matchConditions;
  if (conditions === undefined || conditions === null) return [];
  const path = `${at}.matchConditions`;
  if (!Array.isArray(conditions)) return [fieldError.invalid(path, conditions, 'must be a list')];
  if (conditions.length > MAX_MATCH_CONDITIONS) {
    return [
      {
        field: path,
        reason: 'FieldValueTooMany',
        message: `Too many: ${conditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`,
      },
    ];
  }
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  conditions.forEach((item: unknown, i) => {
    const here = `${path}[${i}]`;
    const { name, expression } = (item ?? {}) as { name?: unknown; expression?: unknown };
    if (typeof name !== 'string' || name === '') {
      causes.push(fieldError.required(`${here}.name`));
    } else {
      const problem = qualifiedNameProblem(name);
      if (problem !== undefined) causes.push(fieldError.invalid(`${here}.name`, name, problem));
      else if (seen.has(name)) causes.push(fieldError.duplicate(`${here}.name`, name));
      seen.add(name);
    }
    if (typeof expression !== 'string' || expression.trim() === '') {
      causes.push(fieldError.required(`${here}.expression`));
      return;
    }
    const compiled = compile(expression);
    if ('problem' in compiled)
      causes.push(fieldError.invalid(`${here}.expression`, expression, compiled.problem));
  });
  return causes;
}

const compiledConditions = new WeakMap<Webhook, readonly (MatchCondition & Compiled)[]>();

function conditionsOf(webhook: Webhook): readonly (MatchCondition & Compiled)[] {
  let compiled = compiledConditions.get(webhook);
  if (compiled === undefined) {
    const listed = (webhook as { matchConditions?: unknown }).matchConditions;
    compiled = (Array.isArray(listed) ? (listed as MatchCondition[]) : []).map((c) => ({
      name: String(c?.name ?? ''),
      expression: String(c?.expression ?? ''),
      ...compile(String(c?.expression ?? '')),
    }));
    compiledConditions.set(webhook, compiled);
  }
  return compiled;
}

/** Whether the webhook has any `matchConditions` (no CEL work is done for those without). */
export function hasMatchConditions(webhook: Webhook): boolean {
  const listed = (webhook as { matchConditions?: unknown }).matchConditions;
  return Array.isArray(listed) && listed.length > 0;
}

/**
 * Evaluates a webhook's `matchConditions`: true when all hold (or there are none), false when one
 * is false, or when one failed under `failurePolicy: Ignore`. Under Fail an evaluation error throws
 * {@link AdmissionMatchConditionError} (`<resource> "<name>" is forbidden: expression '…' resulted
 * in error: …`). Each expression may spend {@link PER_CALL_LIMIT}, all of them together
 * {@link RUNTIME_COST_BUDGET}.
 *
 * @param namespaceObject the request's Namespace (null for cluster-scoped requests)
 */
export function matchConditionsHold(
  webhook: Webhook,
  attributes: AdmissionAttributes,
  namespaceObject: JsonObject | null,
): boolean {
  const conditions = conditionsOf(webhook);
  if (conditions.length === 0) return true;
  const variables = {
    object: celValue(attributes.object),
    oldObject: celValue(attributes.oldObject),
    request: celValue(requestOf(attributes)),
    namespaceObject: celValue(namespaceObject),
    ...authorizerVariables(attributes),
  };
  let remaining = RUNTIME_COST_BUDGET;
  const errors: string[] = [];
  for (const condition of conditions) {
    if ('problem' in condition) {
      errors.push(`expression '${condition.expression}' resulted in error: ${condition.problem}`);
      continue;
    }
    const meter = new CostMeter(Math.min(PER_CALL_LIMIT, remaining));
    let value: unknown;
    try {
      value = condition.program.evaluate(variables, meter);
    } catch (error) {
      remaining -= meter.cost;
      const text =
        error instanceof CostLimitExceeded
          ? remaining <= 0
            ? 'validation failed due to running out of cost budget, no further validation rules will be run'
            : 'operation cancelled: actual cost limit exceeded'
          : error instanceof Error
            ? error.message
            : String(error);
      errors.push(`expression '${condition.expression}' resulted in error: ${text}`);
      if (remaining <= 0) break;
      continue;
    }
    remaining -= meter.cost;
    if (value === false) return false;
    if (value !== true) {
      errors.push(`expression '${condition.expression}' resulted in error: must evaluate to bool`);
    }
  }
  if (errors.length === 0) return true;
  if (webhook.failurePolicy === 'Ignore') return false;
  const problem = errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]`;
  throw new AdmissionMatchConditionError(webhook.name, attributes, problem);
}
