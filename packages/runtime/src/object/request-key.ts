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
