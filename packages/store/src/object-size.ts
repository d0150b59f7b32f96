/** Sizes of stored (frozen, never mutated) objects, computed once each. */
const sizes = new WeakMap<object, number>();

/**
 * The approximate size of a JSON value in bytes, as its JSON encoding would be: string lengths
 * plus quotes, member names, punctuation, 8 bytes per number (escapes and multi-byte characters
 * are not counted separately). One walk over the value, with no string copied and no recursion (a
 * value nested 100 000 deep is fine); the result is remembered per object, so a stored version is
 * walked once when written and looked up afterwards (when a later write supersedes it).
 *
 * Only for values that are never mutated afterwards (the store's frozen versions): the cache is
 * keyed by identity.
 */
export function estimateSize(value: unknown): number {
  if (typeof value !== 'object' || value === null) return scalarSize(value);
  const known = sizes.get(value);
  if (known !== undefined) return known;
  const size = walk(value);
  sizes.set(value, size);
  return size;
}

function scalarSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') return 8;
  if (value === true) return 4;
  // false, null (anything else is not JSON and is never stored).
  return value === false ? 5 : 4;
}

function walk(root: object): number {
  let total = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) {
      total += scalarSize(value);
      continue;
    }
    const known = sizes.get(value);
    if (known !== undefined) {
      total += known;
      continue;
    }
    if (Array.isArray(value)) {
      // Brackets and commas.
      total += 2 + Math.max(0, value.length - 1);
      for (const item of value) stack.push(item);
    } else {
      const keys = Object.keys(value);
      total += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        // "key":
        total += key.length + 3;
        stack.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}
