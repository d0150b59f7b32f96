/**
 * Runtime cost accounting for CEL programs, in the units kube-apiserver uses (one unit per
 * evaluated operation, a tenth of a unit per character a string operation walks, one unit per list
 * element a membership test or comparison walks). The evaluator is instrumented once per compiled
 * program; while a program runs, the active {@link CostMeter} is charged, and the evaluation stops
 * as soon as the meter passes its limit — a rule built to be expensive ends in bounded time.
 */

/** kube-apiserver's `PerCallLimit`: the cost one expression may spend. */
import { type AstNode, allNodes, isAstNode } from './ast.ts';
import { CostLimitExceeded } from './errors.ts';

export const PER_CALL_LIMIT = 1_000_000;
/** kube-apiserver's `RuntimeCELCostBudget`: the cost all rules of one object may spend together. */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** cel-go's `StringTraversalCostFactor`. */
export const STRING_TRAVERSAL_FACTOR = 0.1;
/** cel-go's `RegexStringLengthCostFactor`. */
export const REGEX_LENGTH_FACTOR = 0.25;

/** Thrown (one shared instance, so throwing it is cheap) when a meter passes its limit. */
const EXCEEDED = new CostLimitExceeded();

/** The cost of one evaluation, with the limit it may not pass. */
export class CostMeter {
  #cost = 0;
  #exceeded = false;
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** The units spent so far. */
  get cost(): number {
    return this.#cost;
  }

  /** True once the limit was passed (the evaluation's result, if any, must be ignored). */
  get exceeded(): boolean {
    return this.#exceeded;
  }

  /** Charges `units`; throws {@link CostLimitExceeded} past the limit (and on every call after). */
  charge(units: number): void {
    if (this.#exceeded) throw EXCEEDED;
    this.#cost += units;
    if (this.#cost > this.limit) {
      this.#exceeded = true;
      throw EXCEEDED;
    }
  }
}

let active: CostMeter | undefined;

/** Charges the meter of the running evaluation (library functions call this; no-op outside one). */
export function charge(units: number): void {
  active?.charge(units);
}

/** Charges a traversal of `size` characters or elements at `factor` units each (rounded up). */
export function chargeSize(size: number, factor = STRING_TRAVERSAL_FACTOR): void {
  active?.charge(Math.ceil(size * factor));
}

/** Runs `fn` with `meter` as the active meter (evaluations are synchronous, so one at a time). */
export function withMeter<T>(meter: CostMeter, fn: () => T): T {
  const previous = active;
  active = meter;
  try {
    return fn();
  } finally {
    active = previous;
  }
}

/** The size CEL's cost model uses: characters of a string, bytes, elements of a list or map; 0 for scalars. */
export function sizeOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map) return value.size;
  return 0;
}

type Evaluate = (this: unknown, ev: unknown, ast: unknown, ctx: unknown) => unknown;

const SIZED_BINARY = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', '+']);
/** Calls that do constant work whatever their operands' sizes. */
const CONSTANT_CALLS = new Set([
  'type',
  'dyn',
  'hasValue',
  'value',
  'orValue',
  'or',
  'of',
  'none',
  'int',
  'uint',
  'double',
  'bool',
]);

/**
 * How much work comparing `value` can take: elements and entries, counted through nested lists,
 * maps and objects (a nested string counts one, as a compared scalar), stopping at `cap`.
 */
function weight(value: unknown, cap: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count < cap) {
    const v = stack.pop();
    count++;
    if (Array.isArray(v)) stack.push(...v);
    else if (v instanceof Map) for (const item of v.values()) stack.push(item);
  }
  return Math.min(count, cap);
}

/** The smaller of two weights, computed in time proportional to it (caps grow until one fits). */
function smallerWeight(a: unknown, b: unknown): number {
  for (let cap = 64; ; cap *= 8) {
    const wa = weight(a, cap);
    const wb = weight(b, cap);
    if (wa < cap || wb < cap) return Math.min(wa, wb);
  }
}

/** The operands a call or operator node evaluates: receiver and arguments, in order. */
function operandsOf(node: AstNode): readonly unknown[] {
  const args = Array.isArray(node.args) ? (node.args as readonly unknown[]) : [];
  if (node.op === 'rcall') return [args[1], ...((args[2] as readonly unknown[] | undefined) ?? [])];
  if (node.op === 'call') return (args[1] as readonly unknown[] | undefined) ?? [];
  return SIZED_BINARY.has(node.op) ? args : [];
}

/**
 * Instruments a type-checked AST so each evaluated operation charges the active meter, with
 * size-dependent charges for comparisons, membership, concatenation, list/map construction and
 * calls (a tenth of a unit per character or element of their operands and result), so that no
 * operation does more work than it is charged for by more than a constant factor.
 */
export function instrument(root: unknown): void {
  const nodes = allNodes(root);
  const recorded = new Set<unknown>();
  const last = new Map<unknown, unknown>();
  const charged = (node: AstNode): boolean =>
    node.meta.alternate === undefined &&
    node.meta.macro === undefined &&
    (SIZED_BINARY.has(node.op) ||
      ((node.op === 'call' || node.op === 'rcall') &&
        !CONSTANT_CALLS.has(String((node.args as unknown[])[0]))));
  for (const node of nodes) {
    if (charged(node)) for (const operand of operandsOf(node)) recorded.add(evaluatedNode(operand, root));
  }
  for (const node of nodes) {
    const meta = node.meta;
    if (meta.alternate !== undefined || meta.macro !== undefined || typeof meta.evaluate !== 'function')
      continue;
    const base = meta.evaluate as Evaluate;
    const unit = node.op === 'value' ? 0 : 1;
    const operands = charged(node) ? operandsOf(node).map((o) => evaluatedNode(o, root)) : undefined;
    const record = recorded.has(node);
    const collection = node.op === 'list' || node.op === 'map';
    meta.evaluate = function instrumented(this: unknown, ev: unknown, ast: unknown, ctx: unknown): unknown {
      const meter = active;
      if (meter === undefined) return base.call(this, ev, ast, ctx);
      meter.charge(unit);
      const result = base.call(this, ev, ast, ctx);
      if (record) last.set(node, result);
      if (operands !== undefined)
        meter.charge(
          operationCost(
            node.op,
            operands.map((o) => last.get(o)),
            result,
          ),
        );
      else if (collection) meter.charge(sizeOf(result));
      return result;
    };
  }
}

/** The node whose evaluation produces `node`'s value (a macro call's expansion, e.g. `map`). */
function evaluatedNode(node: unknown, root: unknown): unknown {
  let current = node;
  while (isAstNode(current, root) && current.meta.alternate !== undefined) current = current.meta.alternate;
  return current;
}

const tenth = (n: number): number => Math.ceil(n * STRING_TRAVERSAL_FACTOR);

/** The size-dependent cost of one operation, from its operands' values and its result. */
function operationCost(op: string, operands: readonly unknown[], result: unknown): number {
  const [left, right] = operands;
  switch (op) {
    case '==':
    case '!=':
      return typeof left === 'string' || left instanceof Uint8Array
        ? tenth(Math.min(sizeOf(left), sizeOf(right)))
        : tenth(smallerWeight(left, right));
    case '<':
    case '<=':
    case '>':
    case '>=':
      return tenth(Math.min(sizeOf(left), sizeOf(right)));
    case 'in':
      return right instanceof Map
        ? 1
        : Array.isArray(right)
          ? weight(right, Number.POSITIVE_INFINITY)
          : tenth(sizeOf(right));
    case '+':
      return tenth(sizeOf(result));
    default:
      // a call walks its operands and builds its result
      return tenth(operands.reduce<number>((sum, o) => sum + sizeOf(o), sizeOf(result)));
  }
}
