/**
 * Evaluating one compiled policy for one request and one param, as kube-apiserver's policy
 * validator: `matchConditions` first (a false one skips the policy, an error follows
 * `failurePolicy`), then every validation within the shared runtime cost budget, then the audit
 * annotations. `variables` are evaluated when first read and remembered for this evaluation.
 */
import {
  type CelProgram,
  CelRuntimeError,
  CostLimitExceeded,
  CostMeter,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
} from '../../cel/index.ts';
import { authorizerVariables } from '../cel-authorizer.ts';
import { celValue, requestOf } from '../cel-inputs.ts';

import type { AdmissionAttributes, JsonObject } from '../types.ts';
import { type CompiledExpression, type CompiledPolicy, PolicyVariables } from './compile.ts';

/** What one validation decided: a failure (to deny, warn or audit per the binding) or nothing. */
export interface Decision {
  readonly message: string;
  /** The validation's `reason` (undefined for evaluation errors: Invalid). */
  readonly reason: string | undefined;
  /** Index of the validation (for the audit annotation). */
  readonly index: number;
}

/** The outcome of one evaluation. */
export interface Evaluation {
  readonly failures: readonly Decision[];
  /** Audit annotations that failed under Fail: denials whatever the binding's actions. */
  readonly denials: readonly Decision[];
  readonly annotations: readonly { readonly key: string; readonly value: string }[];
}

/** The activation's inputs, already in CEL's shape. */
export interface PolicyInput {
  readonly attributes: AdmissionAttributes;
  readonly namespaceObject: JsonObject | null;
  readonly params: JsonObject | null;
}

const OUT_OF_BUDGET =
  'validation failed due to running out of cost budget, no further validation rules will be run';

class OutOfBudget extends Error {}

const NAMESPACE_METADATA = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'finalizers',
];

/** `namespaceObject` as kube builds it from a Namespace: its spec, status and most of its metadata. */
export function namespaceObjectOf(namespace: JsonObject | null): JsonObject | null {
  if (namespace === null) return null;
  const metadata = (namespace.metadata ?? {}) as JsonObject;
  const meta: JsonObject = {};
  for (const key of NAMESPACE_METADATA) if (metadata[key] !== undefined) meta[key] = metadata[key];
  return { metadata: meta, spec: namespace.spec ?? {}, status: namespace.status ?? {} };
}

/** Runs programs against one activation, charging one budget. */
class Activation {
  #remaining: number;
  readonly #values: Record<string, unknown>;

  constructor(policy: CompiledPolicy, input: PolicyInput, budget: number) {
    this.#remaining = budget;
    const { attributes } = input;
    this.#values = {
      object: celValue(attributes.object),
      oldObject: celValue(attributes.oldObject),
      request: celValue(requestOf(attributes)),
      namespaceObject: celValue(input.namespaceObject),
      ...authorizerVariables(attributes),
      ...(policy.hasParams ? { params: celValue(input.params) } : {}),
    };
    if (policy.variables.length > 0) {
      const byName = new Map(policy.variables.map((v) => [v.name, v]));
      this.#values.variables = PolicyVariables.lazy((name) => {
        const variable = byName.get(name);
        if (variable?.program === undefined)
          throw new CelRuntimeError(`compilation error: ${variable?.problem ?? `no variable ${name}`}`);
        return this.#run(variable.program);
      });
    }
  }

  /** Evaluates within the remaining budget; throws OutOfBudget, CostLimitExceeded or CelRuntimeError. */
  #run(program: CelProgram): unknown {
    const meter = new CostMeter(Math.min(PER_CALL_LIMIT, Math.max(0, this.#remaining)));
    let outcome: { readonly value: unknown } | { readonly error: Error };
    try {
      outcome = { value: program.evaluate(this.#values, meter) };
    } catch (error) {
      outcome = { error: error instanceof Error ? error : new CelRuntimeError(String(error)) };
    }
    this.#remaining -= meter.cost;
    if (this.#remaining < 0) throw new OutOfBudget();
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  /** The value of an expression, or the error text kube reports for it. */
  evaluate(compiled: CompiledExpression): { value: unknown } | { error: string } {
    if (compiled.program === undefined)
      return { error: `compilation error: ${compiled.problem ?? 'no expression'}` };
    try {
      return { value: this.#run(compiled.program) };
    } catch (error) {
      if (error instanceof OutOfBudget) throw error;
      const text =
        error instanceof CostLimitExceeded
          ? 'operation cancelled: actual cost limit exceeded'
          : error instanceof Error
            ? error.message
            : String(error);
      return { error: `expression '${compiled.expression}' resulted in error: ${text}` };
    }
  }
}

function failure(message: string, index: number): Decision {
  return { message, reason: undefined, index };
}

/**
 * Evaluates a compiled policy. `failurePolicy` decides what an evaluation error becomes: a
 * failure (Fail) or nothing (Ignore).
 */
export function evaluatePolicy(policy: CompiledPolicy, input: PolicyInput, fail: boolean): Evaluation {
  const none: Evaluation = { failures: [], denials: [], annotations: [] };
  const errorOutcome = (message: string): Evaluation =>
    fail ? { failures: [failure(message, 0)], denials: [], annotations: [] } : none;
  try {
    if (policy.matchConditions.length > 0) {
      const conditions = new Activation(policy, input, RUNTIME_COST_BUDGET);
      const errors: string[] = [];
      for (const condition of policy.matchConditions) {
        const result = conditions.evaluate(condition);
        if ('error' in result) errors.push(result.error);
        else if (result.value === false) return none;
        else if (result.value !== true)
          errors.push(`expression '${condition.expression}' resulted in error: no such overload`);
      }
      if (errors.length > 0)
        return errorOutcome(errors.length === 1 ? (errors[0] as string) : `[${errors.join(', ')}]`);
    }
  } catch (error) {
    if (error instanceof OutOfBudget) return errorOutcome(OUT_OF_BUDGET);
    throw error;
  }
  const activation = new Activation(policy, input, RUNTIME_COST_BUDGET);
  const failures: Decision[] = [];
  try {
    policy.validations.forEach((validation, index) => {
      const result = activation.evaluate(validation.expression);
      if ('error' in result) {
        if (fail) failures.push(failure(result.error, index));
        return;
      }
      if (result.value === true) return;
      failures.push({
        message: messageOf(activation, validation),
        reason: validation.reason ?? 'Invalid',
        index,
      });
    });
  } catch (error) {
    if (error instanceof OutOfBudget) return errorOutcome(OUT_OF_BUDGET);
    throw error;
  }
  const annotations: { key: string; value: string }[] = [];
  const denials: Decision[] = [];
  const audit = new Activation(policy, input, RUNTIME_COST_BUDGET);
  try {
    for (const annotation of policy.auditAnnotations) {
      const result = audit.evaluate(annotation.value);
      if ('error' in result) {
        if (fail) denials.push(failure(result.error, 0));
        continue;
      }
      if (typeof result.value === 'string') {
        const value = result.value.trim();
        if (value !== '') annotations.push({ key: annotation.key, value: value.slice(0, 10 * 1024) });
      } else if (result.value !== null && fail) {
        denials.push(
          failure(
            `valueExpression '${annotation.value.expression}' resulted in unsupported return type: ${typeof result.value}. Return type must be either string or null.`,
            0,
          ),
        );
      }
    }
  } catch (error) {
    if (!(error instanceof OutOfBudget)) throw error;
    if (fail) denials.push(failure(OUT_OF_BUDGET, 0));
  }
  return { failures, denials, annotations };
}

/** `messageExpression` when it yields a usable string, else `message`, else `failed expression: …`. */
function messageOf(activation: Activation, validation: CompiledPolicy['validations'][number]): string {
  if (validation.messageExpression !== undefined) {
    try {
      const result = activation.evaluate(validation.messageExpression);
      if ('value' in result && typeof result.value === 'string') {
        const message = result.value.trim();
        if (message !== '' && message.length <= 5 * 1024 && !message.includes('\n')) return message;
      }
    } catch (error) {
      if (!(error instanceof OutOfBudget)) throw error;
    }
  }
  if (validation.message.trim() !== '') return validation.message.trim();
  return `failed expression: ${validation.expression.expression.trim()}`;
}
