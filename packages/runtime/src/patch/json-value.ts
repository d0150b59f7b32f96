/**
 * Helpers over JSON values shared by the patch functions. Internal to the patch module.
 *
 * Objects are read through own properties only and written with {@link setOwn}, so keys such as
 * `__proto__`, `constructor` and `prototype` are plain data and never reach a prototype.
 * Properties whose value is `undefined` count as absent, as they do once serialised to JSON.
 */

/** A JSON object: a non-null, non-array object. */
export type JsonObject = Record<string, unknown>;

/** True for a non-null object that is not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The own property `key` of `object`, or undefined; never a property inherited from a prototype. */
export function getOwn(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Sets an own data property, also for `__proto__` (where assignment would change the prototype). */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/**
 * A deep copy sharing no object or array with `value`; `undefined` object properties are dropped.
 * Iterative (an explicit stack), so a value nested a million levels deep is copied, not a stack
 * overflow.
 */
export function cloneJson(value: unknown): unknown {
  if (!Array.isArray(value) && !isJsonObject(value)) return value;
  const root: unknown = Array.isArray(value) ? new Array<unknown>(value.length) : {};
  const stack: { from: unknown; to: unknown }[] = [{ from: value, to: root }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { from, to } = next;
    if (Array.isArray(from)) {
      const copy = to as unknown[];
      for (let i = 0; i < from.length; i++) copy[i] = copyOne(from[i] as unknown, stack);
    } else {
      const source = from as JsonObject;
      for (const key of Object.keys(source)) {
        const member = source[key];
        if (member !== undefined) setOwn(to as JsonObject, key, copyOne(member, stack));
      }
    }
  }
  return root;
}

function copyOne(value: unknown, stack: { from: unknown; to: unknown }[]): unknown {
  if (Array.isArray(value)) {
    const to = new Array<unknown>(value.length);
    stack.push({ from: value, to });
    return to;
  }
  if (isJsonObject(value)) {
    const to: JsonObject = {};
    stack.push({ from: value, to });
    return to;
  }
  return value;
}

/**
 * The length of `JSON.stringify(value)` in UTF-16 code units (close to its UTF-8 size for the
 * mostly-ASCII data Kubernetes objects hold), counted without building the string, or `Infinity`
 * as soon as it passes `budget` — so measuring a huge value costs at most `budget`. Iterative.
 */
export function jsonSizeWithin(value: unknown, budget: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (Array.isArray(item)) {
      size += 2 + Math.max(0, item.length - 1);
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i] === undefined ? null : item[i]);
    } else if (isJsonObject(item)) {
      const keys = Object.keys(item).filter((key) => item[key] !== undefined);
      size += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        size += key.length + 3;
        stack.push(item[key]);
      }
    } else if (typeof item === 'string') {
      size += item.length + 2;
    } else {
      size += item === null ? 4 : String(item).length;
    }
    if (size > budget) return Number.POSITIVE_INFINITY;
  }
  return size;
}
