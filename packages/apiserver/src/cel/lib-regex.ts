/**
 * Kubernetes' CEL regex library (`find`, `findAll`) and CEL's `matches`, all on the linear-time RE2
 * matcher of `regex-vm.ts`, charged as cel-go charges them: the string's length (+1) times a tenth,
 * times the pattern's size times a quarter. The evaluator's own `matches` (a backtracking
 * JavaScript RegExp) is replaced in every compiled program by {@link useLinearMatches}.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { charge, REGEX_LENGTH_FACTOR, STRING_TRAVERSAL_FACTOR } from './cost.ts';
import { RegexSyntaxError } from './errors.ts';
import { codePoints, compileRegex, type Regex } from './regex-vm.ts';

function regex(pattern: string): Regex {
  try {
    return compileRegex(pattern);
  } catch (error) {
    if (error instanceof RegexSyntaxError) throw new EvaluationError(error.message);
    throw error;
  }
}

/** Charges one search over `length` code points with `re`, as cel-go's runtime cost does. */
function chargeSearch(length: number, re: Regex): void {
  const strCost = Math.ceil((length + 1) * STRING_TRAVERSAL_FACTOR);
  const regexCost = Math.ceil(Math.max(re.size, re.programSize / 4) * REGEX_LENGTH_FACTOR);
  charge(strCost * regexCost);
}

/** CEL's `matches`: true when `pattern` matches anywhere in `text`. */
export function regexMatches(text: string, pattern: string): boolean {
  const re = regex(pattern);
  const cps = codePoints(text);
  chargeSearch(cps.length, re);
  return re.search(cps, 0) !== undefined;
}

function find(text: string, pattern: string): string {
  const re = regex(pattern);
  const cps = codePoints(text);
  chargeSearch(cps.length, re);
  const m = re.search(cps, 0);
  return m === undefined ? '' : String.fromCodePoint(...cps.slice(m[0], m[1]));
}

/** Go's `FindAllString(text, limit)`; every search is charged for the rest of the text it walks. */
function findAll(text: string, pattern: string, limit: bigint): string[] {
  const re = regex(pattern);
  const cps = codePoints(text);
  const out: string[] = [];
  if (limit === 0n) return out;
  let from = 0;
  let lastEnd = -1;
  while (from <= cps.length && (limit < 0n || BigInt(out.length) < limit)) {
    chargeSearch(cps.length - from, re);
    const m = re.search(cps, from);
    if (m === undefined) break;
    const [start, end] = m;
    if (end === start && start === lastEnd) {
      // an empty match right after the previous match is skipped, as Go does
      from = start + 1;
      continue;
    }
    out.push(String.fromCodePoint(...cps.slice(start, end)));
    lastEnd = end;
    from = end === start ? end + 1 : end;
  }
  return out;
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
