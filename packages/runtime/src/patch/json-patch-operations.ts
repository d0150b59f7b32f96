import { BadRequestError } from '../backend/index.ts';
import { describe } from '../errors.ts';
import { parseJsonPointer } from './json-pointer.ts';
import { isJsonObject } from './json-value.ts';

/** An RFC 6902 operation, checked and with its pointers split into reference tokens. */
export type CheckedOperation =
  | {
      readonly op: 'add' | 'replace' | 'test';
      readonly path: string;
      readonly at: readonly string[];
      readonly value: unknown;
    }
  | { readonly op: 'remove'; readonly path: string; readonly at: readonly string[] }
  | {
      readonly op: 'move' | 'copy';
      readonly path: string;
      readonly at: readonly string[];
      readonly from: string;
      readonly source: readonly string[];
    };

const OPS: ReadonlySet<string> = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Checks the shape of a JSON patch document before any operation runs: an array of objects, each
 * with a known `op`, a `path` (and `from` for move/copy) that is a well-formed JSON pointer, and a
 * `value` for add/replace/test. Members it does not know are ignored (RFC 6902 §4). Throws a
 * {@link BadRequestError} naming the operation otherwise.
 */
export function checkJsonPatch(operations: unknown): CheckedOperation[] {
  if (!Array.isArray(operations)) {
    throw new BadRequestError(
      `invalid json patch: expected an array of operations, got ${describe(operations)}`,
    );
  }
  return operations.map((operation: unknown, index) => checkOperation(operation, index));
}

function checkOperation(operation: unknown, index: number): CheckedOperation {
  const bad = (problem: string): never => {
    throw new BadRequestError(`invalid json patch: operation ${index} ${problem}`);
  };
  if (!isJsonObject(operation)) return bad(`must be an object, got ${describe(operation)}`);
  const op = Object.hasOwn(operation, 'op') ? operation.op : undefined;
  if (typeof op !== 'string' || !OPS.has(op)) {
    return bad(
      op === undefined
        ? 'has no "op"'
        : `has an unknown op ${describe(op)} (expected add, remove, replace, move, copy or test)`,
    );
  }
  const pointer = (member: 'path' | 'from'): { text: string; tokens: string[] } => {
    const text = Object.hasOwn(operation, member) ? operation[member] : undefined;
    if (typeof text !== 'string') {
      return bad(
        `(${op}) ${text === undefined ? `has no "${member}"` : `has a non-string "${member}" ${describe(text)}`}`,
      );
    }
    const tokens = parseJsonPointer(text);
    if (!Array.isArray(tokens))
      return bad(`(${op}) has a malformed "${member}" ${JSON.stringify(text)}: ${tokens.problem}`);
    return { text, tokens };
  };
  const path = pointer('path');
  switch (op) {
    case 'add':
    case 'replace':
    case 'test': {
      const value = Object.hasOwn(operation, 'value') ? operation.value : undefined;
      if (value === undefined) return bad(`(${op} ${JSON.stringify(path.text)}) has no "value"`);
      return { op, path: path.text, at: path.tokens, value };
    }
    case 'remove':
      return { op, path: path.text, at: path.tokens };
    default: {
      const from = pointer('from');
      return {
        op: op as 'move' | 'copy',
        path: path.text,
        at: path.tokens,
        from: from.text,
        source: from.tokens,
      };
    }
  }
}
