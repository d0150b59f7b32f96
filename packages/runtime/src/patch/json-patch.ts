import { InvalidError, type JsonPatchOperation } from '../backend/index.ts';
import { deepEqual } from './deep-equal.ts';
import { type CheckedOperation, checkJsonPatch } from './json-patch-operations.ts';
import { arrayIndex, isProperPrefix } from './json-pointer.ts';
import { cloneJson, isJsonObject, type JsonObject, jsonSizeWithin, setOwn } from './json-value.ts';

/** Bounds on the work one JSON patch may do (both unbounded when absent). */
export interface JsonPatchOptions {
  /**
   * The most operations the patch may hold; more is an {@link InvalidError} before anything is
   * applied. kube-apiserver allows 10 000 (and answers 413 past that).
   */
  readonly maxOperations?: number;
  /**
   * The most bytes (JSON-serialised size) `copy` operations may add in total, checked before each
   * copy is made — so `copy` from `""` repeated (each doubling the document) fails after a few
   * operations instead of allocating gigabytes. kube-apiserver's limit is 3 MiB
   * (`JSONPatchMaxCopyBytes`). With it, a result is at most the target plus the patch plus this.
   */
  readonly maxCopyBytes?: number;
}

type Fail = (reason: string) => never;

/**
 * Applies a JSON patch (RFC 6902, `application/json-patch+json`) and returns the result: `add`,
 * `remove`, `replace`, `move`, `copy` and `test`, with JSON pointers (RFC 6901: `~1` is `/`, `~0`
 * is `~`), `-` to append to an array (for `add`, `move` and `copy` targets), and strict array
 * indexes (decimal without leading zeros; at most the length for an insert, below it otherwise).
 *
 * - A malformed patch — not an array, an unknown op, a missing `path`, `from` or `value`, a pointer
 *   that is neither `''` nor starts with `/` — throws a {@link BadRequestError} (400) before
 *   anything is applied.
 * - An operation that cannot be applied (a missing location, an index out of bounds, a failed
 *   `test`) throws an {@link InvalidError} (422) whose message names the operation's index, op and
 *   path, with the path in `details.causes`.
 *
 * All or nothing and pure: the operations run on a private copy, so the input is never mutated
 * (frozen inputs are fine), a failure leaves nothing half-applied, and the result shares no object
 * with the input or the operations. Keys like `__proto__` are ordinary members.
 *
 * @example
 * applyJsonPatch({ spec: { ports: [80] } }, [
 *   { op: 'test', path: '/spec/ports/0', value: 80 },
 *   { op: 'add', path: '/spec/ports/-', value: 443 },
 * ]);
 * // { spec: { ports: [80, 443] } }
 */
export function applyJsonPatch(
  target: unknown,
  operations: readonly JsonPatchOperation[],
  options: JsonPatchOptions = {},
): unknown {
  const { maxOperations = Number.POSITIVE_INFINITY, maxCopyBytes = Number.POSITIVE_INFINITY } = options;
  if (Array.isArray(operations) && operations.length > maxOperations) {
    throw new InvalidError(
      `The allowed maximum operations in a JSON patch is ${maxOperations}, got ${operations.length}`,
    );
  }
  const checked = checkJsonPatch(operations);
  let document = cloneJson(target);
  const copied = { bytes: 0, limit: maxCopyBytes };
  checked.forEach((operation, index) => {
    document = applyOperation(document, operation, copied, (reason) => {
      throw failure(operation, index, reason);
    });
  });
  return document;
}

/** Measures a value about to be copied against what is left of the copy budget (fails past it). */
function chargeCopy(value: unknown, copied: { bytes: number; limit: number }, fail: Fail): void {
  if (copied.limit === Number.POSITIVE_INFINITY) return;
  const size = jsonSizeWithin(value, copied.limit - copied.bytes);
  if (size === Number.POSITIVE_INFINITY) {
    fail(
      `Unable to complete the copy, the accumulated size increase of copy exceeds the limit ${copied.limit}`,
    );
  }
  copied.bytes += size;
}

function applyOperation(
  document: unknown,
  operation: CheckedOperation,
  copied: { bytes: number; limit: number },
  fail: Fail,
): unknown {
  switch (operation.op) {
    case 'add':
      return add(document, operation.at, cloneJson(operation.value), fail);
    case 'remove':
      return remove(document, operation.at, fail).document;
    case 'replace':
      get(document, operation.at, fail);
      return operation.at.length === 0
        ? cloneJson(operation.value)
        : put(document, operation.at, cloneJson(operation.value), fail);
    case 'test':
      if (!deepEqual(get(document, operation.at, fail), operation.value)) {
        fail(`the value at ${JSON.stringify(operation.path)} is not equal to the expected value`);
      }
      return document;
    case 'copy': {
      const value = get(document, operation.source, fail);
      chargeCopy(value, copied, fail);
      return add(document, operation.at, cloneJson(value), fail);
    }
    case 'move': {
      if (isProperPrefix(operation.source, operation.at)) {
        fail(`cannot move ${JSON.stringify(operation.from)} into itself`);
      }
      const removed = remove(document, operation.source, fail);
      return add(removed.document, operation.at, removed.value, fail);
    }
  }
}

function failure(operation: CheckedOperation, index: number, reason: string): InvalidError {
  const from =
    operation.op === 'move' || operation.op === 'copy' ? ` from ${JSON.stringify(operation.from)}` : '';
  const message = `json patch operation ${index} (${operation.op} ${JSON.stringify(operation.path)}${from}) failed: ${reason}`;
  return new InvalidError(message, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field: operation.path }] },
  });
}

/** The value at `at`; fails when any location on the way does not exist. */
function get(document: unknown, at: readonly string[], fail: Fail): unknown {
  let current = document;
  for (let depth = 0; depth < at.length; depth++) {
    current = child(current, at, depth, fail);
  }
  return current;
}

/** The member or element `at[depth]` of `container`, which must exist. */
function child(container: unknown, at: readonly string[], depth: number, fail: Fail): unknown {
  const token = at[depth] as string;
  if (Array.isArray(container)) return container[existingIndex(container, token, at, depth, fail)];
  if (isJsonObject(container) && Object.hasOwn(container, token)) return container[token];
  if (isJsonObject(container)) return fail(`${describePointer(at, depth + 1)} does not exist`);
  return fail(`${describePointer(at, depth)} is not an object or array`);
}

/** The container that holds `at`'s last token. */
function parentOf(document: unknown, at: readonly string[], fail: Fail): unknown {
  let current = document;
  for (let depth = 0; depth < at.length - 1; depth++) current = child(current, at, depth, fail);
  return current;
}

function add(document: unknown, at: readonly string[], value: unknown, fail: Fail): unknown {
  if (at.length === 0) return value;
  const parent = parentOf(document, at, fail);
  const token = at[at.length - 1] as string;
  if (Array.isArray(parent)) {
    const index = token === '-' ? parent.length : arrayIndex(token);
    if (index === undefined)
      fail(`${JSON.stringify(token)} is not an array index (use digits without leading zeros, or "-")`);
    if (index > parent.length)
      fail(`index ${index} is out of bounds for an insert into an array of length ${parent.length}`);
    parent.splice(index, 0, value);
  } else if (isJsonObject(parent)) {
    setOwn(parent, token, value);
  } else {
    fail(`${describePointer(at, at.length - 1)} is not an object or array`);
  }
  return document;
}

function put(document: unknown, at: readonly string[], value: unknown, fail: Fail): unknown {
  const parent = parentOf(document, at, fail);
  const token = at[at.length - 1] as string;
  if (Array.isArray(parent)) parent[existingIndex(parent, token, at, at.length - 1, fail)] = value;
  else setOwn(parent as JsonObject, token, value);
  return document;
}

function remove(document: unknown, at: readonly string[], fail: Fail): { document: unknown; value: unknown } {
  if (at.length === 0) return fail('the whole document cannot be removed');
  const value = get(document, at, fail);
  const parent = parentOf(document, at, fail);
  const token = at[at.length - 1] as string;
  if (Array.isArray(parent)) parent.splice(existingIndex(parent, token, at, at.length - 1, fail), 1);
  else delete (parent as JsonObject)[token];
  return { document, value };
}

/** The index `token` denotes in `array`, which must hold an element there. */
function existingIndex(
  array: readonly unknown[],
  token: string,
  at: readonly string[],
  depth: number,
  fail: Fail,
): number {
  const index = arrayIndex(token);
  if (index === undefined) {
    return fail(
      `${JSON.stringify(token)} at ${describePointer(at, depth)} is not an array index (digits without leading zeros)`,
    );
  }
  if (index >= array.length) {
    return fail(
      `index ${index} at ${describePointer(at, depth)} is out of bounds for an array of length ${array.length}`,
    );
  }
  return index;
}

/** The pointer of the first `length` tokens of `at`, quoted, for messages. */
function describePointer(at: readonly string[], length: number): string {
  const tokens = at.slice(0, length).map((token) => token.replaceAll('~', '~0').replaceAll('/', '~1'));
  return length === 0 ? 'the document root' : JSON.stringify(`/${tokens.join('/')}`);
}
