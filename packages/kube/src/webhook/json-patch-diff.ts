import type { JsonPatchOperation } from '@converge/runtime';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One reference token of a JSON pointer (RFC 6901): `~` is written `~0`, `/` is written `~1`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The JSON patch (RFC 6902) that turns `from` into `to`, both JSON values (what `JSON.parse`
 * returns). Object members are added, removed or diffed member by member; arrays of the same length
 * are diffed element by element, arrays of different lengths replaced whole; anything else that
 * differs is replaced. Every operation touches a location no other operation touches, so the patch
 * applies in any order, and never needs `test`, `move` or `copy`. An empty patch means equal values.
 *
 * Iterative, so deeply nested documents cannot overflow the stack.
 *
 * @example
 * createJsonPatch({ spec: { a: 1, 'x/y': 2 } }, { spec: { 'x/y': 3, b: [1] } });
 * // [{ op: 'remove', path: '/spec/a' }, { op: 'replace', path: '/spec/x~1y', value: 3 },
 * //  { op: 'add', path: '/spec/b', value: [1] }]
 */
export function createJsonPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  const pending: [unknown, unknown, string][] = [[from, to, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [a, b, path] = next;
    if (a === b) continue;
    if (isObject(a) && isObject(b)) {
      for (const key of Object.keys(a)) {
        if (!Object.hasOwn(b, key))
          operations.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
      }
      for (const key of Object.keys(b)) {
        const member = `${path}/${escapePointerToken(key)}`;
        if (Object.hasOwn(a, key)) pending.push([a[key], b[key], member]);
        else operations.push({ op: 'add', path: member, value: b[key] });
      }
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      for (let i = 0; i < a.length; i++) pending.push([a[i], b[i], `${path}/${i}`]);
    } else {
      operations.push({ op: 'replace', path, value: b });
    }
  }
  return operations;
}
