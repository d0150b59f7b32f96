import { BadRequestError } from '@converge/runtime';

/** A mutable JSON object, the shape drafts have inside the write pipeline. */
export type JsonObject = { [key: string]: unknown };

const MAX_DEPTH = 256;

/**
 * Deep-copies a caller's value, accepting only JSON data: null, booleans, finite numbers, strings,
 * arrays and plain objects. `undefined` object members are dropped (as `JSON.stringify` does);
 * anything else (functions, symbols, bigints, NaN, class instances, cycles, `undefined` in arrays,
 * nesting deeper than 256) is a {@link BadRequestError} naming the path.
 */
export function cloneJson(value: unknown): unknown {
  return clone(value, [], new Set());
}

/** `path` is the stack of member names and indexes leading to `value` (joined only for errors). */
function clone(value: unknown, path: (string | number)[], ancestors: Set<object>): unknown {
  const kind = typeof value;
  if (kind === 'string' || kind === 'boolean') return value;
  if (kind === 'number') {
    if (!Number.isFinite(value)) throw notJson(path, 'numbers must be finite');
    return value;
  }
  if (kind !== 'object' || value === undefined) throw notJson(path, `a ${kind} is not JSON`);
  if (value === null) return null;
  if (path.length >= MAX_DEPTH) throw notJson(path, `nested deeper than ${MAX_DEPTH} levels`);
  if (ancestors.has(value as object)) throw notJson(path, 'the value contains a cycle');
  ancestors.add(value as object);
  const out = Array.isArray(value)
    ? cloneArray(value, path, ancestors)
    : cloneObject(value as object, path, ancestors);
  ancestors.delete(value as object);
  return out;
}

function cloneArray(value: readonly unknown[], path: (string | number)[], ancestors: Set<object>): unknown[] {
  const array: unknown[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    path.push(i);
    if (item === undefined) throw notJson(path, 'arrays cannot hold undefined');
    array[i] = clone(item, path, ancestors);
    path.pop();
  }
  return array;
}

function cloneObject(value: object, path: (string | number)[], ancestors: Set<object>): JsonObject {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw notJson(path, 'only plain objects are JSON');
  const object: JsonObject = {};
  for (const key of Object.keys(value)) {
    const member = (value as JsonObject)[key];
    if (member === undefined) continue;
    path.push(key);
    const copy = clone(member, path, ancestors);
    path.pop();
    // defineProperty keeps a `__proto__` key an ordinary member.
    if (key === '__proto__') {
      Object.defineProperty(object, key, {
        value: copy,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      object[key] = copy;
    }
  }
  return object;
}

function notJson(path: readonly (string | number)[], reason: string): BadRequestError {
  const at = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
  return new BadRequestError(
    `the object is not valid JSON at ${at === '' ? 'the top level' : at.replace(/^\./, '')}: ${reason}`,
  );
}

/** Freezes a JSON value and everything inside it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as JsonObject)[key]);
  }
  return value;
}

/** Structural equality of two JSON values (object member order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !jsonEqual((a as JsonObject)[k], (b as JsonObject)[k])) return false;
  }
  return true;
}

/** Equality of two objects ignoring the top-level members in `skip`. */
export function equalExcept(a: JsonObject, b: JsonObject, skip: ReadonlySet<string>): boolean {
  const ka = Object.keys(a).filter((k) => !skip.has(k));
  const kb = Object.keys(b).filter((k) => !skip.has(k));
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  return true;
}

/** The last second {@link rfc3339} formatted (writes in one second share the string). */
let lastSecond = Number.NaN;
let lastStamp = '';

/** A Kubernetes `metav1.Time`: RFC 3339 in UTC with whole seconds (`2024-05-01T10:00:00Z`). */
export function rfc3339(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds !== lastSecond) {
    lastSecond = seconds;
    lastStamp = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return lastStamp;
}

/** A shallow copy of a JSON object with a fresh, mutable `metadata`. */
export function withMutableMeta(object: object): JsonObject & { metadata: JsonObject } {
  const copy = { ...(object as JsonObject) } as JsonObject & { metadata: JsonObject };
  copy.metadata = { ...((object as { metadata?: object }).metadata ?? {}) };
  return copy;
}
