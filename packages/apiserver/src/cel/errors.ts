import { ConvergeError } from '@converge/runtime';

/**
 * Stable error codes of the CEL module. These errors stay inside the API server: a failed rule is
 * reported as a field error of the 422, as kube-apiserver words it.
 */
export const CelErrorCodes = {
  /** An evaluation passed its cost limit and was stopped. */
  COST_EXCEEDED: 'CONVERGE_ERR_APISERVER_CEL_COST_EXCEEDED',
  /** A CEL program failed at runtime (`no such key: foo`, `division by zero`). */
  RUNTIME: 'CONVERGE_ERR_APISERVER_CEL_RUNTIME',
  /** A regular expression is not valid RE2 syntax. */
  REGEX_SYNTAX: 'CONVERGE_ERR_APISERVER_CEL_REGEX_SYNTAX',
} as const;

/**
 * An evaluation ran out of cost and was stopped; the message is cel-go's (`operation cancelled:
 * actual cost limit exceeded`).
 *
 * @example
 * try { program.evaluate(vars, meter); } catch (e) { if (e instanceof CostLimitExceeded) stop(); }
 */
export class CostLimitExceeded extends ConvergeError {
  constructor() {
    super(CelErrorCodes.COST_EXCEEDED, 'operation cancelled: actual cost limit exceeded');
  }
}

/**
 * A CEL runtime error with cel-go's wording (`no such key: foo`, `integer overflow`).
 *
 * @example
 * try { program.evaluate(vars, meter); } catch (e) { if (e instanceof CelRuntimeError) report(e.message); }
 */
export class CelRuntimeError extends ConvergeError {
  constructor(message: string) {
    super(CelErrorCodes.RUNTIME, message);
  }
}

/**
 * A pattern Go's `regexp` refuses; the message is Go's (`error parsing regexp: missing closing ]: `[a``).
 *
 * @example
 * expect(() => compileRegex('[a')).toThrow(RegexSyntaxError);
 */
export class RegexSyntaxError extends ConvergeError {
  constructor(message: string) {
    super(CelErrorCodes.REGEX_SYNTAX, message);
  }
}
