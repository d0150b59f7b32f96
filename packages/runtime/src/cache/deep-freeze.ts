/**
 * Freezes `value` and everything reachable from it through own enumerable properties, in place,
 * and returns it. Plain data only: objects and arrays are frozen; typed arrays and other views,
 * whose elements cannot be frozen, are left as they are. An object that is already frozen is
 * taken as deeply frozen and not walked again, which also makes cycles safe and makes freezing an
 * object the cache handed out before (a relist that reuses it) free.
 *
 * The cache calls it once per write, so readers share one immutable object instead of each taking
 * a copy: a write to a cached object throws in strict mode instead of silently corrupting the cache.
 *
 * @example
 * const pod = deepFreeze({ metadata: { name: 'a', labels: { app: 'web' } } });
 * Object.isFrozen(pod.metadata.labels); // true
 */
export function deepFreeze<T>(value: T): T {
  freeze(value);
  return value;
}

function freeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  if (ArrayBuffer.isView(value)) return;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freeze(value[i]);
    return;
  }
  for (const key in value) {
    if (Object.hasOwn(value, key)) freeze((value as Record<string, unknown>)[key]);
  }
}
