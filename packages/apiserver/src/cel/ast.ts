/**
 * Read-only views of the evaluator's AST, for the passes Converge runs over a type-checked program:
 * cost instrumentation, the static cost estimate, `oldSelf` detection, literal-regex checks.
 */

/** One AST node as these passes see it. */
export interface AstNode {
  readonly op: string;
  readonly args: unknown;
  /** Node metadata: `alternate` (a macro's expansion), `macro`, `evaluate`, `checkedType`. */
  readonly meta: Record<string, unknown>;
  readonly checkedType?: { readonly name: string; readonly kind: string };
  readonly pos: number;
  readonly start: number;
  readonly end: number;
}

/** True when `value` is a node of the same AST as `root`. */
export function isAstNode(value: unknown, root: unknown): value is AstNode {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof root === 'object' &&
    root !== null &&
    Object.getPrototypeOf(value) === Object.getPrototypeOf(root)
  );
}

/**
 * Every node reachable from `root`: operands, macro expansions (`alternate`) and macro arguments,
 * each once.
 */
export function allNodes(root: unknown): AstNode[] {
  const seen = new Set<unknown>();
  const nodes: AstNode[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (isAstNode(value, root)) {
      nodes.push(value);
      stack.push(value.meta.alternate, value.meta.macro, value.args);
    } else if (Array.isArray(value)) {
      stack.push(...value);
    } else if (Object.getPrototypeOf(value) === Object.prototype) {
      stack.push(...Object.values(value));
    }
  }
  return nodes;
}
