/**
 * Kubernetes' CEL regex library (`find`, `findAll`) and CEL's `matches`, all on the linear-time RE2
 * matcher of `regex.ts`, charged as cel-go and kube-apiserver charge them: once per call, the
 * string's length (+1) times a tenth, times the pattern's length times a quarter. The evaluator's
 * own `matches` (a backtracking JavaScript RegExp) is replaced in every compiled program by
 * {@link useLinearMatches}.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { charge, REGEX_LENGTH_FACTOR, STRING_TRAVERSAL_FACTOR } from './cost.ts';
import { RegexSyntaxError } from './errors.ts';
import { codePointLength, compileRegex, type Regex } from './regex.ts';

function regex(pattern: string): Regex {
  try {
    return compileRegex(pattern);
  } catch (error) {
    if (error instanceof RegexSyntaxError) throw new EvaluationError(error.message);
    throw error;
  }
}

/** Charges one call on `text` with `re`, as cel-go's and kube's runtime costs do. */
function chargeCall(text: string, re: Regex): void {
  const strCost = Math.ceil((codePointLength(text) + 1) * STRING_TRAVERSAL_FACTOR);
  const regexCost = Math.ceil(re.size * REGEX_LENGTH_FACTOR);
  charge(strCost * regexCost);
}

/** CEL's `matches`: true when `pattern` matches anywhere in `text`. */
export function regexMatches(text: string, pattern: string): boolean {
  const re = regex(pattern);
  chargeCall(text, re);
  return re.test(text);
}

/** Kubernetes' `find`: the first match, or the empty string. */
function find(text: string, pattern: string): string {
  const re = regex(pattern);
  chargeCall(text, re);
  return re.find(text) ?? '';
}

/** Kubernetes' `findAll`: Go's `FindAllString(text, limit)`, a negative limit meaning all. */
function findAll(text: string, pattern: string, limit: bigint): string[] {
  const re = regex(pattern);
  chargeCall(text, re);
  return re.findAll(text, limit < 0n ? -1 : Number(limit));
}

/** Registers `find` and `findAll` on `env`. */
export function registerRegexLibrary(env: Environment): void {
  env.registerFunction('string.find(string): string', find);
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1n));
  env.registerFunction('string.findAll(string, int): list<string>', findAll);
}

/** The regex functions whose pattern, when a literal, is compiled (and so checked) with the program. */
export const REGEX_FUNCTIONS = new Set(['matches', 'find', 'findAll']);

/** Checks a literal pattern; returns Go's error text for a pattern Go refuses. */
export function regexProblem(pattern: string): string | undefined {
  try {
    compileRegex(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof RegexSyntaxError) return error.message;
    throw error;
  }
}

interface CallNode {
  readonly op: string;
  readonly args: readonly unknown[];
  readonly meta: Record<string, unknown>;
}

interface Evaluator {
  run(node: unknown, ctx: unknown): unknown;
}

/**
 * Replaces the evaluation of `matches` calls in a type-checked AST with the linear-time matcher
 * (receiver form `s.matches(re)` and global form `matches(s, re)`).
 */
export function useLinearMatches(node: CallNode): void {
  if (node.op === 'rcall' && node.args[0] === 'matches') {
    const receiver = node.args[1];
    const pattern = (node.args[2] as readonly unknown[])[0];
    node.meta.evaluate = (ev: Evaluator, _ast: unknown, ctx: unknown) =>
      matchesValues(ev.run(receiver, ctx), ev.run(pattern, ctx));
  } else if (node.op === 'call' && node.args[0] === 'matches') {
    const [text, pattern] = node.args[1] as readonly unknown[];
    node.meta.evaluate = (ev: Evaluator, _ast: unknown, ctx: unknown) =>
      matchesValues(ev.run(text, ctx), ev.run(pattern, ctx));
  }
}

function matchesValues(text: unknown, pattern: unknown): boolean {
  if (typeof text !== 'string' || typeof pattern !== 'string') {
    throw new EvaluationError('no such overload: matches');
  }
  return regexMatches(text, pattern);
}
