/**
 * Compiling a ValidatingAdmissionPolicy's CEL once per change: `variables` (each may use the ones
 * before it), `matchConditions`, `validations` with their `messageExpression`s, and
 * `auditAnnotations[].valueExpression`, in kube-apiserver's environment — `object`, `oldObject`,
 * `request`, `namespaceObject`, `params` (only with a `paramKind`), `variables` (only with
 * variables), and `authorizer` (cel-authorizer.ts: checks of the requesting user).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { type CelProgram, celEnvironment, compileCel } from '../../cel/index.ts';
import { registerAuthorizerLibrary } from '../cel-authorizer.ts';
import type { PolicySpec } from './types.ts';

/** An expression compiled, or why it does not compile (the detail of kube's field error). */
export interface CompiledExpression {
  readonly expression: string;
  readonly program?: CelProgram;
  readonly problem?: string;
}

/** Everything of a policy that is evaluated at admission, compiled. */
export interface CompiledPolicy {
  readonly hasParams: boolean;
  readonly variables: readonly (CompiledExpression & { readonly name: string })[];
  readonly matchConditions: readonly (CompiledExpression & { readonly name: string })[];
  readonly validations: readonly {
    readonly expression: CompiledExpression;
    readonly message: string;
    readonly messageExpression: CompiledExpression | undefined;
    readonly reason: string | undefined;
  }[];
  readonly auditAnnotations: readonly { readonly key: string; readonly value: CompiledExpression }[];
}

const ROOT_VARIABLES = ['object', 'oldObject', 'request', 'namespaceObject'] as const;
const VARIABLES_TYPE = 'kubernetes.policy.Variables';
const SIMPLE_TYPES = new Set(['bool', 'int', 'uint', 'double', 'string', 'bytes']);

/**
 * The runtime value of `variables`: each variable is evaluated when first read, then remembered
 * (as kube-apiserver's composition does). One class for every environment, so values always match
 * the declared type.
 */
export class PolicyVariables extends Map<string, unknown> {
  #resolve: ((name: string) => unknown) | undefined;

  /** A `variables` value that computes `name` with `resolve` on first use. */
  static lazy(resolve: (name: string) => unknown): PolicyVariables {
    const variables = new PolicyVariables();
    variables.#resolve = resolve;
    return variables;
  }

  override get(name: string): unknown {
    if (!super.has(name) && this.#resolve !== undefined) super.set(name, this.#resolve(name));
    return super.get(name);
  }

  override has(name: string): boolean {
    return super.has(name) || this.#resolve !== undefined;
  }
}

interface EnvironmentShape {
  readonly hasParams: boolean;
  /** Declared variables and their types; undefined: `variables` is not declared. */
  readonly variables: Readonly<Record<string, string>> | undefined;
}

function environment(shape: EnvironmentShape): Environment {
  const env = celEnvironment();
  for (const name of ROOT_VARIABLES) env.registerVariable(name, 'dyn');
  if (shape.hasParams) env.registerVariable('params', 'dyn');
  registerAuthorizerLibrary(env);
  if (shape.variables !== undefined) {
    env.registerType(VARIABLES_TYPE, { ctor: PolicyVariables, fields: { ...shape.variables } });
    env.registerVariable('variables', VARIABLES_TYPE);
  }
  return env;
}

/**
 * Compiles one expression; `want` is the result type kube requires (`bool`, `string`, or
 * `string|null` for audit annotation values), undefined for any.
 */
export function compileExpression(
  env: Environment,
  expression: string,
  want: 'bool' | 'string' | 'string|null' | undefined,
): CompiledExpression {
  const result = compileCel(env, expression, want === 'bool' || want === 'string' ? want : undefined);
  if (!('evaluate' in result)) {
    const problem =
      result.kind === 'type' ? `must evaluate to ${want}` : `compilation failed: ${result.message}`;
    return { expression, problem };
  }
  // kube wants the exact type: a bare `object.spec.paused` is dyn, and refused
  if ((want === 'bool' || want === 'string') && result.resultType !== want)
    return { expression, problem: `must evaluate to ${want}` };
  if (want === 'string|null' && !['string', 'null', 'null_type'].includes(result.resultType))
    return { expression, problem: 'must evaluate to one of [string null_type]' };
  return { expression, program: result };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

const compiled = new WeakMap<PolicySpec, CompiledPolicy>();

/** The policy's expressions compiled (memoised per spec object: a changed policy is a new object). */
export function compilePolicy(spec: PolicySpec): CompiledPolicy {
  const known = compiled.get(spec);
  if (known !== undefined) return known;
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null;
  const list = <T>(value: readonly T[] | undefined): readonly T[] => (Array.isArray(value) ? value : []);
  const declared: Record<string, string> = {};
  const hasVariables = list(spec.variables).length > 0;
  const variables = list(spec.variables).map((v) => {
    const name = text(v?.name);
    const env = environment({ hasParams, variables: hasVariables ? declared : undefined });
    const result = { name, ...compileExpression(env, text(v?.expression), undefined) };
    const type = result.program?.resultType ?? 'dyn';
    if (/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name)) declared[name] = SIMPLE_TYPES.has(type) ? type : 'dyn';
    return result;
  });
  const env = environment({ hasParams, variables: hasVariables ? declared : undefined });
  const plain = environment({ hasParams, variables: undefined });
  const policy: CompiledPolicy = {
    hasParams,
    variables,
    matchConditions: list(spec.matchConditions).map((c) => ({
      name: text(c?.name),
      ...compileExpression(plain, text(c?.expression), 'bool'),
    })),
    validations: list(spec.validations).map((v) => ({
      expression: compileExpression(env, text(v?.expression), 'bool'),
      message: text(v?.message),
      messageExpression:
        text(v?.messageExpression).trim() === ''
          ? undefined
          : compileExpression(env, text(v?.messageExpression), 'string'),
      reason: typeof v?.reason === 'string' && v.reason !== '' ? v.reason : undefined,
    })),
    auditAnnotations: list(spec.auditAnnotations).map((a) => ({
      key: text(a?.key),
      value: compileExpression(env, text(a?.valueExpression).trim(), 'string|null'),
    })),
  };
  compiled.set(spec, policy);
  return policy;
}
