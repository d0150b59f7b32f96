/**
 * Compiling one CEL expression against an environment: parse, type-check, check literal regular
 * expressions, then instrument the program for cost accounting. Problems read as cel-go prints
 * them (`ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'` with
 * the source line and a caret), so messages match what kube-apiserver answers.
 */
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import { type AstNode, allNodes } from './ast.ts';
import { type CostMeter, instrument, withMeter } from './cost.ts';
import { CelRuntimeError, CostLimitExceeded } from './errors.ts';
import { REGEX_FUNCTIONS, regexProblem, useLinearMatches } from './lib-regex.ts';

/** Why an expression does not compile. */
export interface CelCompileProblem {
  /**
   * `compile`: parse or type errors (`ERROR: <input>:1:5: undefined field 'x'` …); `type`: the
   * result is not of the wanted type; `program`: a literal regular expression does not compile.
   */
  readonly kind: 'compile' | 'type' | 'program';
  /** cel-go's text of the problem. */
  readonly message: string;
}

/** A compiled, type-checked, cost-instrumented expression. */
export interface CelProgram {
  readonly source: string;
  /** The result type as CEL names it (`bool`, `string`, `list(int)`). */
  readonly resultType: string;
  /** The variables the expression references (`self`, `oldSelf`). */
  readonly variables: ReadonlySet<string>;
  /** The checked AST (for the static cost estimate). */
  readonly ast: unknown;
  /**
   * Evaluates with `variables` bound, charging `meter`.
   *
   * @throws CelRuntimeError for a CEL runtime error; CostLimitExceeded when the meter runs out.
   */
  evaluate(variables: Readonly<Record<string, unknown>>, meter: CostMeter): unknown;
}

/** cel-go's spelling of a type name: `list(int)`, `map(string, int)`. */
export function celTypeName(name: string): string {
  return name.replaceAll('<', '(').replaceAll('>', ')');
}

const BINARY_NAMES: Record<string, string> = {
  '==': '_==_',
  '!=': '_!=_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  in: '@in',
};

interface CelErrorLike {
  readonly code?: string;
  readonly summary?: string;
  readonly message: string;
  readonly node?: {
    readonly op?: string;
    readonly args?: unknown;
    readonly pos?: number;
    readonly start?: number;
  };
  readonly range?: { readonly start: number; readonly end: number };
}

/** The source offset cel-go reports: the operator of a binary expression, else the node's start. */
function offsetOf(error: CelErrorLike, source: string): number {
  const node = error.node;
  const start = error.range?.start ?? node?.pos ?? 0;
  if ((node?.op === '.' || node?.op === '.?') && error.code === 'no_such_key') {
    // cel-go places a select at its dot
    let at = start;
    while (at > 0 && source[at] !== '.') at--;
    return source[at] === '.' ? at : start;
  }
  if (node?.op !== undefined && node.op in BINARY_NAMES && Array.isArray(node.args)) {
    const left = node.args[0] as { end?: number } | undefined;
    if (typeof left?.end === 'number') {
      let at = left.end;
      while (at < source.length && /\s/.test(source[at] ?? '')) at++;
      return at;
    }
  }
  return start;
}

/** `ERROR: <input>:L:C: message` with the source line and a caret, as cel-go's issues print. */
function located(message: string, source: string, offset: number): string {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = Array.from(source.slice(lineStart, offset)).length;
  const text = source.slice(lineStart).split('\n')[0] ?? '';
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(column)}^`;
}

/** cel-go's wording of a parse or type-check problem. */
function compileText(error: CelErrorLike): string {
  const summary = error.summary ?? error.message.split('\n')[0] ?? '';
  switch (error.code) {
    case 'no_such_key':
      return `undefined field '${summary.replace(/^No such key: /, '')}'`;
    case 'unknown_variable':
      return `undeclared reference to '${summary.replace(/^Unknown variable: /, '')}' (in container '')`;
    case 'no_such_overload': {
      const m = /^no such overload: (.+) (\S+) (.+)$/.exec(summary);
      const op = m === null ? undefined : BINARY_NAMES[m[2] ?? ''];
      if (m === null || op === undefined) return summary;
      return `found no matching overload for '${op}' applied to '(${celTypeName(m[1] ?? '')}, ${celTypeName(m[3] ?? '')})'`;
    }
    case 'no_matching_overload': {
      const m = /^found no matching overload for '(?:(.+)\.)?([A-Za-z_][\w]*)\((.*)\)'$/.exec(summary);
      if (m === null) return summary;
      const target = m[1] === undefined ? '' : `${celTypeName(m[1])}.`;
      return `found no matching overload for '${m[2]}' applied to '${target}(${celTypeName(m[3] ?? '')})'`;
    }
    case 'invalid_macro_argument':
      return summary.startsWith('has()') ? 'invalid argument to has() macro' : summary;
    case undefined:
      return summary;
    default:
      return error.code?.startsWith('unexpected') || error.code?.startsWith('unterminated')
        ? `Syntax error: ${summary}`
        : summary;
  }
}

/** cel-go's wording of a runtime error. */
export function runtimeText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const e = error as CelErrorLike;
  const summary = e.summary ?? e.message;
  switch (e.code) {
    case 'no_such_key':
      return summary.replace(/^No such key: /, 'no such key: ');
    case 'index_out_of_bounds':
    case 'index_out_of_range': {
      const m = /index (-?\d+)/.exec(summary);
      return m === null ? summary : `index out of bounds: ${m[1]}`;
    }
    case 'numeric_overflow':
      return summary.toLowerCase().includes('unsigned') ? 'unsigned integer overflow' : 'integer overflow';
    case 'modulo_by_zero':
      return 'modulus by zero';
    case 'no_such_overload':
    case 'no_matching_overload':
      return 'no such overload';
    case undefined:
    default:
      return summary;
  }
}

function literalRegexProblem(nodes: readonly AstNode[]): string | undefined {
  for (const node of nodes) {
    if ((node.op !== 'rcall' && node.op !== 'call') || !Array.isArray(node.args)) continue;
    const name = node.args[0];
    if (typeof name !== 'string' || !REGEX_FUNCTIONS.has(name)) continue;
    const params = (node.op === 'rcall' ? node.args[2] : node.args[1]) as readonly AstNode[];
    const pattern = node.op === 'rcall' ? params[0] : params[1];
    if (pattern?.op === 'value' && typeof pattern.args === 'string') {
      const problem = regexProblem(pattern.args);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/**
 * Compiles `source` in `env`; `resultType` (`bool`, `string`) is the type the expression must have.
 *
 * @example
 * const env = celEnvironment().registerVariable('self', 'int');
 * const program = compileCel(env, 'self <= 10', 'bool');
 * if (!('message' in program)) program.evaluate({ self: 3n }, new CostMeter(PER_CALL_LIMIT)); // true
 */
export function compileCel(
  env: Environment,
  source: string,
  resultType?: string,
): CelProgram | CelCompileProblem {
  let parsed: ParseResult;
  try {
    parsed = env.parse(source);
  } catch (error) {
    const e = error as CelErrorLike;
    return { kind: 'compile', message: located(compileText(e), source, offsetOf(e, source)) };
  }
  const checked = parsed.check();
  if (!checked.valid) {
    const e = checked.error as unknown as CelErrorLike;
    return { kind: 'compile', message: located(compileText(e), source, offsetOf(e, source)) };
  }
  const type = celTypeName(checked.type ?? 'dyn');
  if (resultType !== undefined && type !== resultType && type !== 'dyn') {
    return { kind: 'type', message: `cel expression must evaluate to a ${resultType}` };
  }
  const nodes = allNodes(parsed.ast);
  const regex = literalRegexProblem(nodes);
  if (regex !== undefined) return { kind: 'program', message: regex };
  const variables = new Set<string>();
  for (const node of nodes) {
    if (node.op === 'id' && typeof node.args === 'string') variables.add(node.args);
    useLinearMatches(node as never);
  }
  instrument(parsed.ast);
  return {
    source,
    resultType: type,
    variables,
    ast: parsed.ast,
    evaluate(values, meter) {
      let result: unknown;
      try {
        result = withMeter(meter, () => parsed(values));
      } catch (error) {
        if (error instanceof CostLimitExceeded || meter.exceeded) throw new CostLimitExceeded();
        // anything else the evaluator throws is the rule's runtime error, never the server's
        throw new CelRuntimeError(runtimeText(error));
      }
      if (meter.exceeded) throw new CostLimitExceeded();
      return result;
    },
  };
}
