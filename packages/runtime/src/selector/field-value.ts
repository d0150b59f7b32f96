import type { KubeObject } from '../object/index.ts';

/**
 * The value of a dotted field path of an object as a field selector sees it: a string as is, a
 * number or boolean as its string form, anything else (absent, null, an object, an array)
 * `undefined`. Only own properties are followed, so `constructor` or `__proto__` never reach the
 * prototype. The default field reader of {@link objectSelector}.
 *
 * @example
 * fieldValueAtPath(pod, 'spec.nodeName'); // 'node-1'
 * fieldValueAtPath(pod, 'status.phase'); // 'Running'
 */
export function fieldValueAtPath(object: KubeObject, path: string): string | undefined {
  let current: unknown = object;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  if (typeof current === 'string') return current;
  if (typeof current === 'number' || typeof current === 'boolean') return String(current);
  return undefined;
}
