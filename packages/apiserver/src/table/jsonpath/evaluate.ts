/**
 * Evaluation of parsed JSONPath nodes over a JSON object, as client-go's `JSONPath.FindResults`
 * walks Kubernetes' unstructured maps with missing keys allowed (how kube-apiserver evaluates CRD
 * printer columns). Errors are returned, not thrown, because some of client-go's evaluation steps
 * keep partial results next to an error (an existence filter ignores its path's error).
 */
import { compareUtf8, isInt64 } from '../go-format.ts';
import type { PathNode, SliceParam } from './parse.ts';

/** A float literal of the path (`2.0`): a Go float64 even when integral. */
export class GoFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

type Result = readonly [values: readonly unknown[], error?: string];

const isNil = (v: unknown) => v === null || v === undefined;
const isMap = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoFloat);

/** The values a path finds in `data`, or an error message where client-go fails. */
export function findResults(data: unknown, nodes: readonly PathNode[]): Result {
  return evalList([data], nodes);
}

function evalList(input: readonly unknown[], nodes: readonly PathNode[]): Result {
  let current = input;
  for (const node of nodes) {
    const [values, error] = walk(current, node);
    if (error !== undefined) return [values, error];
    current = values;
  }
  return [current];
}

function walk(input: readonly unknown[], node: PathNode): Result {
  switch (node.type) {
    case 'text':
      return [[node.text]];
    case 'int':
      return [input.map(() => node.value)];
    case 'float':
      return [input.map(() => new GoFloat(node.value))];
    case 'bool':
      return [input.map(() => node.value)];
    case 'field':
      return [input.filter(isMap).flatMap((m) => (Object.hasOwn(m, node.name) ? [m[node.name]] : []))];
    case 'wildcard':
      return [input.flatMap(children)];
    case 'recursive':
      return evalRecursive(input);
    case 'array':
      return evalArray(input, node.params);
    case 'union': {
      const out: unknown[] = [];
      for (const list of node.lists) {
        const [values, error] = evalList(input, list);
        if (error !== undefined) return [input, error];
        out.push(...values);
      }
      return [out];
    }
    case 'filter':
      return evalFilter(input, node.left, node.right, node.op);
    case 'identifier':
      return [input, `unrecognized identifier ${node.name}`];
  }
}

/** Map values, array elements or string bytes; nothing for scalars and nil. */
function children(value: unknown): unknown[] {
  if (isMap(value)) return Object.values(value);
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...Buffer.from(value)];
  return [];
}

function evalRecursive(input: readonly unknown[]): Result {
  const out: unknown[] = [];
  for (const value of input) {
    if (isNil(value)) continue;
    const inner = children(value);
    if (inner.length === 0) continue;
    out.push(value);
    const [values, error] = evalRecursive(inner);
    if (error !== undefined) return [out, error];
    out.push(...values);
  }
  return [out];
}

/** `[start:end:step]`; the bounds are resolved once per step, as client-go's shared params are. */
function evalArray(input: readonly unknown[], node: readonly [SliceParam, SliceParam, SliceParam]): Result {
  const params = node.map((p) => ({ ...p }));
  const [start, end, step] = params as [
    SliceParam & { value: number },
    SliceParam & { value: number },
    SliceParam,
  ];
  const out: unknown[] = [];
  for (const value of input) {
    if (isNil(value)) continue;
    if (!Array.isArray(value)) return [input, `${typeName(value)} is not array or slice`];
    const length = value.length;
    if (!start.known) start.value = 0;
    if (start.value < 0) start.value += length;
    if (!end.known) end.value = length;
    if (end.value < 0 || (end.value === 0 && end.derived)) end.value += length;
    if (end.value === start.value) return [out];
    if (start.value >= length || start.value < 0) {
      return [input, `array index out of bounds: index ${start.value}, length ${length}`];
    }
    if (end.value > length || end.value < 0) {
      return [input, `array index out of bounds: index ${end.value - 1}, length ${length}`];
    }
    if (start.value > end.value)
      return [input, `starting index ${start.value} is greater than ending index ${end.value}`];
    const by = step.known ? step.value : 1;
    if (by <= 0) return [input, 'step must be > 0'];
    for (let i = start.value; i < end.value; i += by) out.push(value[i]);
  }
  return [out];
}

function evalFilter(
  input: readonly unknown[],
  left: readonly PathNode[],
  right: readonly PathNode[],
  op: string,
): Result {
  const out: unknown[] = [];
  for (const value of input) {
    if (!Array.isArray(value))
      return [input, `${typeName(value)} is not array or slice and cannot be filtered`];
    for (const element of value) {
      const [lefts, leftError] = evalList([element], left);
      if (op === 'exists') {
        if (lefts.length > 0) out.push(element);
        continue;
      }
      if (leftError !== undefined) return [input, leftError];
      if (lefts.length === 0) continue;
      if (lefts.length > 1) return [input, 'can only compare one element at a time'];
      const [rights, rightError] = evalList([element], right);
      if (rightError !== undefined) return [input, rightError];
      if (rights.length === 0) continue;
      if (rights.length > 1) return [input, 'can only compare one element at a time'];
      const pass = compare(op, lefts[0], rights[0]);
      if (typeof pass === 'string') return [out, pass];
      if (pass) out.push(element);
    }
  }
  return [out];
}

type Kind = 'bool' | 'int' | 'float' | 'string';

function kindOf(value: unknown): Kind | undefined {
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  if (value instanceof GoFloat) return 'float';
  if (typeof value === 'number') return isInt64(value) ? 'int' : 'float';
  return undefined;
}

const numeric = (value: unknown) => (value instanceof GoFloat ? value.value : (value as number));

/** text/template's eq/lt semantics: same basic kinds only, else an error message. */
function compare(op: string, a: unknown, b: unknown): boolean | string {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === undefined || kb === undefined) return 'invalid type for comparison';
  const equal = (): boolean | string => {
    if (ka !== kb) return 'incompatible types for comparison';
    return ka === 'string' || ka === 'bool' ? a === b : numeric(a) === numeric(b);
  };
  const less = (): boolean | string => {
    if (ka !== kb) return 'incompatible types for comparison';
    if (ka === 'bool') return 'invalid type for comparison';
    return ka === 'string' ? compareUtf8(a as string, b as string) < 0 : numeric(a) < numeric(b);
  };
  const not = (r: boolean | string) => (typeof r === 'string' ? r : !r);
  switch (op) {
    case '==':
      return equal();
    case '!=':
      return not(equal());
    case '<':
      return less();
    case '>=':
      return not(less());
    case '<=': {
      const lt = less();
      return lt === false ? equal() : lt;
    }
    case '>': {
      const lt = less();
      if (typeof lt === 'string') return lt;
      return lt ? false : not(equal());
    }
    default:
      return `unrecognized filter operator ${op}`;
  }
}

function typeName(value: unknown): string {
  if (isMap(value)) return 'map[string]interface {}';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number' || value instanceof GoFloat)
    return kindOf(value) === 'int' ? 'int64' : 'float64';
  return '<nil>';
}
