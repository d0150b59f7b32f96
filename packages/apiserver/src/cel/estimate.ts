/**
 * The static (worst-case) cost estimate kube-apiserver computes when a CRD is created, following
 * cel-go's `checker/cost.go` and Kubernetes' library cost estimator: each operation costs one unit,
 * literals nothing, a comprehension its range's maximum size times the cost of one iteration, and
 * string and list functions a factor of the maximum sizes the schema allows (`maxLength`,
 * `maxItems`, `maxProperties`, or what fits in a 3 MiB request). A size CEL cannot know (the result
 * of `string(x)`, say) is treated as unbounded, as cel-go does.
 */
import { type AstNode, isAstNode } from './ast.ts';
import { REGEX_LENGTH_FACTOR, STRING_TRAVERSAL_FACTOR } from './cost.ts';

/** What the estimate knows about a value: its maximum size and, for containers, its parts. */
export interface SizeInfo {
  /** Maximum characters, bytes, list elements or map entries. */
  readonly maxSize: number;
  /** `list` and `map` values iterate (over elements and keys); objects do not. */
  readonly kind?: 'list' | 'map';
  /** Object fields by their CEL (escaped) names. */
  readonly fields?: ReadonlyMap<string, SizeInfo>;
  /** List elements or map values. */
  readonly elements?: SizeInfo;
}

/** cel-go's unknown size (the maximum uint64). */
export const UNBOUNDED = 2 ** 64;

interface Estimate {
  readonly cost: number;
  readonly size: number;
  readonly info?: SizeInfo;
}

const LITERAL: Estimate = { cost: 0, size: 0 };
const UNKNOWN_SIZE: SizeInfo = { maxSize: UNBOUNDED };
const MAP_KEY: SizeInfo = { maxSize: 0 };

const traverse = (size: number, factor = STRING_TRAVERSAL_FACTOR): number => Math.ceil(size * factor);
const sum = (...estimates: readonly Estimate[]): number => estimates.reduce((a, e) => a + e.cost, 0);
const cap = (n: number): number => Math.min(n, UNBOUNDED);

/** String functions that walk their receiver once and return something of its size. */
const STRING_WALKERS = new Set([
  'lowerAscii',
  'upperAscii',
  'substring',
  'trim',
  'charAt',
  'indexOf',
  'lastIndexOf',
  'format',
  'split',
  'quantity',
  'isQuantity',
  'url',
  'isURL',
]);
const LIST_WALKERS = new Set(['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'join']);
const COMPARISONS = new Set(['==', '!=', '<', '<=', '>', '>=']);

class Estimator {
  readonly #root: unknown;
  readonly #scopes: Map<string, SizeInfo | undefined>[] = [];

  constructor(root: unknown, variables: ReadonlyMap<string, SizeInfo | undefined>) {
    this.#root = root;
    this.#scopes.push(new Map(variables));
  }

  #lookup(name: string): SizeInfo | undefined {
    for (let i = this.#scopes.length - 1; i >= 0; i--) {
      const scope = this.#scopes[i] as Map<string, SizeInfo | undefined>;
      if (scope.has(name)) return scope.get(name);
    }
    return undefined;
  }

  #bound<T>(name: string, info: SizeInfo | undefined, run: () => T): T {
    this.#scopes.push(new Map([[name, info]]));
    try {
      return run();
    } finally {
      this.#scopes.pop();
    }
  }

  estimate(value: unknown): Estimate {
    if (!isAstNode(value, this.#root)) return LITERAL;
    const node = value;
    const args = Array.isArray(node.args) ? (node.args as readonly unknown[]) : [];
    switch (node.op) {
      case 'value': {
        const v = node.args;
        const size = typeof v === 'string' ? Array.from(v).length : v instanceof Uint8Array ? v.length : 0;
        return { cost: 0, size };
      }
      case 'id': {
        const info = this.#lookup(node.args as string);
        return { cost: 1, size: info?.maxSize ?? 0, ...(info === undefined ? {} : { info }) };
      }
      case '.':
      case '.?': {
        const operand = this.estimate(args[0]);
        const info = operand.info?.fields?.get(args[1] as string);
        return { cost: operand.cost + 1, size: info?.maxSize ?? 0, ...(info === undefined ? {} : { info }) };
      }
      case '[]':
      case '[?]': {
        const operand = this.estimate(args[0]);
        const index = this.estimate(args[1]);
        const info = operand.info?.elements;
        return {
          cost: sum(operand, index) + 1,
          size: info?.maxSize ?? 0,
          ...(info === undefined ? {} : { info }),
        };
      }
      case 'list': {
        const items = args.map((a) => this.estimate(a));
        const elements = items.reduce((m, e) => Math.max(m, e.size), 0);
        return {
          cost: sum(...items) + 10,
          size: items.length,
          info: { kind: 'list', maxSize: items.length, elements: { maxSize: elements } },
        };
      }
      case 'map': {
        const entries = args.flatMap((e) => (Array.isArray(e) ? e.map((x) => this.estimate(x)) : []));
        return { cost: sum(...entries) + 30, size: entries.length / 2 };
      }
      case '&&':
      case '||':
        return { cost: sum(...args.map((a) => this.estimate(a))), size: 0 };
      case '?:': {
        const [c, l, r] = args.map((a) => this.estimate(a)) as [Estimate, Estimate, Estimate];
        const info = l.info ?? r.info;
        return {
          cost: c.cost + Math.max(l.cost, r.cost),
          size: Math.max(l.size, r.size),
          ...(info === undefined ? {} : { info }),
        };
      }
      case '!_':
      case '-_':
        return { cost: this.estimate(node.args).cost + 1, size: 0 };
      case 'call':
      case 'rcall':
        return this.#call(node, args);
      default:
        if (node.op in { '+': 1, '-': 1, '*': 1, '/': 1, '%': 1, in: 1 } || COMPARISONS.has(node.op)) {
          return this.#binary(node.op, args);
        }
        return { cost: 1, size: 0 };
    }
  }

  #binary(op: string, args: readonly unknown[]): Estimate {
    const [l, r] = args.map((a) => this.estimate(a)) as [Estimate, Estimate];
    const base = sum(l, r);
    if (COMPARISONS.has(op)) return { cost: base + traverse(Math.min(l.size, r.size)), size: 0 };
    if (op === 'in') return { cost: base + (r.info?.kind === 'map' ? 1 : r.size), size: 0 };
    if (op === '+') {
      const size = cap(l.size + r.size);
      const isList = l.info?.elements !== undefined || r.info?.elements !== undefined;
      return isList
        ? {
            cost: base + 1,
            size,
            info: {
              kind: 'list',
              maxSize: size,
              ...(l.info?.elements === undefined ? {} : { elements: l.info.elements }),
            },
          }
        : { cost: base + traverse(size), size };
    }
    return { cost: base + 1, size: 0 };
  }

  #call(node: AstNode, args: readonly unknown[]): Estimate {
    const name = args[0] as string;
    const target = node.op === 'rcall' ? this.estimate(args[1]) : undefined;
    const params = ((node.op === 'rcall' ? args[2] : args[1]) ?? []) as readonly unknown[];
    const macro = this.#macro(name, params, target, node);
    if (macro !== undefined) return macro;
    const values = params.map((p) => this.estimate(p));
    const base = (target?.cost ?? 0) + sum(...values);
    const t = target?.size ?? 0;
    const first = values[0]?.size ?? 0;
    switch (name) {
      case 'size':
      case 'has':
        return { cost: base + 1, size: 0 };
      case 'string': {
        // cel-go knows the size of a converted value only for a literal
        const p = params[0];
        const literal = isAstNode(p, this.#root) && p.op === 'value' && typeof p.args === 'string';
        return { cost: base + 1, size: literal ? first : UNBOUNDED, info: UNKNOWN_SIZE };
      }
      case 'contains':
        return { cost: base + traverse(t) * traverse(first), size: 0 };
      case 'startsWith':
      case 'endsWith':
        return { cost: base + traverse(first), size: 0 };
      case 'matches':
      case 'find':
      case 'findAll':
        return { cost: base + traverse(t + 1) * traverse(first, REGEX_LENGTH_FACTOR), size: t };
      case 'replace':
        return {
          cost: base + traverse(t + first + (values[1]?.size ?? 0)),
          size: cap(t * Math.max(1, values[1]?.size ?? 1)),
        };
      default:
        break;
    }
    if (
      target !== undefined &&
      target.info?.kind === 'list' &&
      target.info.elements !== undefined &&
      LIST_WALKERS.has(name)
    ) {
      return {
        cost: base + Math.max(1, target.size),
        size:
          name === 'join'
            ? cap(target.size * (target.info.elements.maxSize + first))
            : target.info.elements.maxSize,
      };
    }
    if (STRING_WALKERS.has(name)) {
      const walked = target === undefined ? first : t;
      return { cost: base + Math.max(1, traverse(walked)), size: walked };
    }
    return { cost: base + 1, size: 0 };
  }

  /** The comprehension macros and `has`, estimated from their arguments as cel-go expands them. */
  #macro(
    name: string,
    params: readonly unknown[],
    target: Estimate | undefined,
    node: AstNode,
  ): Estimate | undefined {
    if (name === 'has' && node.op === 'call') {
      const inner = params[0];
      return { cost: this.estimate(inner).cost, size: 0 };
    }
    if (name === 'bind' && node.op === 'rcall' && params.length === 3) {
      const init = this.estimate(params[1]);
      const body = this.#bound(this.#varName(params[0]), init.info ?? { maxSize: init.size }, () =>
        this.estimate(params[2]),
      );
      return {
        cost: 10 + init.cost + body.cost,
        size: body.size,
        ...(body.info === undefined ? {} : { info: body.info }),
      };
    }
    if (target === undefined || node.meta.alternate === undefined) return undefined;
    if (!['all', 'exists', 'exists_one', 'map', 'filter'].includes(name)) return undefined;
    const count = target.size;
    const element = target.info?.kind === 'list' ? target.info.elements : MAP_KEY;
    const iterVar = this.#varName(params[0]);
    const body = this.#bound(iterVar, element, () => params.slice(1).map((p) => this.estimate(p)));
    const predicate = body[0]?.cost ?? 0;
    let perItem: number;
    switch (name) {
      case 'all':
      case 'exists':
        perItem = 3 + predicate;
        break;
      case 'exists_one':
        perItem = 2 + predicate;
        break;
      case 'filter':
        perItem = 13 + predicate;
        break;
      default:
        perItem = 12 + sum(...body);
        break;
    }
    const size = name === 'map' || name === 'filter' ? count : 0;
    const elements = name === 'filter' ? element : { maxSize: body.at(-1)?.size ?? 0 };
    return {
      cost: cap(target.cost + 1 + count * perItem),
      size,
      info: { kind: 'list', maxSize: size, ...(elements === undefined ? {} : { elements }) },
    };
  }

  #varName(node: unknown): string {
    return isAstNode(node, this.#root) && node.op === 'id' ? (node.args as string) : '';
  }
}

/**
 * The worst-case cost of a checked program, given what is known of the sizes of its variables
 * (`self`, `oldSelf`). Saturates at {@link UNBOUNDED}.
 *
 * @example
 * const cost = estimateCost(program.ast, new Map([['self', { maxSize: 10, elements: { maxSize: 64 } }]]));
 */
export function estimateCost(ast: unknown, variables: ReadonlyMap<string, SizeInfo | undefined>): number {
  return cap(new Estimator(ast, variables).estimate(ast).cost);
}
