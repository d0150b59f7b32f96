/**
 * Kubernetes' CEL for the embedded API server, on `@marcbachmann/cel-js`: the environment
 * kube-apiserver 1.32 gives rules (optional types, strings extension, the list, regex, quantity,
 * URL and format libraries, `sets`), compilation with cel-go's error wording, runtime cost
 * accounting with kube's limits, and the static worst-case cost estimate CRD creation checks.
 *
 * - {@link celEnvironment} → declare types and variables → {@link compileCel} → a
 *   {@link CelProgram} (or a {@link CelCompileProblem}).
 * - `program.evaluate(vars, new CostMeter(PER_CALL_LIMIT))`: throws {@link CelRuntimeError} with
 *   cel-go's text, or {@link CostLimitExceeded} once the meter runs out — evaluation is bounded.
 * - {@link estimateCost}: the worst case from the schema's sizes ({@link SizeInfo}).
 * - Regular expressions (`matches`, `find`, `findAll`) run on a linear-time RE2 matcher, so no
 *   pattern can stall the server.
 *
 * @example
 * import { celEnvironment, compileCel, CostMeter, PER_CALL_LIMIT } from './cel/index.ts';
 *
 * const env = celEnvironment().registerVariable('self', 'list<string>');
 * const program = compileCel(env, "self.all(x, x.matches('^[a-z]+$'))", 'bool');
 * if ('evaluate' in program) program.evaluate({ self: ['a', 'b'] }, new CostMeter(PER_CALL_LIMIT));
 *
 * @module
 */
export { type CelCompileProblem, type CelProgram, celTypeName, compileCel } from './compile.ts';
export {
  CostMeter,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
} from './cost.ts';
export { type CelEnvironmentOptions, celEnvironment, Duration } from './environment.ts';
export { CelErrorCodes, CelRuntimeError, CostLimitExceeded, RegexSyntaxError } from './errors.ts';
export { estimateCost, type SizeInfo, UNBOUNDED } from './estimate.ts';
export type { FormatValidator } from './lib-format.ts';
export { celEquals } from './values.ts';
