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
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  let defined = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined) continue;
    defined++;
    if (!Object.hasOwn(b, key) || !deepEqual(value, b[key])) return false;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined) defined--;
  return defined === 0;
}
