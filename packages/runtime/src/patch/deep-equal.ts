import { isJsonObject } from './json-value.ts';

/**
 * Equality of JSON values: same primitives (`0` equals `-0`), arrays with equal elements in the
 * same order, objects with the same keys and equal values in any key order. An object property
 * whose value is `undefined` counts as absent, as in JSON. Only own properties are compared.
 *
 * @example
 * deepEqual({ a: [1, { b: 2 }], c: 'x' }, { c: 'x', a: [1, { b: 2 }] }); // true
 * deepEqual([1, 2], [2, 1]); // false
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  // Iterative (an explicit stack of pairs still to compare), so deep values cannot overflow the stack.
  const pending: [unknown, unknown][] = [[a, b]];
  for (let pair = pending.pop(); pair !== undefined; pair = pending.pop()) {
    if (!shallowEqual(pair[0], pair[1], pending)) return false;
  }
  return true;
}

/** Compares one pair; pushes the pairs of members or elements still to compare. */
function shallowEqual(a: unknown, b: unknown, pending: [unknown, unknown][]): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) pending.push([a[i], b[i]]);
    return true;
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  let defined = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined) continue;
    defined++;
    if (!Object.hasOwn(b, key)) return false;
    pending.push([value, b[key]]);
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined) defined--;
  return defined === 0;
}
