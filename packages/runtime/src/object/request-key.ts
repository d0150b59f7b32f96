/**
 * The identity of a request, for deduplication: a string is its own key; any other value is its
 * JSON with the keys of every object sorted, so `{ name, namespace }` and `{ namespace, name }` are
 * the same request. Values JSON cannot represent (`undefined`, a symbol) fall back to `String()`.
 *
 * Pass it as a work queue's `keyOf` when requests are objects built by hand (map functions), whose
 * property order is not guaranteed.
 *
 * @example
 * requestKey({ name: 'web', namespace: 'default' }) === requestKey({ namespace: 'default', name: 'web' }); // true
 * const queue = new WorkQueue<ObjectKey>({ keyOf: requestKey });
 */
export function requestKey(request: unknown): string {
  if (typeof request === 'string') return request;
  const fast = objectKeyFastPath(request);
  if (fast !== undefined) return fast;
  const json = JSON.stringify(request, sortedKeys);
  return json === undefined ? String(request) : json;
}

/** JSON.stringify replacer: every plain or class object is re-created with its keys sorted. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(source).sort()) sorted[key] = source[key];
  return sorted;
}

/** Characters JSON.stringify would escape (quote, backslash, controls, lone surrogates). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The common request, a plain `{ namespace, name }`, built directly: the same string the general
 * path produces, about ten times faster (it runs on every add and done of a queue).
 */
function objectKeyFastPath(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null || Object.getPrototypeOf(request) !== Object.prototype)
    return undefined;
  const { namespace, name } = request as { namespace?: unknown; name?: unknown };
  if (typeof namespace !== 'string' || typeof name !== 'string') return undefined;
  let count = 0;
  for (const _ in request) count++;
  if (count !== 2 || NEEDS_ESCAPE.test(namespace) || NEEDS_ESCAPE.test(name)) return undefined;
  return `{"name":"${name}","namespace":"${namespace}"}`;
}

/**
 * `keyOf` that remembers its last request and key: a run asks for the key of one request object
 * several times in a row (its start, then forget, cancelRetry and done), and each answer was a new
 * string (with an `Object.keys` array for the default). Requests are values a queue never changes;
 * one that a caller mutates between calls would keep its first key here — as the queue, which
 * keeps entries by that key, does anyway. @internal
 */
export function rememberLastKey<K>(keyOf: (request: K) => string): (request: K) => string {
  let last: K | undefined;
  let lastKey: string | undefined;
  return (request) => {
    if (lastKey !== undefined && request === last) return lastKey;
    const key = keyOf(request);
    last = request;
    lastKey = key;
    return key;
  };
}
